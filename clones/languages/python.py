"""Python: functions are `def` blocks, docstrings are a body's leading bare string."""

from __future__ import annotations

import tree_sitter
import tree_sitter_python

from .base import LanguageSpec, SourceLineRules


def _is_docstring(statement: tree_sitter.Node) -> bool:
    """A statement that is only a string literal, as Python defines docstrings."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return False
    return statement.named_children[0].type in ("string", "concatenated_string")


def _is_long_string_docstring(statement: tree_sitter.Node) -> bool:
    """NiCad's docstring: a statement that is one unprefixed triple-double-quoted string (its
    `[longstringlit]` token); triple-single-quoted, prefixed or one-quote strings are statements."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return False
    string = statement.named_children[0]
    return string.type == "string" and (string.text or b"").startswith(b'"""')


# NiCad's python.grm: inside brackets a break is kept where the grammar has `[repeat
# endofline]` (after an opener or a comma, around boolean, comparison, arithmetic operators and
# `.`, before a comprehension's `if`), and removed where it has `[opt endofline]` (after a
# complete expression: before a comma, a closing bracket, `for`, `else`, `:` or `=`; around
# shift operators). A backslash continuation is removed before parsing (pyindent.txl).
PYTHON_SOURCE_LINES = SourceLineRules(
    openers=frozenset({"(", "[", "{"}),
    closers=frozenset({")", "]", "}"}),
    joined_before=frozenset({",", ")", "]", "}", ":", "for", "else", "=", "**", "<<", ">>"}),
    joined_after=frozenset({"<<", ">>"}),
    continuation_types=frozenset({"line_continuation"}),
    keywords=frozenset({"print", "exec"}),
    docstring_holders=frozenset({"function_definition"}),
    is_docstring=_is_long_string_docstring,
)

# The node types of tree-sitter-python 0.25's node-types.json whose children reach a
# function_definition, directly or through each other (tests/test_extraction_shortcuts.py
# checks the walk against the query on many programs).
# fmt: off
PYTHON_FUNCTION_HOLDERS = frozenset({
    "module", "block", "decorated_definition", "function_definition", "class_definition",
    "if_statement", "elif_clause", "else_clause", "for_statement", "while_statement",
    "try_statement", "except_clause", "finally_clause", "with_statement", "match_statement",
    "case_clause",
})
# fmt: on

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
    preamble_types=frozenset(
        {"import_statement", "import_from_statement", "future_import_statement"}
    ),
    source_lines=PYTHON_SOURCE_LINES,
    function_holders=PYTHON_FUNCTION_HOLDERS,
)
