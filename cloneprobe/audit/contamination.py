"""Joining a corpus scan with the audit: pass@k and clone evidence split into the tasks the scan
found in the training corpus and the tasks it did not (Riddell et al.'s de-contaminated
accuracy), with the difference between the two and a permutation test of it.

A task counts as found when the scan holds a match with real evidence for it (`strong` or
`copy`, see cloneprobe.scan.idioms); matches labelled short, idiom or similar do not count.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.execution.passk import pass_at_k
from cloneprobe.scan.results import load_summary

PERMUTATIONS = 5000


def found_tasks(scan_output: Path) -> tuple[set[str], dict]:
    """The task ids a finished scan found, and its summary."""
    summary = load_summary(scan_output)
    return set(summary.get("found", [])), summary


def permutation_p_value(
    first: Sequence[float], second: Sequence[float], permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> float | None:
    """Two-sided p-value of the difference in means under random relabelling of the items
    (None when a side is empty). Seeded, so a report is reproducible."""
    if not first or not second:
        return None
    observed = abs(sum(first) / len(first) - sum(second) / len(second))
    pooled = list(first) + list(second)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        a, b = pooled[: len(first)], pooled[len(first) :]
        if abs(sum(a) / len(a) - sum(b) / len(b)) >= observed - 1e-12:
            extreme += 1
    return (extreme + 1) / (permutations + 1)


@dataclass
class TaskCounts:
    """One task's samples as the split needs them (counts only: a store may be large)."""

    samples: int = 0
    executed: int = 0
    passed: int = 0
    cloned: int = 0

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.executed if self.executed else None

    @property
    def clone_rate(self) -> float | None:
        return self.cloned / self.samples if self.samples else None


def _side(tasks: dict[str, TaskCounts]) -> dict:
    samples = sum(t.samples for t in tasks.values())
    per_task_pass = {k: (t.executed, t.passed) for k, t in tasks.items() if t.executed}
    return {
        "tasks": len(tasks),
        "samples": samples,
        "clone_rate": round(sum(t.cloned for t in tasks.values()) / samples, 4)
        if samples else None,
        "tasks_with_clones": sum(t.cloned > 0 for t in tasks.values()),
        **pass_at_k(per_task_pass),
    }  # fmt: skip


def split_by_contamination(report: AuditReport, found: set[str], scan_path: str = "") -> dict:
    """Per model x temperature x prompt set: the found and not-found sides, their
    difference, and the permutation test over tasks (pass@1 and the clone rate)."""
    groups: dict[tuple, dict[str, TaskCounts]] = defaultdict(lambda: defaultdict(TaskCounts))
    for sample in report.samples:
        key = (sample["model"], sample["temperature"], sample["prompt_set"])
        counts = groups[key][sample["task_id"]]
        counts.samples += 1
        counts.cloned += bool(sample.get("clone_type"))
        if "passed" in sample:
            counts.executed += 1
            counts.passed += bool(sample["passed"])
    rows = []
    for (model, temperature, prompt_set), tasks in sorted(groups.items(), key=str):
        inside = {t: c for t, c in tasks.items() if t in found}
        outside = {t: c for t, c in tasks.items() if t not in found}
        row = {"model": model, "temperature": temperature, "prompt_set": prompt_set,
               "found": _side(inside), "not_found": _side(outside)}  # fmt: skip
        for name in ("pass_rate", "clone_rate"):
            a = [v for c in inside.values() if (v := getattr(c, name)) is not None]
            b = [v for c in outside.values() if (v := getattr(c, name)) is not None]
            label = "pass@1" if name == "pass_rate" else name
            if a and b:
                row[f"{label}_difference"] = round(sum(a) / len(a) - sum(b) / len(b), 4)
                row[f"{label}_p_value"] = round(permutation_p_value(a, b), 4)
        rows.append(row)
    return {"scan": scan_path, "found_tasks": sorted(found), "groups": rows,
            "test": f"two-sided permutation test over tasks ({PERMUTATIONS} relabellings)",
            }  # fmt: skip
