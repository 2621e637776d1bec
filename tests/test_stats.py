"""The statistics of the original-versus-fixed comparison against values worked out by hand."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from cloneprobe.audit.stats import bootstrap_difference, mcnemar_exact

# --- exact McNemar ----------------------------------------------------------------------------


def test_mcnemar_without_discordant_pairs_is_one():
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize(
    ("only_first", "only_second", "expected"),
    [
        (5, 0, 2 * (1 / 32)),  # 0.0625
        (3, 1, 2 * (1 + 4) / 16),  # 0.625
        (10, 2, 2 * (1 + 12 + 66) / 4096),  # 2 * sum_{i<=2} C(12, i) / 2^12
        (6, 0, 2 / 64),
        (7, 1, 2 * (1 + 8) / 256),
        (20, 0, 2 / 2**20),
    ],
)
def test_mcnemar_is_the_two_sided_binomial_tail(only_first, only_second, expected):
    assert mcnemar_exact(only_first, only_second) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("only_first", "only_second"), [(1, 0), (1, 1), (2, 2), (4, 3), (2, 1)])
def test_mcnemar_caps_the_doubled_tail_at_one(only_first, only_second):
    # e.g. (1, 1): 2 * (1 + 2) / 4 = 1.5 before the cap
    assert mcnemar_exact(only_first, only_second) == 1.0


def test_mcnemar_is_symmetric_in_its_arguments():
    for a in range(12):
        for b in range(12):
            assert mcnemar_exact(a, b) == mcnemar_exact(b, a), (a, b)


def test_mcnemar_shrinks_as_the_imbalance_grows():
    values = [mcnemar_exact(k, 0) for k in range(1, 12)]
    assert all(later < earlier for earlier, later in pairwise(values))
    assert values[0] == 1.0 and values[-1] == pytest.approx(2 / 2**11)


# --- paired bootstrap -------------------------------------------------------------------------

FIRST = [True, True, True, False, True, False, False, True]
SECOND = [True, False, False, False, True, False, True, False]
# differences per item: 0, 1, 1, 0, 0, 0, -1, 1 -> mean 2/8


def test_bootstrap_gives_the_observed_difference_exactly():
    observed, _, _ = bootstrap_difference(FIRST, SECOND)
    assert observed == 0.25
    assert bootstrap_difference(SECOND, FIRST)[0] == -0.25


def test_bootstrap_interval_contains_the_observed_difference():
    observed, low, high = bootstrap_difference(FIRST, SECOND, seed=3)
    assert low <= observed <= high
    assert low < high
    assert low >= -1 and high <= 1
    # resampled means of 8 items are multiples of 1/8
    assert (low * 8).is_integer() and (high * 8).is_integer()


def test_bootstrap_interval_has_width_zero_for_identical_samples():
    assert bootstrap_difference(FIRST, list(FIRST)) == (0.0, 0.0, 0.0)
    assert bootstrap_difference([True] * 5, [False] * 5) == (1.0, 1.0, 1.0)


def test_bootstrap_interval_narrows_with_lower_confidence():
    _, low99, high99 = bootstrap_difference(FIRST, SECOND, confidence=0.99, seed=1)
    _, low50, high50 = bootstrap_difference(FIRST, SECOND, confidence=0.5, seed=1)
    assert low99 <= low50 <= high50 <= high99
    assert high50 - low50 < high99 - low99


def test_bootstrap_is_reproducible_with_a_seed_and_uses_it():
    assert bootstrap_difference(FIRST, SECOND, seed=7) == bootstrap_difference(
        FIRST, SECOND, seed=7
    )
    few = {bootstrap_difference(FIRST, SECOND, resamples=10, seed=s) for s in range(20)}
    assert len(few) > 1


def test_bootstrap_refuses_unpaired_samples():
    with pytest.raises(ValueError, match="paired"):
        bootstrap_difference([True, False], [True])


def test_bootstrap_of_no_items_is_zero():
    assert bootstrap_difference([], []) == (0.0, 0.0, 0.0)


def test_the_bootstrap_interval_uses_the_ceil_qb_th_estimate():
    first = [True, False, True, True, False, True, False, False, True, True]
    second = [False, False, True, False, False, True, True, False, False, False]
    diffs = [int(a) - int(b) for a, b in zip(first, second, strict=True)]
    rng = random.Random(5)
    estimates = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(40))
    assert estimates[0] != estimates[1]  # the data tell the two indices apart
    _, low, high = bootstrap_difference(first, second, resamples=40, seed=5)
    # 2.5% of 40 is 1: the lower bound is the 1st smallest, the upper the 39th
    assert (low, high) == (estimates[0], estimates[38])
