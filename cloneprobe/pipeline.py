"""From stored samples to a report: detect what is not yet judged, aggregate, build."""

from __future__ import annotations

from collections.abc import Callable

from .aggregate import group_samples
from .benchmarks import Benchmark
from .detection import (
    CanonicalFragments,
    DetectionSettings,
    DetectionStore,
    SampleProgram,
    detect_samples,
)
from .execution import ExecutionStore
from .generation import SampleStore, StoredSample
from .reports import build_report


def select_samples(
    store: SampleStore,
    models: list[str] | None = None,
    prompt_sets: list[str] | None = None,
    temperatures: list[float] | None = None,
    settings_keys: list[str] | None = None,
    task_ids: frozenset[str] | None = None,
) -> list[StoredSample]:
    """Stored samples without errors, filtered (None: no filter)."""
    return [
        s
        for s in store.samples(models or None, prompt_sets or None)
        if (not temperatures or s.temperature in temperatures)
        and (not settings_keys or s.settings_key in settings_keys)
        and (task_ids is None or s.task_id in task_ids)
    ]


def audit_samples(
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: list[StoredSample],
    progress: Callable[[int], None] | None = None,
    evidence: bool = True,
) -> dict:
    """Judge the samples (reusing stored verdicts) and build the report dictionary, with the
    correctness figures of whatever samples have been executed."""
    programs = [SampleProgram(s.id, s.task_id, s.program or "") for s in samples]  # type: ignore[arg-type]
    detect_samples(store.db, benchmark, settings, programs, progress)
    verdicts = DetectionStore(store.db).verdicts(settings.key)
    groups = group_samples(samples, verdicts)
    run_ids = {s.run_id for s in samples}
    sampling = [
        {"run": run["id"], "model": run["model"], "settings": run["settings"],
         "versions": run["versions"], "status": run["status"]}
        for run in store.runs()
        if run["id"] in run_ids
    ]  # fmt: skip
    executions = ExecutionStore(store.db).results()
    return build_report(
        groups, settings, CanonicalFragments(benchmark), sampling, evidence, executions
    )
