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

from collections.abc import Iterator, Sequence

import tree_sitter

from .fragment import Line, Token
from .languages.base import LanguageSpec, SourceLineRules, TokenKind

_CONTINUATION, _COMMENT, _ATOMIC, _HOLDER = 1, 2, 4, 8
_OPENER, _CLOSER, _COMMA, _JOINED_BEFORE, _JOINED_AFTER = 16, 32, 64, 128, 256
_SKIPPED = _CONTINUATION | _COMMENT
_OPENS_OR_COMMA = _OPENER | _COMMA
_NEWLINE = b"\n"


class SourceKinds:
    """The printer's rules by node kind id: a role (bits: skipped, atomic, bracket, joins a
    break, ...) and a token kind for renaming, filled in the first time a kind is met (a
    node's kind id always names the same type, so the answers are those of its type name)."""

    def __init__(self, spec: LanguageSpec, rules: SourceLineRules) -> None:
        self.spec, self.rules = spec, rules
        self.roles: dict[int, int] = {}
        self.token_kinds: dict[int, TokenKind] = {}

    def role_of(self, node: tree_sitter.Node) -> int:
        spec, rules, kind = self.spec, self.rules, node.type
        role = 0
        for names, bit in (
            (rules.continuation_types, _CONTINUATION), (spec.comment_types, _COMMENT),
            (spec.atomic_types, _ATOMIC), (rules.docstring_holders, _HOLDER),
            (rules.openers, _OPENER), (rules.closers, _CLOSER), ({","}, _COMMA),
            (rules.joined_before, _JOINED_BEFORE), (rules.joined_after, _JOINED_AFTER),
        ):  # fmt: skip
            if kind in names:
                role |= bit
        if role & _CONTINUATION:
            role = _CONTINUATION | _COMMENT  # a continuation is skipped, whatever else it is
        self.roles[node.kind_id] = role
        self.token_kinds[node.kind_id] = spec.token_kinds.get(kind, "other")
        return role


def _joined(previous: int, role: int, depth: int) -> bool:
    """Inside brackets, the grammar joins a token to the previous one across a line break."""
    return depth > 0 and bool(
        previous & _JOINED_AFTER or (role & _JOINED_BEFORE and not previous & _OPENS_OR_COMMA)
    )


def _string_rows(word: str, line: list[Token], lines: list[Line]) -> list[Token]:
    """A string spanning several source rows: NiCad prints its raw text, so each row is a line
    (blank rows, like blank lines, are not). Its first row stays on the current line; the
    tokens after it on its last row join the last row's line (returned). The rows are
    `str_row` tokens, which renaming folds back into one `"x"` (normalize.py)."""
    first, *rest = word.split("\n")
    line.append(("str", first.strip()))
    for string_row in rest:
        if string_row.strip():
            if line:
                lines.append(tuple(line))
            line = [("str_row", string_row.strip())]
    return line


