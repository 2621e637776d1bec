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
from typing import NamedTuple

import tree_sitter

from .fragment import Line, Token
from .languages.base import LanguageSpec, SourceLineRules


class PrintedStatement(NamedTuple):
    """What one statement of a block prints, whatever stands before it: the tokens before its
    first line break (they join the line the statement starts on), its complete lines, the
    tokens still open at its end, and the printer's state after it (rows relative to the
    statement's first row)."""

    head: tuple[Token, ...]
    broken: bool
    """A line break follows the head: `lines` and `open` come after it."""
    lines: tuple[Line, ...]
    open: tuple[Token, ...]
    previous_type: str | None
    end_row: int
    continued: bool
    depth: int


StatementMemo = dict[tuple[int, bytes], PrintedStatement]
"""Printed statements by (node kind, source bytes): in an error-free tree a statement's text
decides its tokens and their relative rows, so a statement seen before is not walked again."""
MEMO_LIMIT = 200_000
"""Statements a memo keeps before it starts afresh (bounds the memory of a long scan)."""


class _SourcePrinter:
    """Collects the lines of one fragment; one instance per fragment."""

    def __init__(
        self,
        spec: LanguageSpec,
        rules: SourceLineRules,
        root: tree_sitter.Node | None,
        source: bytes | None = None,
        memo: StatementMemo | None = None,
    ) -> None:
        self.spec = spec
        self.rules = rules
        self.lines: list[Line] = []
        self.line: list[Token] = []
        self.depth = 0
        self.previous_type: str | None = None
        self.previous_row = -1
        self.continued = False
        self.body_byte = _body_start_byte(root) if root is not None else 0
        self.body_start: int | None = None
        self.skipped: set[tuple[int, int]] = set()
        self.token_kinds = spec.token_kinds
        self.source = source
        """The bytes the tree was parsed from (token texts are sliced from them)."""
        self.memo = memo if source is not None else None

    def walk(self, node: tree_sitter.Node, node_type: str | None = None) -> None:
        spec = self.spec
        node_type = node_type or node.type
        if node_type in self.rules.docstring_holders:
            self.skip_docstring(self.docstring_of(node))
        skipped, continuations = self.skipped, self.rules.continuation_types
        comments, atomic = spec.comment_types, spec.atomic_types
        by_memo = self.memo is not None and node_type in spec.block_types
        for child in node.children:
            kind = child.type
            if kind in continuations:
                self.continued = True
            elif kind in comments:
                continue
            elif kind in atomic or child.child_count == 0:
                self.token(child, kind)
            elif not skipped or (child.start_byte, child.end_byte) not in skipped:
                if by_memo and kind != "ERROR":
                    self.statement(child)
                else:
                    self.walk(child, kind)

    def statement(self, node: tree_sitter.Node) -> None:
        """A block's statement, printed from the memo when the same text was printed before
        (only at bracket depth 0 and inside the body, where its output depends on nothing
        before it but the line break before its first token)."""
        start = node.start_byte
        if self.depth or start < self.body_byte:
            self.walk(node)
            return
        key = (node.kind_id, self.source[start : node.end_byte])  # type: ignore[index]
        printed = self.memo.get(key)  # type: ignore[union-attr]
        if printed is None:
            printed = _print_statement(self.spec, self.rules, node, self.source, self.memo)
            if len(self.memo) >= MEMO_LIMIT:  # type: ignore[arg-type]
                self.memo.clear()  # type: ignore[union-attr]
            self.memo[key] = printed  # type: ignore[index]
        if not printed.head:  # prints nothing on its first row: walked as it is
            self.walk(node)
            return
        row = node.start_point.row
        if row > self.previous_row and self.previous_type is not None and not self.continued:
            self.flush()
        if self.body_start is None:
            self.body_start = len(self.lines)
        self.line += printed.head
        if printed.broken:
            self.flush()
            self.lines += printed.lines
            self.line = list(printed.open)
        self.previous_type = printed.previous_type
        self.previous_row = row + printed.end_row
        self.continued = printed.continued
        self.depth = printed.depth

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

    def token(self, node: tree_sitter.Node, kind: str | None = None) -> None:
        start = node.start_byte
        source = self.source
        text = source[start : node.end_byte] if source is not None else node.text
        if not text:  # MISSING nodes inserted by error recovery have no text
            return
        kind = kind or node.type
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
        if self.body_start is None and start >= self.body_byte:
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


def _print_statement(
    spec: LanguageSpec,
    rules: SourceLineRules,
    node: tree_sitter.Node,
    source: bytes,
    memo: StatementMemo,
) -> PrintedStatement:
    """One statement printed on its own, from bracket depth 0 (see `PrintedStatement`); the
    statements of its blocks from the memo."""
    printer = _SourcePrinter(spec, rules, None, source, memo)
    row = node.start_point.row
    printer.previous_row = row  # the first token joins the line it starts on
    printer.walk(node)
    lines = printer.lines
    broken = bool(lines)
    if broken:
        head, lines, open_ = lines[0], lines[1:], tuple(printer.line)
    else:
        head, open_ = tuple(printer.line), ()
    return PrintedStatement(
        head=head,
        broken=broken,
        lines=tuple(lines),
        open=open_,
        previous_type=printer.previous_type,
        end_row=printer.previous_row - row,
        continued=printer.continued,
        depth=printer.depth,
    )


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
    source: bytes | None = None,
    memo: StatementMemo | None = None,
) -> tuple[tuple[Line, ...], int]:
    """Lines of a fragment node in the `source` layout and the index of its first body line;
    `tail`: statements after the node that NiCad's grammar reads as the rest of its body.
    With the parsed `source` bytes and a `memo`, statements seen before are not walked again
    (only in an error-free fragment without a tail; the lines are the same either way)."""
    if tail or node.has_error:
        memo = None
    printer = _SourcePrinter(spec, rules, node, source, memo)
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
