"""The canonical fragment of a task, built as the reference study built its System 1 files:
the entry point's signature from the prompt plus the canonical body, docstring and comments
removed."""

from __future__ import annotations

import ast
import io
import tokenize

from .entry_points import rename_identifier
from .tasks import Task

NICAD_FLOOR = 5


def strip_comments(code: str) -> str:
    """Python source without comments, trailing blanks or empty lines (code left intact)."""
    lines = code.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
    for token in reversed(tokens):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    return "".join(f"{line.rstrip()}\n" for line in lines if line.strip())


def signature(task: Task) -> str:
    """The entry point's `def` header from the prompt (decorators and docstring left out)."""
    try:
        tree = ast.parse(task.prompt)
    except SyntaxError:
        tree = None
    functions = [
        node
        for node in (tree.body if tree else [])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == task.entry_point
    ]
    if not functions:
        marker = f"def {task.entry_point}"
        start = task.prompt.rfind(marker)
        return task.prompt[start:] if start >= 0 else task.prompt
    function = functions[-1]
    first = function.body[0]
    lines = task.prompt.splitlines(keepends=True)
    header = "".join(lines[function.lineno - 1 : first.lineno - 1])
    if first.lineno == function.lineno or not header:  # `def f(x): """doc"""` on one line
        line = lines[function.lineno - 1]
        header = line[: first.col_offset]
    return header


def canonical_source(task: Task, entry_point: str | None = None) -> str:
    """Source of the canonical fragment compared with each sample; under `entry_point` when a
    prompt variant renames the function (its recursive calls renamed too)."""
    if task.language != "python":
        return task.prompt + task.canonical_solution
    source = strip_comments(signature(task) + task.canonical_solution)
    if entry_point and entry_point != task.entry_point:
        source = rename_identifier(source, task.entry_point, entry_point)
    return source


def nicad_min_lines(task: Task) -> int:
    """The study's minimum fragment size: half the canonical's lines, never below 5."""
    lines = sum(1 for line in canonical_source(task).splitlines() if line.strip())
    return max(NICAD_FLOOR, lines // 2)
