"""Docstrings blanked out of a source file, as the reference study prepared its systems.

NiCad's Python grammar drops only a function's leading triple-double-quoted string; the study
ran it on files whose comments and docstrings were already removed, so a sample that repeats a
prompt with a `'''` docstring was compared without it. `blank_docstrings` does that
preparation: every docstring (a module's, class's or function's leading bare string, also when
it follows leading imports, as in HumanEval/115) becomes blanks, newlines kept, so line numbers
in reports still point into the original file. Works on broken files too (tree-sitter).
"""

from __future__ import annotations

import tree_sitter

from .languages import get_language
from .languages.base import LanguageSpec
from .source import normalize_newlines


def docstring_nodes(spec: LanguageSpec, root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Every docstring statement below `root` (a function's only statement excepted)."""
    found = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type not in spec.docstring_holders:
            continue
        body = node.child_by_field_name("body") or node  # a module holds its statements
        statements = [
            c
            for c in body.children
            if c.is_named and c.type not in spec.comment_types | spec.separator_types
        ]
        first = next((s for s in statements if s.type not in spec.preamble_types), None)
        if first is None or not spec.is_docstring(first):
            continue
        if body is not node and (
            len(statements) == 1 or first.start_point.row == node.start_point.row
        ):
            continue  # blanking the only statement would leave the function without a body
        found.append(first)
    return found


def blank_docstrings(text: str, language: str = "python") -> str:
    """`text` with every docstring replaced by spaces (newlines kept)."""
    spec = get_language(language)
    if not spec.docstring_holders:
        return text
    text = normalize_newlines(text)
    data = text.encode("utf-8")
    tree = spec.new_parser().parse(data)
    nodes = docstring_nodes(spec, tree.root_node)
    if not nodes:
        return text
    out = bytearray(data)
    for node in nodes:
        for index in range(node.start_byte, node.end_byte):
            if out[index] != 0x0A:
                out[index] = 0x20
    return out.decode("utf-8", "replace")
