"""Naming tasks: the one place a user's task name (`47`, `HumanEval/47`) becomes a task id."""

from __future__ import annotations

import re

from .errors import BenchmarkError
from .tasks import Benchmark


def task_order(task_id: str) -> tuple:
    """A sort key that puts `HumanEval/4` before `HumanEval/12`: digits compared as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", task_id))


def id_prefix(benchmark: Benchmark) -> str:
    """The part of the benchmark's task ids before the `/` (`HumanEval`)."""
    return benchmark.tasks[0].task_id.split("/")[0] if benchmark.tasks else "HumanEval"


def find_task_id(benchmark: Benchmark, name) -> str | None:
    """The task id a user or a file means, or None: `HumanEval/47`, with spaces around it, the
    prefix in any case (`humaneval/47`), the number alone (`47`, also a JSON number) and
    leading zeros (`HumanEval/047`) all mean `HumanEval/47`."""
    if isinstance(name, bool) or not isinstance(name, (str, int)):
        return None
    text = str(name).strip()
    if benchmark.get(text):
        return text
    prefix = id_prefix(benchmark)
    head, slash, tail = text.rpartition("/")
    if slash and head.strip().lower() != prefix.lower():
        return None
    tail = tail.strip()
    candidate = f"{prefix}/{int(tail)}" if tail.isdecimal() else f"{prefix}/{tail}"
    return candidate if benchmark.get(candidate) else None


def accepted_task_ids(benchmark: Benchmark) -> str:
    """What a task id may be, for messages."""
    prefix = id_prefix(benchmark)
    first = benchmark.tasks[0].task_id if benchmark.tasks else f"{prefix}/0"
    last = benchmark.tasks[-1].task_id if benchmark.tasks else first
    return f"its ids run {first} .. {last}; the number alone, e.g. 0, means {prefix}/0"


def resolve_task_id(benchmark: Benchmark, name: str) -> str:
    """`47` or `HumanEval/47` -> `HumanEval/47` (see `find_task_id`); a task the benchmark
    lacks is an error."""
    found = find_task_id(benchmark, name)
    if found is not None:
        return found
    raise BenchmarkError(
        f"task {name.strip()!r} is not in {benchmark.name} ({accepted_task_ids(benchmark)}; "
        "`cloneprobe prompts` lists the tasks)"
    )


def select_tasks(
    benchmark: Benchmark, limit: int | None, tasks: str | None
) -> frozenset[str] | None:
    """`--limit K` (the first K tasks) or `--tasks 0,5,HumanEval/7`; None for all."""
    if limit is not None and tasks is not None:
        raise BenchmarkError("give --limit or --tasks, not both")
    if limit is not None:
        if limit < 1:
            raise BenchmarkError(f"--limit {limit}: must be at least 1")
        return frozenset(t.task_id for t in benchmark.tasks[:limit])
    if tasks is None:
        return None
    names = [s for s in tasks.split(",") if s.strip()]
    if not names:
        raise BenchmarkError(
            f"--tasks {tasks!r}: names no task; give task ids or numbers, e.g. --tasks 0,5,7"
        )
    try:
        return frozenset(resolve_task_id(benchmark, name) for name in names)
    except BenchmarkError as error:
        raise BenchmarkError(f"--tasks: {error}") from None
