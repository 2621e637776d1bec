"""How well a per-task score separates two known groups of tasks: AUROC, its bootstrap
confidence interval, and the ROC curve's points.

AUROC is the Mann-Whitney probability that a positive task (contaminated) scores higher than
a negative one (held out), ties counting one half: 1 separates perfectly, 0.5 is chance. The
interval resamples tasks with replacement within each group (a stratified bootstrap), so both
groups keep their sizes, and takes the 2.5th and 97.5th percentiles.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from cloneprobe.audit.stats import percentile_interval


@dataclass(frozen=True)
class Separation:
    auroc: float
    low: float
    high: float
    """The bootstrap interval (95% unless asked otherwise)."""
    positives: int
    negatives: int

    def to_dict(self) -> dict:
        return {"auroc": self.auroc, "ci_low": self.low, "ci_high": self.high,
                "positives": self.positives, "negatives": self.negatives}  # fmt: skip


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(positive > negative) + P(tie) / 2, by ranks (O(n log n))."""
    if not positives or not negatives:
        raise ValueError("AUROC needs at least one score in each group")
    pooled = sorted([(v, 1) for v in positives] + [(v, 0) for v in negatives])
    rank_sum = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        mid_rank = (i + 1 + j) / 2  # ranks i+1 .. j share their mean
        rank_sum += mid_rank * sum(label for _, label in pooled[i:j])
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def separation(
    positives: Sequence[float],
    negatives: Sequence[float],
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Separation:
    value = auroc(positives, negatives)
    draw = random.Random(seed)
    values = sorted(
        auroc(draw.choices(positives, k=len(positives)), draw.choices(negatives, k=len(negatives)))
        for _ in range(resamples)
    )
    low, high = percentile_interval(values, level)
    return Separation(value, low, high, len(positives), len(negatives))


def roc_points(positives: Sequence[float], negatives: Sequence[float]) -> list[tuple[float, float]]:
    """(false positive rate, true positive rate) at every threshold, from (0, 0) to (1, 1)."""
    thresholds = sorted(set(positives) | set(negatives), reverse=True)
    points = [(0.0, 0.0)]
    for threshold in thresholds:
        tpr = sum(1 for v in positives if v >= threshold) / len(positives)
        fpr = sum(1 for v in negatives if v >= threshold) / len(negatives)
        points.append((fpr, tpr))
    if points[-1] != (1.0, 1.0):
        points.append((1.0, 1.0))
    return points
