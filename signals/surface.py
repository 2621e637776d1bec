"""Surface similarity of samples to the canonical solution (as Riddell et al. 2024 report it).

Each sample's similarity is the normalised Levenshtein similarity of its code to the
canonical function, 1 - distance / max(length of either), in characters, with rapidfuzz (1:
identical, 0: nothing in common). Both sides are compared as the caller gives them; the audit
gives the function without docstrings or comments, in one canonical layout.

A task's value is its closest sample's similarity (the max); the mean and every sample's
value are in the detail, and `distribution` summarises a group's values.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .base import SignalScore, TaskInputs


def similarity(sample: str, canonical: str) -> float:
    from rapidfuzz.distance import Levenshtein  # on first use: --help lists signals fast

    return Levenshtein.normalized_similarity(sample, canonical)


def distribution(values: Sequence[float]) -> dict:
    """Count, mean, and the 0/25/50/75/100th percentiles of a group's similarities."""
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    if len(ordered) == 1:
        quartiles = [ordered[0]] * 3
    else:
        quartiles = statistics.quantiles(ordered, n=4, method="inclusive")
    return {
        "count": len(ordered),
        "mean": round(statistics.fmean(ordered), 4),
        "min": round(ordered[0], 4),
        "q1": round(quartiles[0], 4),
        "median": round(quartiles[1], 4),
        "q3": round(quartiles[2], 4),
        "max": round(ordered[-1], 4),
    }


@dataclass(frozen=True)
class SurfaceSignal:
    name = "surface"
    short = "surface"
    description = "samples' surface similarity to the canonical"
    higher_means_memorized = True
    log_scale = False
    plot_distribution = True
    needs_scorer = False

    def settings(self) -> dict:
        return {"measure": "normalised levenshtein, characters"}

    def group_summary(self, scores: Sequence[SignalScore]) -> dict:
        values = [v for s in scores for v in s.detail.get("per_sample", [])]
        return {"samples": distribution(values)}

    def score_tasks(self, tasks: Sequence[TaskInputs]) -> list[SignalScore]:
        return [self.score_task(task) for task in tasks]

    def score_task(self, task: TaskInputs) -> SignalScore:
        if not task.samples:
            return SignalScore.unavailable(self.name, "no samples")
        if not task.canonical_function:
            return SignalScore.unavailable(self.name, "the task has no canonical function")
        values = [similarity(sample, task.canonical_function) for sample in task.samples]
        detail = {"samples": len(values), "mean": round(statistics.fmean(values), 4),
                  "per_sample": [round(v, 4) for v in values]}  # fmt: skip
        return SignalScore(self.name, max(values), None, detail)
