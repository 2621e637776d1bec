"""Java: methods and constructors with a body; braces open on the header line, close alone."""

from __future__ import annotations

import tree_sitter_java

from .base import LanguageSpec

_INTEGER_LITERALS = (
    "decimal_integer_literal",
    "hex_integer_literal",
    "octal_integer_literal",
    "binary_integer_literal",
)
_FLOAT_LITERALS = ("decimal_floating_point_literal", "hex_floating_point_literal")

JAVA = LanguageSpec(
    name="java",
    extensions=(".java",),
    load_language=tree_sitter_java.language,
    function_types=frozenset({"method_declaration", "constructor_declaration"}),
    comment_types=frozenset({"line_comment", "block_comment"}),
    atomic_types=frozenset({"string_literal", "character_literal"}),
    token_kinds={
        "identifier": "id",
        "type_identifier": "id",
        **dict.fromkeys(_INTEGER_LITERALS, "int"),
        **dict.fromkeys(_FLOAT_LITERALS, "float"),
        "string_literal": "str",
        "character_literal": "char",
    },
    block_types={
        "block": "brace",
        "constructor_body": "brace",
        "class_body": "brace",
        "interface_body": "brace",
        "enum_body": "brace",
        "switch_block": "brace",
    },
    statement_holders={"switch_block_statement_group": frozenset({"switch_label"})},
    body_fields=frozenset({"body", "consequence", "alternative"}),
    compound_types=frozenset(
        {
            "if_statement",
            "for_statement",
            "enhanced_for_statement",
            "while_statement",
            "do_statement",
            "labeled_statement",
        }
    ),
)
