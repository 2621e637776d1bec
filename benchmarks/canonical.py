"""The canonical fragment of a task, built as the reference study built its System 1 files:
the entry point's signature from the prompt, any code the prompt's function holds besides its
docstring (HumanEval/115's `import math`), plus the canonical body; the docstring, wherever it
stands, and comments removed."""

from __future__ import annotations

import ast
import io
import tokenize
from functools import lru_cache

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


def _entry_function(task: Task) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(task.prompt)
    except SyntaxError:
        return None
    functions = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == task.entry_point
    ]
    return functions[-1] if functions else None


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def signature(task: Task) -> str:
    """The entry point's `def` header from the prompt plus any code the prompt's function
    holds besides its docstring (HumanEval/115 puts `import math` before the docstring);
    decorators and the docstring, wherever it stands, left out."""
    function = _entry_function(task)
    if function is None:
        marker = f"def {task.entry_point}"
        start = task.prompt.rfind(marker)
        return task.prompt[start:] if start >= 0 else task.prompt
    lines = task.prompt.splitlines(keepends=True)
    first = function.body[0]
    header = "".join(lines[function.lineno - 1 : first.lineno - 1])
    if first.lineno == function.lineno or not header:  # `def f(x): """doc"""` on one line
        return lines[function.lineno - 1][: first.col_offset] + "\n"
    docstring = next((s for s in function.body if _is_docstring(s)), None)
    code = "".join(
        "".join(lines[statement.lineno - 1 : (statement.end_lineno or statement.lineno)])
        for statement in function.body
        if statement is not docstring
    )
    return header + code


def canonical_source(task: Task, entry_point: str | None = None) -> str:
    """Source of the canonical fragment compared with each sample; under `entry_point` when a
    prompt variant renames the function (its recursive calls renamed too)."""
    if task.language != "python":
        return task.prompt + task.canonical_solution
    return _python_canonical_source(task, entry_point or task.entry_point)


@lru_cache(maxsize=4096)
def _python_canonical_source(task: Task, renamed: str) -> str:
    """`canonical_source` of a Python task, cached by the task's value (every run asks for each
    task's several times: its inputs' hash, its fragment, its evidence profile)."""
    source = strip_comments(signature(task) + task.canonical_solution)
    if renamed != task.entry_point:
        source = rename_identifier(source, task.entry_point, renamed)
    return source


def nicad_min_lines(task: Task) -> int:
    """The study's minimum fragment size: half the line count of the task's canonical solution,
    never below 5. The study counted the `canonical_solution` text split at newlines (its final
    newline adds an empty piece; blank and comment lines count), which reproduces its published
    per-task line counts and the minimum sizes in its NiCad reports for all 164 tasks (e.g.
    HumanEval/1: 18 lines, minimum 9; /126: 12, minimum 6). Counting the canonical fragment's
    non-blank lines instead gives 7 and 5 there."""
    return max(NICAD_FLOOR, len(task.canonical_solution.split("\n")) // 2)
