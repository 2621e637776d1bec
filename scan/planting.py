"""Planting benchmark solutions in a corpus, to measure what a scan finds (recall) on data with
a known answer: the canonical copied verbatim, consistently renamed, or with a line added.

Used by perf/scan_throughput.py and the tests; also a way for a user to check a scan setup on
their own corpus before trusting its silence.
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import random
import tokenize
from dataclasses import dataclass

from ..benchmarks import Task, canonical_source

KINDS = ("verbatim", "renamed", "line-added")
_KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls"}


@dataclass(frozen=True)
class Plant:
    document: str
    task_id: str
    kind: str


def renamed(source: str, seed: int) -> str:
    """Every name the code binds or uses (not keywords, builtins, attributes or imported
    modules) consistently replaced by a fresh one."""
    rng = random.Random(seed)
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    mapping: dict[str, str] = {}
    out = []
    previous = None
    for token in tokens:
        text = token.string
        if (
            token.type == tokenize.NAME
            and text not in _KEEP
            and text not in imported
            and not (previous is not None and previous.string == ".")
        ):
            if text not in mapping:
                mapping[text] = f"{rng.choice(['val', 'item', 'tmp', 'q', 'arg'])}_{len(mapping)}"
            text = mapping[text]
        out.append(token._replace(string=text))
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    return tokenize.untokenize(out)


def line_added(source: str, seed: int) -> str:
    """The source with one statement added before a random statement of the body."""
    rng = random.Random(seed)
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    function = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    starts = sorted({node.lineno for node in ast.walk(function)
                     if isinstance(node, ast.stmt) and node is not function})  # fmt: skip
    for line_number in rng.sample(starts, len(starts)):
        line = lines[line_number - 1]
        indent = line[: len(line) - len(line.lstrip())]
        added = f"{indent}checked_count = 0\n"
        candidate = [*lines[: line_number - 1], added, *lines[line_number - 1 :]]
        text = "".join(candidate)
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        return text
    return source + "    checked_count = 0\n"


def planted_code(task: Task, kind: str, seed: int) -> str:
    """The task's canonical fragment (signature and body) in the given kind."""
    source = canonical_source(task)
    if kind == "verbatim":
        return source
    if kind == "renamed":
        return renamed(source, seed)
    if kind == "line-added":
        return line_added(source, seed)
    raise ValueError(f"unknown kind {kind!r}: choose one of {', '.join(KINDS)}")


def plant_into(host: str, code: str, seed: int) -> str:
    """The host file with the code inserted before a random top-level definition (or at
    the end)."""
    rng = random.Random(seed)
    lines = host.splitlines(keepends=True)
    spots = [i for i, line in enumerate(lines) if line.startswith(("def ", "class "))]
    at = rng.choice(spots) if spots else len(lines)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:at]) + "\n\n" + code + "\n\n" + "".join(lines[at:])
