"""A sample file's own verdicts (`passed`, `is_solved`, `result`) against what the sandbox
measured: how many each says passed, and the samples on which they differ."""

from __future__ import annotations

from collections.abc import Iterable

from cloneprobe.audit.audit_report import FileVerdictDiffers, FileVerdicts
from cloneprobe.benchmarks import Benchmark
from cloneprobe.execution import ExecutionStore, task_execution_key
from cloneprobe.generation import SampleStore, StoredSample

MAX_LISTED = 50
"""Differing samples listed in the report (all are counted)."""


def claim_key(sample: StoredSample) -> tuple:
    return (sample.model, sample.prompt_set, sample.variant, sample.task_id,
            sample.temperature, sample.sample_index)  # fmt: skip


def compare_file_verdicts(
    store: SampleStore,
    benchmark: Benchmark,
    samples: Iterable[StoredSample],
    claims: dict[tuple, tuple[bool, str]],
) -> FileVerdicts:
    """The `file_verdicts` section: samples the file judged, how many passed by the file and
    by the sandbox (None when the samples were not executed), and the samples that differ."""
    judged = [s for s in samples if claim_key(s) in claims]
    keys = {}
    for sample in judged:
        task = benchmark.get(sample.task_id)
        if task is not None and task.test:
            keys[sample.id] = task_execution_key(sample.program or "", task, sample.entry_point)
    results = ExecutionStore(store.db, read_only=store.read_only).matching(keys)  # type: ignore[arg-type]
    differ: list[FileVerdictDiffers] = []
    measured_passed, measured, differ_count = 0, 0, 0
    for sample in judged:
        claimed, where = claims[claim_key(sample)]
        result = results.get(sample.id)  # type: ignore[arg-type]
        if result is None:
            continue
        measured += 1
        measured_passed += int(result.passed)
        if result.passed != claimed:
            differ_count += 1
            if len(differ) >= MAX_LISTED:
                continue
            differ.append({
                "task_id": sample.task_id, "sample": sample.sample_index, "model": sample.model,
                "where": where, "file": claimed, "measured": result.passed,
                "reason": result.reason, "repairs": sample.repairs,
                "program": sample.program or "",
                "written": sample.raw if sample.repairs else None,
            })  # fmt: skip
    return {
        "samples": len(judged),
        "file_passed": sum(1 for s in judged if claims[claim_key(s)][0]),
        "executed": measured,
        "measured_passed": measured_passed if measured else None,
        "differ_count": differ_count,
        "differ": differ,
    }


def file_verdicts_lines(section: dict) -> list[str]:
    """The comparison in words, then one line per differing sample."""
    if not section or not section.get("samples"):
        return []
    head = f"the file gives its own verdict for {section['samples']} samples: " \
           f"{section['file_passed']} passed"  # fmt: skip
    if not section["executed"]:
        return [head + "; run `execute` (or add --execute) to compare them with the sandbox's"]
    lines = [head + f"; cloneprobe measured {section['measured_passed']} of the "
             f"{section['executed']} it executed; {section['differ_count']} differ"]  # fmt: skip
    for row in section["differ"]:
        said = "passed" if row["file"] else "failed"
        got = "passed" if row["measured"] else f"failed ({row['reason'] or 'no reason'})"
        repaired = f"; repaired: {row['repairs']}" if row["repairs"] else ""
        lines.append(f"  {row['task_id']} sample {row['sample']} ({row['where']}): the file "
                     f"says {said}, measured {got}{repaired}")  # fmt: skip
    if section["differ_count"] > len(section["differ"]):
        lines.append(f"  ... and {section['differ_count'] - len(section['differ'])} more "
                     "(all in report.json)")  # fmt: skip
    return lines
