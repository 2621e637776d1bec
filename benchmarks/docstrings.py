"""Where the docstrings of a Python prompt are."""

from __future__ import annotations

import ast

HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstring_holders(tree: ast.AST) -> list[ast.AST]:
    """Every module, class or function in `tree` whose body opens with a string literal."""
    holders = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None) if isinstance(node, HOLDERS) else None
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            holders.append(node)
    return holders


def docstring_line_ranges(prompt: str) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of every docstring in the prompt ([] if it does not parse)."""
    try:
        tree = ast.parse(prompt)
    except SyntaxError:
        return []
    ranges = []
    for holder in docstring_holders(tree):
        first = holder.body[0]
        ranges.append((first.lineno, first.end_lineno or first.lineno))
    return sorted(ranges)


def syntax_without_docstrings(prompt: str) -> str:
    """A dump (`ast.dump`) of the prompt's syntax tree with docstrings removed: what a prompt
    fix must never change. Two prompts have the same code when their dumps are equal."""
    tree = ast.parse(prompt)
    for holder in docstring_holders(tree):
        holder.body = holder.body[1:] or [ast.Pass()]
    return ast.dump(tree)
