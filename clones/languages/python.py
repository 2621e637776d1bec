"""Python: functions are `def` blocks, docstrings are a body's leading bare string."""

from __future__ import annotations

import tree_sitter
import tree_sitter_python

from .base import LanguageSpec


def _is_docstring(statement: tree_sitter.Node) -> bool:
    """A statement that is only a string literal, as Python defines docstrings."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return False
    return statement.named_children[0].type in ("string", "concatenated_string")


PYTHON = LanguageSpec(
    name="python",
    extensions=(".py",),
    load_language=tree_sitter_python.language,
    function_types=frozenset({"function_definition"}),
    comment_types=frozenset({"comment", "line_continuation"}),
    atomic_types=frozenset({"string"}),
    token_kinds={
        "identifier": "id",
        # NiCad's Python grammar has no keywords for these: they are identifiers it renames.
        "true": "id",
        "false": "id",
        "none": "id",
        "integer": "int",
        "float": "float",
        "string": "str",
    },
    block_types={"block": "indent"},
    own_line_types=frozenset({"decorator"}),
    separator_types=frozenset({";"}),
    header_end=":",
    docstring_holders=frozenset({"module", "function_definition", "class_definition"}),
    is_docstring=_is_docstring,
)
