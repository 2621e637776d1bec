"""Fragment extraction: every function with a block body, or each whole file, as a Fragment."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import tree_sitter

from .answer import AnswerScope, answer_scope
from .collector import collector_paused
from .errors import ConfigError
from .fragment import LAYOUTS, Fragment, Layout, Line
from .languages.base import LanguageSpec
from .pretty import pretty_print_file, pretty_print_node
from .source import SourceFile, normalize_newlines
from .source_layout import SourceKinds, print_source_lines

Granularity = Literal["functions", "files"]
FILE_MEMO_CHARS = 32_000_000
"""Characters of program text an extractor remembers before it starts afresh: with their
fragments, a few hundred MB at most, whatever the number of programs."""
FILE_MEMO_MAX_CHARS = 100_000
"""Programs longer than this are never remembered."""


class FragmentExtractor:
    """Parses source files of one language and cuts them into fragments (one parser per run).

    `layout` is the profile's (`profile.layout`): `statements` for the default profile,
    `source` for nicad; a profile refuses fragments printed in another layout.
    `memo`: parse each distinct program once (the fragments are the same with it or without;
    a program seen again gets fresh Fragment objects named after its file, since fragments
    compare by identity).
    """

    def __init__(
        self, spec: LanguageSpec, layout: Layout = "statements", memo: bool = True
    ) -> None:
        if layout not in LAYOUTS:
            raise ConfigError(f"unknown layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
        self.spec = spec
        self.layout = layout
        self.source_rules = spec.source_lines if layout == "source" else None
        self.kinds = SourceKinds(spec, self.source_rules) if self.source_rules else None
        self.parser = spec.new_parser()
        language = tree_sitter.Language(spec.load_language())
        pattern = " ".join(f"({kind}) @fragment" for kind in sorted(spec.function_types))
        self.query_cursor = tree_sitter.QueryCursor(tree_sitter.Query(language, pattern))
        self.holder_roles: dict[int, int] | None = {} if spec.function_holders else None
        self.programs: dict[tuple, tuple] | None = {} if memo else None
        self.remembered_chars = 0

    def remembered(self, source: SourceFile, key: tuple, extract):
        """`extract()`'s (fragments, extra) for `source`, from the memo when the same program
        text was extracted before; fragments renamed to `source`'s file."""
        programs = self.programs
        if programs is None or len(source.text) > FILE_MEMO_MAX_CHARS:
            return extract()
        known = programs.get(key)
        if known is None:
            fragments, extra = extract()
            if self.remembered_chars + len(source.text) > FILE_MEMO_CHARS:
                programs.clear()
                self.remembered_chars = 0
            programs[key] = (fragments, extra)
            self.remembered_chars += len(source.text)
            return fragments, extra
        fragments, extra = known
        return [replace(f, file=source.name) for f in fragments], extra

    @collector_paused
    def extract(self, source: SourceFile, granularity: Granularity = "functions") -> list[Fragment]:
        """The fragments of `source`: each function with a block body, or the whole file (named
        after the file, so not remembered)."""
        if granularity == "files":
            return self.parse_fragments(source, granularity)
        key = (source.text, granularity)
        return self.remembered(source, key, lambda: (self.parse_fragments(source, granularity),
                                                     None))[0]  # fmt: skip

    def parse_fragments(self, source: SourceFile, granularity: Granularity) -> list[Fragment]:
        text = normalize_newlines(source.text)
        data = text.encode("utf-8")
        tree = self.parser.parse(data)
        if granularity == "files":
            return [self.file_fragment(source, tree.root_node)]
        nodes = self.function_nodes(tree.root_node)
        ascii_text = text if len(text) == len(data) else None
        fragments = (self.function_fragment(source, n, data, ascii_text) for n in nodes)
        return [f for f in fragments if f is not None]

    def function_nodes(self, root: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Every function node of the tree, in source order. In a tree without syntax errors,
        of a language that names its `function_holders`, a walk that descends only into those
        (a function stands nowhere else); otherwise a query over every node."""
        if self.holder_roles is None or root.has_error:
            nodes = self.query_cursor.captures(root).get("fragment", [])
        else:
            nodes, roles, role_of = [], self.holder_roles, self.holder_role
            stack = [iter((root,))]
            while stack:
                for node in stack[-1]:
                    role = roles.get(node.kind_id)
                    if role is None:
                        role = role_of(node)
                    if role & 1:
                        nodes.append(node)
                    if role & 2:
                        stack.append(iter(node.children))
                        break
                else:
                    stack.pop()
        nodes.sort(key=lambda node: node.start_byte)
        return nodes

    def holder_role(self, node: tree_sitter.Node) -> int:
        """1: a function; 2: may hold one (`LanguageSpec.function_holders`); by kind id."""
        kind = node.type
        role = (kind in self.spec.function_types) | (kind in self.spec.function_holders) << 1
        self.holder_roles[node.kind_id] = role  # type: ignore[index]
        return role

    @collector_paused
    def extract_answer(
        self, source: SourceFile, entry_point: str
    ) -> tuple[list[Fragment], AnswerScope | None]:
        """The fragments of the program's answer (`answer.py`: the entry point's function with
        what it nests and the helpers it uses) and the scope; no fragment and None when the
        program defines no function named `entry_point`."""
        key = (source.text, "answer", entry_point)
        return self.remembered(source, key, lambda: self.parse_answer(source, entry_point))

    def parse_answer(
        self, source: SourceFile, entry_point: str
    ) -> tuple[list[Fragment], AnswerScope | None]:
        text = normalize_newlines(source.text)
        data = text.encode("utf-8")
        tree = self.parser.parse(data)
        nodes = self.function_nodes(tree.root_node)
        scope = answer_scope(self.spec, nodes, entry_point)
        if scope is None:
            return [], None
        ascii_text = text if len(text) == len(data) else None
        fragments = (self.function_fragment(source, n, data, ascii_text) for n in nodes)
        return [f for f in fragments if f is not None and scope.contains(f)], scope

    def function_fragment(
        self,
        source: SourceFile,
        node: tree_sitter.Node,
        data: bytes | None = None,
        ascii_text: str | None = None,
    ) -> Fragment | None:
        """The fragment of function `node`; `data`: the bytes it was parsed from (the printer
        slices token texts from them); `ascii_text`: the same as text when it is ASCII."""
        body = node.child_by_field_name("body")
        if body is None or body.type not in self.spec.block_types:
            return None  # abstract and interface methods: no body, no fragment
        tail = self.tail(node) if self.source_rules is not None else []
        try:
            lines, body_start = self.print_lines(node, tail=tail, data=data, text=ascii_text)
        except RecursionError:  # thousands of nested brackets: no program Python would take
            logging.getLogger(__name__).warning(
                "%s:%d: a function nested too deeply to compare; left out",
                source.name, node.start_point.row + 1)  # fmt: skip
            return None
        name_node = node.child_by_field_name("name")
        return Fragment(
            file=source.name,
            start_line=node.start_point.row + 1,
            end_line=(tail[-1] if tail else node).end_point.row + 1,
            name=name_node.text.decode("utf-8", "replace") if name_node else "?",
            lines=lines,
            body_start=body_start,
            has_errors=node.has_error or bool(tail),
            one_liner=self.is_one_liner(node, body),
            layout=self.layout,
        )

    def tail(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Statements after a function that still stand right of its `def` (nicad layout).

        A body that dedents to a column between the `def`'s and its first line's (a line lost
        from a sample: `def f(n):` / `        return g(n)` / `    x = 0` ...) is an
        IndentationError to Python; tree-sitter ends the function at the dedent and leaves the
        rest beside it, but NiCad's grammar reads everything indented past the `def` as its
        body (the study's own NiCad reports show such functions whole, e.g. HumanEval/107's
        samples). Comments in between do not end it."""
        column, end_row = node.start_point.column, node.end_point.row
        tail = []
        sibling = node.next_sibling
        while sibling is not None:
            if sibling.type not in self.spec.comment_types:
                if sibling.start_point.row <= end_row or sibling.start_point.column <= column:
                    break
                tail.append(sibling)
            sibling = sibling.next_sibling
        return tail

    def print_lines(
        self,
        node: tree_sitter.Node,
        whole_file: bool = False,
        tail: Sequence[tree_sitter.Node] = (),
        data: bytes | None = None,
        text: str | None = None,
    ) -> tuple[tuple[Line, ...], int]:
        if self.source_rules is not None:
            return print_source_lines(self.spec, self.source_rules, node, whole_file, tail, data,
                                      text, self.kinds)  # fmt: skip
        if whole_file:
            return pretty_print_file(self.spec, node), 0
        return pretty_print_node(self.spec, node)

    def is_one_liner(self, node: tree_sitter.Node, body: tree_sitter.Node) -> bool:
        if self.spec.block_types[body.type] != "indent":
            return False
        colon = body.prev_sibling
        while colon is not None and colon.type != ":":
            colon = colon.prev_sibling
        header_end = colon.end_point.row if colon is not None else node.start_point.row
        return body.start_point.row == header_end

    def file_fragment(self, source: SourceFile, root: tree_sitter.Node) -> Fragment:
        lines, _ = self.print_lines(root, whole_file=True)
        return Fragment(
            file=source.name,
            start_line=1,
            end_line=max(1, root.end_point.row + 1),
            name=source.name,
            lines=lines,
            body_start=0,
            has_errors=root.has_error,
            layout=self.layout,
        )
