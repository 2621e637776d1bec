"""Naming tasks: the one place a user's task name (`47`, `HumanEval/47`) becomes a task id."""

from __future__ import annotations

from .errors import BenchmarkError
from .tasks import Benchmark


def id_prefix(benchmark: Benchmark) -> str:
    """The part of the benchmark's task ids before the `/` (`HumanEval`)."""
    return benchmark.tasks[0].task_id.split("/")[0] if benchmark.tasks else "HumanEval"


def resolve_task_id(benchmark: Benchmark, name: str) -> str:
    """`47` or `HumanEval/47` -> `HumanEval/47`; a task the benchmark lacks is an error."""
    name = name.strip()
    if benchmark.get(name):
        return name
    prefix = id_prefix(benchmark)
    if benchmark.get(f"{prefix}/{name}"):
        return f"{prefix}/{name}"
    raise BenchmarkError(
        f"task {name!r} is not in {benchmark.name} (task ids look like {prefix}/0; "
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
