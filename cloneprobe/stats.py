"""The statistics of the original-versus-fixed comparison: exact McNemar and a paired bootstrap."""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import ceil, comb


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (a binomial test at 1/2)."""
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    low = min(only_first, only_second)
    tail = sum(comb(discordant, i) for i in range(low + 1)) / 2**discordant
    return min(1.0, 2 * tail)


def bootstrap_difference(
    first: Sequence[bool],
    second: Sequence[bool],
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Difference in rates (first - second) over paired items, with a percentile bootstrap
    confidence interval that resamples items (tasks) with replacement."""
    if len(first) != len(second):
        raise ValueError("the two samples must be paired (same length)")
    n = len(first)
    if n == 0:
        return 0.0, 0.0, 0.0
    diffs = [int(a) - int(b) for a, b in zip(first, second, strict=True)]
    observed = sum(diffs) / n
    rng = random.Random(seed)
    estimates = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    return observed, *percentile_interval(estimates, confidence)


def percentile_interval(estimates: Sequence[float], confidence: float) -> tuple[float, float]:
    """The bootstrap percentile interval of sorted estimates: the q-th percentile is the
    ceil(q * B)-th smallest of B estimates (1-based), so index ceil(q * B) - 1."""
    count = len(estimates)
    alpha = (1 - confidence) / 2

    def at(q: float) -> float:
        return estimates[min(count - 1, max(0, ceil(round(q * count, 9)) - 1))]

    return at(alpha), at(1 - alpha)
