"""What a language module tells the detector: fragments, comments, docstrings, statement layout.

A language is one `LanguageSpec` instance. The pretty-printer and the extractor are generic;
everything language-specific is data here (node type names of the tree-sitter grammar) plus
one small docstring predicate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import tree_sitter

TokenKind = Literal["id", "int", "float", "str", "str_row", "char", "other"]
"""`str_row`: a later source row of a string spanning several rows (the `source` layout
prints each row as a line, as NiCad does); renaming folds it back into the string."""
BlockStyle = Literal["indent", "brace"]


@dataclass(frozen=True)
class SourceLineRules:
    """How NiCad's grammar for a language keeps the source's line breaks (the `source` layout).

    A fragment is printed line by line as the source has it, comments and blank lines dropped,
    except: a line continuation joins its lines; inside brackets, a break before one of
    `joined_before` (after an expression: the grammar's trailing `[opt endofline]`, which
    NiCad's extractor removes) or after one of `joined_after` is dropped.
    """

    openers: frozenset[str]
    closers: frozenset[str]
    joined_before: frozenset[str]
    """Token types a break inside brackets is dropped before (`,`, closing brackets, ...),
    unless the token before the break is an opener or a `,` (nothing ends there)."""
    joined_after: frozenset[str]
    """Token types a break inside brackets is dropped after (Python's shift operators)."""
    continuation_types: frozenset[str]
    """Extra nodes that join two source lines (Python's backslash continuation)."""
    keywords: frozenset[str]
    """Identifiers the grammar makes keywords (Python's `print`): never renamed."""
    docstring_holders: frozenset[str]
    """Node types whose leading docstring is dropped (NiCad: functions, nested ones too)."""
    is_docstring: Callable[[tree_sitter.Node], bool]
    """True for a statement node that is a docstring in the grammar's sense."""


@dataclass(frozen=True)
class LanguageSpec:
    """Grammar facts the generic extractor and pretty-printer need for one language."""

    name: str
    extensions: tuple[str, ...]
    load_language: Callable[[], object]
    """Returns the tree-sitter language pointer (e.g. `tree_sitter_python.language`)."""

    function_types: frozenset[str]
    """Node types that are function-granularity fragments (they must have a body block)."""
    comment_types: frozenset[str]
    """Node types dropped before printing (comments, line continuations)."""
    atomic_types: frozenset[str]
    """Node types printed as one token even though the grammar gives them children (strings)."""
    token_kinds: dict[str, TokenKind]
    """Leaf or atomic node type -> kind used by renaming; everything else is `other`."""
    block_types: dict[str, BlockStyle]
    """Node types holding a statement sequence: `indent` (Python) or `brace` (`{ ... }`)."""
    own_line_types: frozenset[str] = frozenset()
    """Node types always printed on lines of their own (e.g. Python decorators)."""
    body_fields: frozenset[str] = frozenset()
    """Fields of compound statements whose non-block statement goes on its own line
    (Java `if (c) return x;` prints `if ( c )` and `return x ;` on two lines)."""
    compound_types: frozenset[str] = frozenset()
    """Node types whose `body_fields` children are inspected (keeps the walk cheap)."""
    statement_holders: dict[str, frozenset[str]] = field(default_factory=dict)
    """Node types whose named children are statements, one per line, except the listed label
    types, which stay on the line they start (Java `case 1 :` then each statement)."""
    separator_types: frozenset[str] = frozenset()
    """Tokens between statements that are not statements (Python's `;`)."""
    header_end: str | None = None
    """The token that ends a function's signature when the body is indented (Python's `:`);
    what follows it is body even when the parser could not form a block."""
    docstring_holders: frozenset[str] = frozenset()
    """Node types whose first body statement is a docstring when it is a bare string."""
    is_docstring: Callable[[tree_sitter.Node], bool] = field(default=lambda node: False)
    """True for a statement node that is a docstring (only asked for a holder's first one)."""
    preamble_types: frozenset[str] = frozenset()
    """Statements that may stand before a docstring and still leave it the docstring in the
    `statements` layout (HumanEval/115 puts `import math` before its docstring)."""
    source_lines: SourceLineRules | None = None
    function_holders: frozenset[str] = frozenset()
    """Node types that can hold a function in a tree without syntax errors (the grammar's
    node types that reach a function through their children); in such a tree the extractor
    finds functions by descending only into these. Empty: it runs a query over every node."""
    """Rules of the `source` layout (NiCad's grammar); None: the language prints statements
    in both layouts."""

    def new_parser(self) -> tree_sitter.Parser:
        """A fresh parser for this language (parsers are cheap; keep one per detection run)."""
        return tree_sitter.Parser(tree_sitter.Language(self.load_language()))
