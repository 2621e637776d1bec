"""Comparison: exact matching by hashing and near-miss matching by LCS in a size window.

Sequences are tuples of interned item ids (one id per line or per token). NiCad's rule: with
threshold t, fragments of n1 and n2 items with an LCS of L items are clones when
(n1 - L) / n1 <= t and (n2 - L) / n2 <= t; similarity is L over the larger size, in percent.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from fractions import Fraction

from rapidfuzz import process
from rapidfuzz.distance import LCSseq

Sequence_ = tuple[int, ...]


def is_near_miss(lcs: int, n1: int, n2: int, threshold: Fraction) -> bool:
    """NiCad's both-sides rule, in exact arithmetic (a pair at exactly t is a clone)."""
    if n1 == 0 or n2 == 0:
        return False
    return (n1 - lcs) <= threshold * n1 and (n2 - lcs) <= threshold * n2


def min_lcs(n: int, threshold: Fraction) -> int:
    """Smallest LCS that keeps a fragment of n items within the threshold."""
    return math.ceil(n - threshold * n)


def similarity_percent(lcs: int, n1: int, n2: int) -> int:
    """L over the larger fragment in whole percent, rounded down as NiCad prints it (10 of 11
    lines: 90; checked on the 349 similarities of the study's GPT-3.5 Type-3 runs)."""
    return lcs * 100 // max(n1, n2) if max(n1, n2) else 0


def size_window(n: int, threshold: Fraction) -> tuple[int, int]:
    """Sizes m that can be clones of a fragment of size n: n(1-t) <= m <= n/(1-t)."""
    low = math.ceil(n * (1 - threshold))
    high = math.floor(n / (1 - threshold))
    return low, high


def exact_matches(a: Sequence[Sequence_], b: Sequence[Sequence_]) -> list[tuple[int, int, int]]:
    """(i, j, length) for every a[i] == b[j]."""
    index: dict[Sequence_, list[int]] = {}
    for j, seq in enumerate(b):
        index.setdefault(seq, []).append(j)
    return [(i, j, len(seq)) for i, seq in enumerate(a) for j in index.get(seq, ())]


BATCH_PAIRS = 200_000
"""Pairs in the size windows from which near-miss matching scores a window's sequences in one
`process.cdist` call per query length instead of one `process.extract` call per query:
cdist converts each candidate once, not once per query, and scores a block of pairs in one
pass (numpy, which cdist returns, is imported only then: it costs a small run more than it
saves). The pairs found and their order are the same either way."""
BATCH_CELLS = 4_000_000
"""Scores cdist computes at most in one call (an int32 matrix of 16 MB)."""


def near_miss_matches(
    a: Sequence[Sequence_], b: Sequence[Sequence_], threshold: Fraction
) -> list[tuple[int, int, int]]:
    """(i, j, lcs) for every pair within the threshold; b is scanned only in a's size window.
    In order of i, then of LCS (highest first), then of b's sequences by size (stable)."""
    order = sorted(range(len(b)), key=lambda j: len(b[j]))
    sizes = [len(b[j]) for j in order]
    windows = []
    in_windows = 0
    for i, seq in enumerate(a):
        n = len(seq)
        if n == 0:
            continue
        low, high = size_window(n, threshold)
        start, stop = bisect_left(sizes, low), bisect_right(sizes, high)
        if start < stop:
            windows.append((i, n, start, stop))
            in_windows += stop - start
    if in_windows >= BATCH_PAIRS:
        return _near_miss_batched(a, b, threshold, order, windows)
    found = []
    for i, n, start, stop in windows:
        window = [b[j] for j in order[start:stop]]
        hits = process.extract(
            a[i], window, scorer=LCSseq.similarity, score_cutoff=min_lcs(n, threshold), limit=None
        )
        for _, lcs, k in hits:
            j = order[start + k]
            if is_near_miss(int(lcs), n, len(b[j]), threshold):
                found.append((i, j, int(lcs)))
    return found


def _near_miss_batched(
    a: Sequence[Sequence_],
    b: Sequence[Sequence_],
    threshold: Fraction,
    order: list[int],
    windows: list[tuple[int, int, int, int]],
) -> list[tuple[int, int, int]]:
    """`near_miss_matches` by `process.cdist`: the queries of one length share a window, scored
    in blocks of at most `BATCH_CELLS`; the same pairs, in the same order (process.extract
    lists a query's hits by score, highest first, ties in the window's order)."""
    import numpy as np

    by_length: dict[int, list[tuple[int, int, int]]] = {}
    for i, n, start, stop in windows:
        by_length.setdefault(n, []).append((i, start, stop))
    ordered_b = [b[j] for j in order]
    hits: list[tuple[int, int, int, int]] = []  # (i, -lcs, rank in order, lcs)
    for n, queries in by_length.items():
        _, start, stop = queries[0]
        cutoff = min_lcs(n, threshold)
        rows = [a[i] for i, _, _ in queries]
        step = max(1, BATCH_CELLS // len(rows))
        for first in range(start, stop, step):
            last = min(stop, first + step)
            scores = process.cdist(
                rows,
                ordered_b[first:last],
                scorer=LCSseq.similarity,
                score_cutoff=cutoff,
                dtype=np.int32,
                workers=1,
            )
            for row, column in zip(*np.nonzero(scores >= cutoff), strict=True):
                lcs = int(scores[row, column])
                rank = first + int(column)
                if is_near_miss(lcs, n, len(ordered_b[rank]), threshold):
                    hits.append((queries[row][0], -lcs, rank, lcs))
    hits.sort()
    return [(i, order[rank], lcs) for i, _, rank, lcs in hits]