class _SourcePrinter:
    """Collects the lines of one fragment; one instance per fragment."""

    def __init__(
        self,
        spec: LanguageSpec,
        rules: SourceLineRules,
        root: tree_sitter.Node,
        source: bytes | None = None,
        ascii_text: str | None = None,
        kinds: SourceKinds | None = None,
    ) -> None:
        self.spec = spec
        self.rules = rules
        self.kinds = kinds if kinds is not None else SourceKinds(spec, rules)
        self.lines: list[Line] = []
        self.line: list[Token] = []
        self.depth = 0
        self.previous = -1
        """The previous token's role (-1: no token yet)."""
        self.previous_row = -1
        self.previous_end = 0
        """Where the previous token ends: with `source`, a line break before a token is a
        newline between the two (cheaper than asking each node for its row)."""
        self.continued = False
        self.body_byte = _body_start_byte(root)
        self.body_start: int | None = None
        self.skipped: set[tuple[int, int]] = set()
        self.skipped_starts: set[int] = set()
        self.source = source
        """The bytes the tree was parsed from (token texts are sliced from them; without
        them, each node's own text)."""
        self.ascii_text = ascii_text if source is not None else None
        """The same source as text when it is ASCII (byte offsets are character offsets):
        token texts are sliced from it without decoding."""

    def walk(self, node: tree_sitter.Node) -> None:
        """Prints the tokens of `node`'s subtree."""
        if node.type in self.rules.docstring_holders:
            self.skip_docstring(self.docstring_of(node))
        self.run(iter(node.children))

    def run(self, nodes: Iterator[tree_sitter.Node]) -> None:
        """Prints `nodes` and their subtrees, in order: one loop over the tree with the
        printer's state in local variables (a method call per node costs more than the rule
        it applies). A leaf (or atomic node) is a token; a line break is kept before a token
        on a later row than the previous one, unless a continuation or, inside brackets, the
        grammar joins them (`joined`). Node types are looked up by their grammar id
        (`SourceKinds`): one table entry holds every rule that names the type.

        With the source bytes, a break is a newline between the previous token's end and this
        token's start. The first newline at or after the previous token's end is kept
        (`newline`), so the bytes are searched once per source line instead of once per
        token: a token on the same row ends before it, a token on a later row starts after
        it (and the search moves past the token)."""
        if self.source is None:
            self.run_rows(nodes)
            return
        kinds = self.kinds
        roles, token_kinds, role_of = kinds.roles, kinds.token_kinds, kinds.role_of
        keywords = self.rules.keywords
        skipped, source, body_byte = self.skipped, self.source, self.body_byte
        skipped_starts, ascii_text = self.skipped_starts, self.ascii_text
        lines, line, depth = self.lines, self.line, self.depth
        previous = self.previous
        previous_end = self.previous_end
        continued, body_start = self.continued, self.body_start
        find = source.find
        nowhere = len(source) + 1
        newline = find(_NEWLINE, previous_end)
        if newline < 0:
            newline = nowhere
        stack = [nodes]
        while stack:
            for child in stack[-1]:
                kind_id = child.kind_id
                role = roles.get(kind_id)
                if role is None:
                    role = role_of(child)
                if role & _SKIPPED:
                    if role & _CONTINUATION:
                        continued = True
                    continue
                if not role & _ATOMIC and child.child_count:
                    if skipped_starts:
                        start = child.start_byte
                        if start in skipped_starts and (start, child.end_byte) in skipped:
                            continue
                    if role & _HOLDER:
                        self.skip_docstring(self.docstring_of(child))
                    stack.append(iter(child.children))
                    break  # descend; this level resumes when the child's is done
                start, end = child.start_byte, child.end_byte
                if start == end:  # MISSING nodes inserted by error recovery have no text
                    continue
                if newline < end:  # a newline before the token, or inside it (a string)
                    broken = newline < start
                    newline = find(_NEWLINE, end)
                    if newline < 0:
                        newline = nowhere
                else:
                    broken = False
                previous_end = end
                word = (
                    ascii_text[start:end] if ascii_text is not None
                    else source[start:end].decode("utf-8", "replace"))  # fmt: skip
                if (
                    broken
                    and line
                    and previous >= 0
                    and not continued
                    and not _joined(previous, role, depth)
                ):
                    lines.append(tuple(line))
                    line = []
                continued = False
                token_kind = token_kinds[kind_id]
                if token_kind == "id" and word in keywords:
                    token_kind = "other"
                if body_start is None and start >= body_byte:
                    body_start = len(lines)
                if token_kind == "str" and "\n" in word:
                    line = _string_rows(word, line, lines)
                else:
                    line.append((token_kind, word))
                if role & _OPENER:
                    depth += 1
                elif role & _CLOSER and depth > 0:
                    depth -= 1
                previous = role
            else:
                stack.pop()
        self.line, self.depth = line, depth
        self.previous, self.previous_end = previous, previous_end
        self.continued, self.body_start = continued, body_start

    def run_rows(self, nodes: Iterator[tree_sitter.Node]) -> None:
        """`run` without the source bytes: token texts from the nodes, breaks from their rows
        (the same lines, slower)."""
        kinds = self.kinds
        roles, token_kinds, role_of = kinds.roles, kinds.token_kinds, kinds.role_of
        keywords = self.rules.keywords
        skipped, skipped_starts, body_byte = self.skipped, self.skipped_starts, self.body_byte
        lines, line, depth = self.lines, self.line, self.depth
        previous, previous_row = self.previous, self.previous_row
        continued, body_start = self.continued, self.body_start
        stack = [nodes]
        while stack:
            for child in stack[-1]:
                kind_id = child.kind_id
                role = roles.get(kind_id)
                if role is None:
                    role = role_of(child)
                if role & _SKIPPED:
                    if role & _CONTINUATION:
                        continued = True
                    continue
                if not role & _ATOMIC and child.child_count:
                    start = child.start_byte
                    if start in skipped_starts and (start, child.end_byte) in skipped:
                        continue
                    if role & _HOLDER:
                        self.skip_docstring(self.docstring_of(child))
                    stack.append(iter(child.children))
                    break  # descend; this level resumes when the child's is done
                text = child.text
                if not text:  # MISSING nodes inserted by error recovery have no text
                    continue
                start = child.start_byte
                row = child.start_point.row
                broken = row > previous_row
                # only a multi-line string ends on a later row than it starts
                previous_row = row + text.count(b"\n") if b"\n" in text else row
                word = text.decode("utf-8", "replace")
                if (
                    broken
                    and line
                    and previous >= 0
                    and not continued
                    and not _joined(previous, role, depth)
                ):
                    lines.append(tuple(line))
                    line = []
                continued = False
                token_kind = token_kinds[kind_id]
                if token_kind == "id" and word in keywords:
                    token_kind = "other"
                if body_start is None and start >= body_byte:
                    body_start = len(lines)
                if token_kind == "str" and "\n" in word:
                    line = _string_rows(word, line, lines)
                else:
                    line.append((token_kind, word))
                if role & _OPENER:
                    depth += 1
                elif role & _CLOSER and depth > 0:
                    depth -= 1
                previous = role
            else:
                stack.pop()
        self.line, self.depth = line, depth
        self.previous, self.previous_row = previous, previous_row
        self.continued, self.body_start = continued, body_start

    def skip_docstring(self, statement: tree_sitter.Node | None) -> None:
        if statement is not None:
            self.skipped.add((statement.start_byte, statement.end_byte))
            self.skipped_starts.add(statement.start_byte)

    def docstring_of(self, holder: tree_sitter.Node) -> tree_sitter.Node | None:
        """The holder's leading docstring when its body is a block below the header."""
        body = holder.child_by_field_name("body")
        if body is None or body.type not in self.spec.block_types:
            return None
        comments = self.spec.comment_types
        first = next((c for c in body.children if c.type not in comments), None)
        if first is None or not self.rules.is_docstring(first):
            return None
        colon = body.prev_sibling
        while colon is not None and colon.type != ":":
            colon = colon.prev_sibling
        header_row = colon.end_point.row if colon is not None else holder.start_point.row
        return first if first.start_point.row > header_row else None

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
    source: bytes | None = None,
    ascii_text: str | None = None,
    kinds: SourceKinds | None = None,
) -> tuple[tuple[Line, ...], int]:
    """Lines of a fragment node in the `source` layout and the index of its first body line;
    `tail`: statements after the node that NiCad's grammar reads as the rest of its body;
    `source`: the bytes the tree was parsed from (faster; the lines are the same);
    `ascii_text`: the same source as text, when it is all ASCII (faster still); `kinds`: a
    table to share between the fragments of one run (`SourceKinds(spec, rules)`)."""
    if ascii_text is not None and (source is None or len(ascii_text) != len(source)):
        raise ValueError("ascii_text must be the ASCII text of source")
    printer = _SourcePrinter(spec, rules, node, source, ascii_text, kinds)
    if whole_file:
        printer.body_byte = node.start_byte
        statements = [c for c in node.children if c.type not in spec.comment_types]
        if statements and rules.is_docstring(statements[0]):
            printer.skip_docstring(statements[0])
    printer.walk(node)
    printer.run(iter(tail))  # a statement of the tail is printed as a child of the function
    printer.flush()
    lines = tuple(printer.lines)
    return lines, len(lines) if printer.body_start is None else printer.body_start
