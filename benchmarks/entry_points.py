"""The function a prompt asks for, when a prompt variant renames the task's entry point.

The reference study's `_P6` prompts fix a function name that does not say what the function
does (HumanEval/106's `f` becomes `fact_sum`). A sample written for such a prompt defines the
new name, so its tests must call the new name and its canonical fragment must carry it. Pure
functions of the texts: no state, nothing run.
"""

from __future__ import annotations

import ast
import io
import tokenize

from .errors import BenchmarkError
from .tasks import Task


def _top_level_functions(text: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _is_unwritten(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function the prompt leaves to the model: a docstring (or `pass`, `...`) and nothing
    else."""
    for statement in function.body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        return False
    return True


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    return [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]


def prompt_entry_point(text: str, task: Task, where: str = "prompt") -> str:
    """The name of the function `text` (a prompt variant of `task`) asks the model to write.

    The task's own entry point when the prompt defines it; otherwise the one function the
    prompt defines that the task's original prompt does not and that takes as many parameters
    as the original entry point (a name fix changes the name, perhaps the parameters' names,
    not what the function takes), preferring a function left unwritten. Raises BenchmarkError
    naming `where` when no function, or more than one, can be the entry point.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    defined = {
        node.name
        for node in (ast.walk(tree) if tree else ())
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    if task.entry_point in defined or task.language != "python":
        return task.entry_point
    originals = _top_level_functions(task.prompt)
    wanted = next((_parameters(f) for f in originals if f.name == task.entry_point), None)
    original_names = {f.name for f in originals}
    new = [
        f
        for f in _top_level_functions(text)
        if f.name not in original_names and (wanted is None or len(_parameters(f)) == len(wanted))
    ]
    unwritten = [f for f in new if _is_unwritten(f)]
    candidates = unwritten if len(unwritten) == 1 else new
    if len(candidates) == 1:
        return candidates[0].name
    if not new:
        raise BenchmarkError(
            f"{where}: does not define the entry point {task.entry_point}() of {task.task_id}, "
            "nor a renamed function with its parameters; give the prompt with the function "
            "header and docstring"
        )
    found = ", ".join(f.name for f in new)
    raise BenchmarkError(
        f"{where}: does not define the entry point {task.entry_point}() of {task.task_id}, and "
        f"more than one new function could stand for it ({found}); keep one renamed function "
        "per prompt"
    )


def rename_identifier(source: str, old: str, new: str) -> str:
    """`source` with every name token `old` replaced by `new` (strings and comments kept);
    source that does not tokenize is returned as it is."""
    if old == new:
        return source
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    for token in reversed(tokens):
        if token.type == tokenize.NAME and token.string == old:
            row, col = token.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + new + line[col + len(old) :]
    return "".join(lines)


def alias_original_name(program: str, task: Task, entry_point: str) -> str:
    """The program a renamed entry point is tested with: the benchmark's test calls the new
    name through `check(<new name>)`, and a test that names the original function directly
    (HumanEval/33 calls `sort_third` itself) finds it as an alias of the new one."""
    if entry_point == task.entry_point or task.entry_point not in task.test:
        return program
    return f"{program}\n\n{task.entry_point} = {entry_point}\n"


def prompt_under(task: Task, entry_point: str) -> str:
    """The task's prompt with its entry point renamed to `entry_point` (the trusted code that
    runs beside the tests: it must define the task's helpers, not the original name, which a
    renamed answer provides as an alias)."""
    if entry_point == task.entry_point:
        return task.prompt
    return rename_identifier(task.prompt, task.entry_point, entry_point)
