"""The statistics of the original-versus-fixed comparison: exact McNemar and a paired bootstrap."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from itertools import repeat
from math import ceil, comb, floor
from statistics import NormalDist


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
    estimates = sorted(total / n for total in resampled_sums(diffs, resamples, seed))
    return observed, *percentile_interval(estimates, confidence)


def resampled_sums(values: Sequence[int], resamples: int, seed: int) -> Iterator[int]:
    """The sum of each of `resamples` resamples of the integers `values`, len(values) items
    drawn with replacement: item floor(random() * n), as `random.Random(seed).choices(values,
    k=n)` draws them resample after resample (the same figures), without building the lists."""
    n = len(values)
    scale, draw, item = n + 0.0, random.Random(seed).random, values.__getitem__
    for _ in range(resamples):
        yield sum([item(floor(draw() * scale)) for _ in repeat(None, n)])


def percentile_interval(estimates: Sequence[float], confidence: float) -> tuple[float, float]:
    """The bootstrap percentile interval of sorted estimates: the q-th percentile is the
    ceil(q * B)-th smallest of B estimates (1-based), so index ceil(q * B) - 1."""
    count = len(estimates)
    alpha = (1 - confidence) / 2

    def at(q: float) -> float:
        return estimates[min(count - 1, max(0, ceil(round(q * count, 9)) - 1))]

    return at(alpha), at(1 - alpha)


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default); (0, 0) for no trials."""
    if trials == 0:
        return 0.0, 0.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_ratio(
    clusters: Sequence[tuple[int, int]],
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """A rate sum(hits) / sum(trials) over clusters (tasks) of (hits, trials), with a percentile
    bootstrap interval that resamples clusters with replacement (samples of one task are not
    independent)."""
    total = sum(t for _, t in clusters)
    if not clusters or total == 0:
        return 0.0, 0.0, 0.0
    observed = sum(h for h, _ in clusters) / total
    # each cluster as one integer, hits above trials: one sum gives both (exact: a resample's
    # trials, at most n times the largest, fit below `shift` bits)
    shift = (len(clusters) * max(t for _, t in clusters)).bit_length()
    low_bits = (1 << shift) - 1
    packed = [(hits << shift) | trials for hits, trials in clusters]
    estimates = []
    for both in resampled_sums(packed, resamples, seed):
        trials = both & low_bits
        estimates.append((both >> shift) / trials if trials else 0.0)
    estimates.sort()
    low, high = percentile_interval(estimates, confidence)
    if low == high:
        # every resample gives the same rate (none or all hits): the bootstrap cannot say how
        # sure that is, so the interval is Wilson's over the clusters (tasks), the independent
        # units; 0 of 4 tasks' samples is 0-49%, not 0-0%
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        low, high = wilson_interval(round(observed * len(clusters)), len(clusters), z)
    return observed, low, high
