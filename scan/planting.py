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


ADDED_STATEMENT = "checked_count = 0"


def statement_lines(source: str) -> list[int]:
    """Line numbers (1-based) of the statements of the source's first function, the function
    itself left out: where a line can be added."""
    tree = ast.parse(source)
    function = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return sorted({node.lineno for node in ast.walk(function)
                   if isinstance(node, ast.stmt) and node is not function})  # fmt: skip


def _with_line_added(source: str, line_number: int) -> str | None:
    """The source with ADDED_STATEMENT before the given line, at its indentation (None when
    that does not parse, e.g. the line continues a one-line suite)."""
    lines = source.splitlines(keepends=True)
    line = lines[line_number - 1]
    indent = line[: len(line) - len(line.lstrip())]
    text = "".join([*lines[: line_number - 1], f"{indent}{ADDED_STATEMENT}\n",
                    *lines[line_number - 1 :]])  # fmt: skip
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def line_added(source: str, seed: int) -> str:
    """The source with one statement added before a random statement of the body."""
    rng = random.Random(seed)
    starts = statement_lines(source)
    for line_number in rng.sample(starts, len(starts)):
        text = _with_line_added(source, line_number)
        if text is not None:
            return text
    return source + f"    {ADDED_STATEMENT}\n"


def every_line_added(source: str) -> list[str]:
    """The source with one statement added, once before each statement of the body where it
    parses: every copy `line_added` can plant."""
    texts = (_with_line_added(source, line_number) for line_number in statement_lines(source))
    return [text for text in texts if text is not None]


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
