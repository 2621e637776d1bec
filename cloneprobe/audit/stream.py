"""The audit of stored samples as a stream: samples are read from the store a task at a time,
judged (reusing verdicts reached on the same inputs), aggregated into per-task state and
written to the report's spool, so memory does not grow with the number of samples."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from cloneprobe.audit.aggregate import Groups
from cloneprobe.audit.detection import (
    MAX_PROGRAM_BYTES,
    DetectionSettings,
    DetectionStore,
    SampleProgram,
    judge,
    too_large,
)
from cloneprobe.benchmarks import Benchmark
from cloneprobe.execution import ExecutionStore, task_execution_key
from cloneprobe.generation import SampleStore, StoredSample

if TYPE_CHECKING:
    from cloneprobe.audit.audit_report import AuditReport
    from cloneprobe.audit.report import ReportBuilder

CHUNK = 500
"""Samples judged at once (at most; a chunk never spans two tasks or groups)."""


def task_chunks(samples: Iterable[StoredSample], size: int = CHUNK) -> Iterator[list[StoredSample]]:
    """Consecutive samples of one group and task, at most `size` at a time."""
    chunk: list[StoredSample] = []
    key = None
    for sample in samples:
        current = (sample.model, sample.settings_key, sample.temperature, sample.prompt_set,
                   sample.variant, sample.task_id)  # fmt: skip
        if chunk and (current != key or len(chunk) >= size):
            yield chunk
            chunk = []
        key = current
        chunk.append(sample)
    if chunk:
        yield chunk


def _programs(chunk: list[StoredSample]) -> list[SampleProgram]:
    return [SampleProgram(s.id, s.task_id, s.program or "", s.prompt_set, s.entry_point)  # type: ignore[arg-type]
            for s in chunk]  # fmt: skip


def judge_ahead(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: Iterable[StoredSample],
    canonicals,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Judge and store, chunk by chunk as `audit_stream` will, the verdicts of every sample it
    will judge, so that its `judge` then reads them back (a thread's work beside the sandbox's
    runs, on a connection of its own: `store` is opened by that thread). `stop` is asked
    between chunks."""
    detections = DetectionStore(store.db, read_only=store.read_only)
    for chunk in task_chunks(samples):
        if stop():
            return
        if benchmark.get(chunk[0].task_id) is not None:
            judge(detections, canonicals, settings,
                  [p for p in _programs(chunk) if not too_large(p)])  # fmt: skip


def audit_stream(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: Iterable[StoredSample],
    builder: ReportBuilder,
    progress: Callable[[int], None] | None = None,
) -> AuditReport:
    """Judge, aggregate and report the samples, with the pass/fail results stored for the
    same programs and tests. Samples of tasks the benchmark lacks, and samples over the size
    cap, are left out and counted under `skipped`. `builder` (`audit.report.ReportBuilder`) takes
    each judged sample and makes the report."""
    canonicals = builder.canonicals
    detections = DetectionStore(store.db, read_only=store.read_only)
    executions = ExecutionStore(store.db, read_only=store.read_only)
    groups, run_ids = Groups(), set()
    for chunk in task_chunks(samples):
        task = benchmark.get(chunk[0].task_id)
        programs = _programs(chunk)
        if task is None:
            builder.skipped[f"task not in {benchmark.name}"] += len(chunk)
        else:
            big = {p.sample_id for p in programs if too_large(p)}
            if big:
                builder.skipped[f"over the {MAX_PROGRAM_BYTES:,} byte size cap"] += len(big)
            verdicts = judge(detections, canonicals, settings,
                             [p for p in programs if p.sample_id not in big])  # fmt: skip
            keys = {p.sample_id: task_execution_key(p.program, task, p.entry_point)
                    for p in programs}  # fmt: skip
            results = executions.matching(keys)
            for sample in chunk:
                verdict = verdicts.get(sample.id)  # type: ignore[arg-type]
                if verdict is None:
                    continue
                run_ids.add(sample.run_id)
                group = groups.add(sample, verdict, results.get(sample.id))  # type: ignore[arg-type]
                builder.add(group, sample, verdict, results.get(sample.id))  # type: ignore[arg-type]
        if progress:
            progress(len(chunk))
    sampling = [
        {"run": run["id"], "model": run["model"], "settings": run["settings"],
         "versions": run["versions"], "status": run["status"]}
        for run in store.runs()
        if run["id"] in run_ids
    ]  # fmt: skip
    return builder.finish(groups.ordered(), sampling)
