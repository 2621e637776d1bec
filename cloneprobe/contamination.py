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
from pathlib import Path

from .execution.passk import pass_at_k
from .scan.results import load_summary

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


def _side(tasks: dict[str, list[dict]]) -> dict:
    executed = {t: [s for s in samples if "passed" in s] for t, samples in tasks.items()}
    per_task_pass = {t: (len(s), sum(x["passed"] for x in s)) for t, s in executed.items() if s}
    samples = [s for group in tasks.values() for s in group]
    cloned = [s for s in samples if s.get("clone_type")]
    return {
        "tasks": len(tasks),
        "samples": len(samples),
        "clone_rate": round(len(cloned) / len(samples), 4) if samples else None,
        "tasks_with_clones": sum(any(s.get("clone_type") for s in g) for g in tasks.values()),
        **pass_at_k(per_task_pass),
    }


def split_by_contamination(report: dict, found: set[str], scan_path: str = "") -> dict:
    """Per model x temperature x prompt set: the found and not-found sides, their
    difference, and the permutation test over tasks (pass@1 and the clone rate)."""
    groups: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for sample in report.get("samples", []):
        key = (sample["model"], sample["temperature"], sample["prompt_set"])
        groups[key][sample["task_id"]].append(sample)
    rows = []
    for (model, temperature, prompt_set), tasks in sorted(groups.items(), key=str):
        inside = {t: s for t, s in tasks.items() if t in found}
        outside = {t: s for t, s in tasks.items() if t not in found}
        row = {"model": model, "temperature": temperature, "prompt_set": prompt_set,
               "found": _side(inside), "not_found": _side(outside)}  # fmt: skip
        for name, value in (("pass@1", _pass_rate), ("clone_rate", _clone_rate)):
            a = [v for s in inside.values() if (v := value(s)) is not None]
            b = [v for s in outside.values() if (v := value(s)) is not None]
            if a and b:
                row[f"{name}_difference"] = round(sum(a) / len(a) - sum(b) / len(b), 4)
                row[f"{name}_p_value"] = round(permutation_p_value(a, b), 4)
        rows.append(row)
    return {"scan": scan_path, "found_tasks": sorted(found), "groups": rows,
            "test": f"two-sided permutation test over tasks ({PERMUTATIONS} relabellings)",
            }  # fmt: skip


def _pass_rate(samples: list[dict]) -> float | None:
    executed = [s["passed"] for s in samples if "passed" in s]
    return sum(executed) / len(executed) if executed else None


def _clone_rate(samples: list[dict]) -> float | None:
    return sum(bool(s.get("clone_type")) for s in samples) / len(samples) if samples else None
