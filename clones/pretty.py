"""Pretty-printing: a syntax tree becomes one statement per line, tokens without layout.

A compound statement's header (`if a > b :`, `def f ( a ) :`) is one line, each simple statement
is one line however many source lines it spans, comments and docstrings are dropped (a docstring
after leading imports too). This is the `statements` layout of the default profile; the nicad
profile prints the `source` layout (source_layout.py). Brace blocks
keep `{` on the header line and put `}` on a line of its own. Tokens inside a syntax error the
parser could not place are printed one line per source line, the only place layout matters.
A string literal is printed in one quote style (`'AEIOU'` and `"AEIOU"` are one token,
`same_quotes`): quote style is no detail of a solution, so it never tells Type-1 from Type-2.
"""

from __future__ import annotations

import re

import tree_sitter

from .fragment import CLOSING_BRACE, Line, Token
from .languages.base import LanguageSpec

_QUOTED = re.compile(r"^([A-Za-z]*)('{3}|')(.*)\2$", re.DOTALL)


def same_quotes(text: str) -> str:
    """A string literal in double quotes when it is single-quoted and the change keeps its
    value (no double quote or escaped single quote inside); `text` otherwise."""
    match = _QUOTED.match(text)
    if match is None:
        return text
    prefix, quote, body = match.groups()
    if '"' in body or "\\'" in body:
        return text
    double = '"' * len(quote)
    return f"{prefix}{double}{body}{double}"


class _Printer:
    """Collects the lines of one fragment; one instance per fragment."""

    def __init__(self, spec: LanguageSpec, root: tree_sitter.Node) -> None:
        self.spec = spec
        self.root = root
        self.lines: list[Line] = []
        self.body_start: int | None = None

    def flush(self, line: list[Token]) -> list[Token]:
        if line:
            self.lines.append(tuple(line))
        return []

    def token(self, node: tree_sitter.Node) -> Token | None:
        text = node.text
        if not text:  # MISSING nodes inserted by error recovery have no text
            return None
        kind = self.spec.token_kinds.get(node.type, "other")
        decoded = text.decode("utf-8", "replace")
        return (kind, same_quotes(decoded) if kind == "str" else decoded)

    def statement(self, node: tree_sitter.Node) -> None:
        if node.child_count == 0 or node.type in self.spec.atomic_types:
            token = self.token(node)
            self.flush([token] if token else [])
        else:
            self.flush(self.walk(node, []))

    def statements(self, holder: tree_sitter.Node, nodes: list[tree_sitter.Node]) -> None:
        spec = self.spec
        skipped = spec.comment_types | spec.separator_types
        body = [n for n in nodes if n.type not in skipped]
        if body and holder.type in spec.docstring_holders:
            first = next((i for i, n in enumerate(body) if n.type not in spec.preamble_types), 0)
            if first < len(body) and spec.is_docstring(body[first]):
                body = body[:first] + body[first + 1 :]
        for node in body:
            self.statement(node)

    def block(self, block: tree_sitter.Node, holder: tree_sitter.Node, line: list[Token]) -> None:
        spec = self.spec
        if spec.block_types[block.type] == "indent":
            self.flush(line)
            self.mark_body(holder)
            self.statements(holder, block.children)
            return
        inner: list[tree_sitter.Node] = []
        for child in block.children:
            if child.type == "{" and child.text:
                line.append(("other", "{"))
                self.flush(line)
                line = []
                self.mark_body(holder)
            elif child.type == "}":
                self.statements(holder, inner)
                inner = []
                if child.text:
                    self.lines.append(CLOSING_BRACE)
            else:
                inner.append(child)
        self.flush(line)
        self.mark_body(holder)
        self.statements(holder, inner)  # a truncated block has no closing brace

    def mark_body(self, holder: tree_sitter.Node) -> None:
        if self.body_start is None and holder == self.root:
            self.body_start = len(self.lines)

    def walk(self, node: tree_sitter.Node, line: list[Token]) -> list[Token]:
        spec = self.spec
        labels = spec.statement_holders.get(node.type)
        if labels is not None:
            return self.holder(node, line, labels)
        check_fields = node.type in spec.compound_types
        at_root = node == self.root
        for index, child in enumerate(node.children):
            kind = child.type
            if kind in spec.comment_types:
                continue
            if kind in spec.block_types:
                self.block(child, node, line)
                line = []
            elif kind == "ERROR":
                self.flush(line)
                self.error_lines(child)
                line = []
            elif kind in spec.own_line_types or (
                check_fields and node.field_name_for_child(index) in spec.body_fields
            ):
                self.flush(line)
                self.statement(child)
                line = []
            elif child.child_count == 0 or kind in spec.atomic_types:
                token = self.token(child)
                if token:
                    line.append(token)
                if at_root and kind == spec.header_end:
                    line = self.flush(line)
                    self.mark_body(node)
            else:
                line = self.walk(child, line)
        return line

    def holder(self, node: tree_sitter.Node, line: list[Token], labels: frozenset[str]):
        """Labels and punctuation stay on the current line; each statement gets its own."""
        for child in node.children:
            if child.type in self.spec.comment_types:
                continue
            if child.is_named and child.type not in labels:
                self.flush(line)
                self.statement(child)
                line = []
            elif child.child_count == 0 or child.type in self.spec.atomic_types:
                token = self.token(child)
                if token:
                    line.append(token)
            else:
                line = self.walk(child, line)
        return line

    def error_lines(self, node: tree_sitter.Node) -> None:
        """Tokens the parser could not place in a statement, one line per source line."""
        row, line = -1, []
        for leaf in self.leaves(node):
            if leaf.start_point.row != row:
                line = self.flush(line)
                row = leaf.start_point.row
            token = self.token(leaf)
            if token:
                line.append(token)
        self.flush(line)

    def leaves(self, node: tree_sitter.Node):
        for child in node.children:
            if child.type in self.spec.comment_types:
                continue
            if child.child_count == 0 or child.type in self.spec.atomic_types:
                yield child
            else:
                yield from self.leaves(child)


def pretty_print_node(spec: LanguageSpec, node: tree_sitter.Node) -> tuple[tuple[Line, ...], int]:
    """Lines of a fragment node and the index of its first body line."""
    printer = _Printer(spec, node)
    printer.flush(printer.walk(node, []))
    lines = tuple(printer.lines)
    return lines, len(lines) if printer.body_start is None else printer.body_start


def pretty_print_file(spec: LanguageSpec, root: tree_sitter.Node) -> tuple[Line, ...]:
    """Lines of a whole file (module docstring and comments dropped)."""
    printer = _Printer(spec, root)
    printer.statements(root, root.children)
    return tuple(printer.lines)
