"""The `source` layout: a fragment printed as NiCad's own grammar prints it.

NiCad's Python grammar is newline-sensitive: it keeps a line break where the source has one,
so a dict written over 12 lines is 12 lines and `if x: return y` is one line. This printer
streams a fragment's tokens and starts a new line where the source starts one, except where
the grammar drops the break (`SourceLineRules`): line continuations, and breaks inside brackets
that the grammar parses as an expression's optional trailing end-of-line. Comments, blank lines
and the leading triple-double-quoted docstring of a function (nested ones too) are dropped.
A string spanning several rows (a `'''` docstring is one) is one line per row, as NiCad
prints it; those rows count for size, and renaming folds them back into one line.
Tokens are separated by single spaces when rendered, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter

from .fragment import Line, Token
from .languages.base import LanguageSpec, SourceLineRules


class _SourcePrinter:
    """Collects the lines of one fragment; one instance per fragment."""

    def __init__(self, spec: LanguageSpec, rules: SourceLineRules, root: tree_sitter.Node) -> None:
        self.spec = spec
        self.rules = rules
        self.lines: list[Line] = []
        self.line: list[Token] = []
        self.depth = 0
        self.previous_type: str | None = None
        self.previous_row = -1
        self.continued = False
        self.body_byte = _body_start_byte(root)
        self.body_start: int | None = None
        self.skipped: set[tuple[int, int]] = set()
        self.token_kinds = spec.token_kinds

    def walk(self, node: tree_sitter.Node) -> None:
        spec = self.spec
        if node.type in self.rules.docstring_holders:
            self.skip_docstring(self.docstring_of(node))
        skipped, continuations = self.skipped, self.rules.continuation_types
        for child in node.children:
            kind = child.type
            if kind in continuations:
                self.continued = True
            elif kind in spec.comment_types:
                continue
            elif child.child_count == 0 or kind in spec.atomic_types:
                self.token(child)
            elif not skipped or (child.start_byte, child.end_byte) not in skipped:
                self.walk(child)

    def skip_docstring(self, statement: tree_sitter.Node | None) -> None:
        if statement is not None:
            self.skipped.add((statement.start_byte, statement.end_byte))

    def docstring_of(self, holder: tree_sitter.Node) -> tree_sitter.Node | None:
        """The holder's leading docstring when its body is a block below the header."""
        body = holder.child_by_field_name("body")
        if body is None or body.type not in self.spec.block_types:
            return None
        statements = [c for c in body.children if c.type not in self.spec.comment_types]
        if not statements or not self.rules.is_docstring(statements[0]):
            return None
        colon = body.prev_sibling
        while colon is not None and colon.type != ":":
            colon = colon.prev_sibling
        header_row = colon.end_point.row if colon is not None else holder.start_point.row
        return statements[0] if statements[0].start_point.row > header_row else None

    def token(self, node: tree_sitter.Node) -> None:
        text = node.text
        if not text:  # MISSING nodes inserted by error recovery have no text
            return
        kind = node.type
        rules = self.rules
        row = node.start_point.row
        if (
            row > self.previous_row
            and self.previous_type is not None
            and not (self.continued or (self.depth > 0 and self.joined(kind)))
        ):
            self.flush()
        self.continued = False
        token_kind = self.token_kinds.get(kind, "other")
        word = text.decode("utf-8", "replace")
        if token_kind == "id" and word in rules.keywords:
            token_kind = "other"
        if self.body_start is None and node.start_byte >= self.body_byte:
            self.body_start = len(self.lines)
        if token_kind == "str" and "\n" in word:
            self.string_rows(word)
        else:
            self.line.append((token_kind, word))
        if kind in rules.openers:
            self.depth += 1
        elif kind in rules.closers and self.depth > 0:
            self.depth -= 1
        self.previous_type = kind
        # only a multi-line string ends on a later row than it starts
        self.previous_row = row + text.count(b"\n") if b"\n" in text else row

    def string_rows(self, word: str) -> None:
        """A string spanning several source rows: NiCad prints its raw text, so each row is a
        line (blank rows, like blank lines, are not). Its first row stays on the current line;
        the tokens after it on its last row join the last row's line. The rows are
        `str_row` tokens, which renaming folds back into one `"x"` (normalize.py)."""
        first, *rows = word.split("\n")
        self.line.append(("str", first.strip()))
        for row in rows:
            if row.strip():
                self.flush()
                self.line.append(("str_row", row.strip()))

    def joined(self, kind: str) -> bool:
        """The grammar drops a break inside brackets before `kind` (after the previous token)."""
        rules = self.rules
        previous = self.previous_type
        if previous in rules.joined_after:
            return True
        return kind in rules.joined_before and previous not in rules.openers and previous != ","

    def flush(self) -> None:
        if self.line:
            self.lines.append(tuple(self.line))
            self.line = []


def _body_start_byte(node: tree_sitter.Node) -> int:
    """Where the fragment's body starts (after the header's `:`); the end if it has none."""
    body = node.child_by_field_name("body")
    return body.start_byte if body is not None else node.end_byte


def print_source_lines(
    spec: LanguageSpec,
    rules: SourceLineRules,
    node: tree_sitter.Node,
    whole_file: bool = False,
    tail: Sequence[tree_sitter.Node] = (),
) -> tuple[tuple[Line, ...], int]:
    """Lines of a fragment node in the `source` layout and the index of its first body line;
    `tail`: statements after the node that NiCad's grammar reads as the rest of its body."""
    printer = _SourcePrinter(spec, rules, node)
    if whole_file:
        printer.body_byte = node.start_byte
        statements = [c for c in node.children if c.type not in spec.comment_types]
        if statements and rules.is_docstring(statements[0]):
            printer.skip_docstring(statements[0])
    printer.walk(node)
    for statement in tail:
        if statement.child_count == 0 or statement.type in spec.atomic_types:
            printer.token(statement)
        else:
            printer.walk(statement)
    printer.flush()
    lines = tuple(printer.lines)
    return lines, len(lines) if printer.body_start is None else printer.body_start
