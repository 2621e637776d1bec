"""The pure comparison functions: NiCad's both-sides rule, similarity, size window, matching."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cloneprobe.clones.compare import (
    exact_matches,
    is_near_miss,
    min_lcs,
    near_miss_matches,
    similarity_percent,
    size_window,
)

T30 = Fraction("0.3")


def lcs_length(a, b) -> int:
    """Textbook dynamic-programming LCS, the reference for the fast matcher."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def brute_force_near_misses(a, b, threshold):
    found = []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            n1, n2 = len(x), len(y)
            if n1 == 0 or n2 == 0:
                continue
            lcs = lcs_length(x, y)
            if Fraction(n1 - lcs, n1) <= threshold and Fraction(n2 - lcs, n2) <= threshold:
                found.append((i, j, lcs))
    return sorted(found)


# --- is_near_miss -------------------------------------------------------------------------------


def test_lcs_at_exactly_30_percent_difference_is_a_near_miss():
    assert is_near_miss(7, 10, 10, T30)
    assert is_near_miss(14, 20, 20, T30)


def test_lcs_just_over_30_percent_difference_is_not_a_near_miss():
    assert not is_near_miss(6, 10, 10, T30)
    assert not is_near_miss(13, 20, 20, T30)


def test_threshold_is_exact_not_floating_point():
    # Exact arithmetic: 3 unique items of 10, 9 of 30, 30 of 100 all sit on the boundary.
    assert is_near_miss(7, 10, 10, Fraction(3, 10))
    assert is_near_miss(21, 30, 30, T30)
    assert is_near_miss(70, 100, 100, T30)
    assert not is_near_miss(69, 100, 100, T30)


def test_both_sides_must_be_within_the_threshold():
    # a (10 items) is entirely in b (15 items): 0% unique in a, 33% unique in b.
    assert not is_near_miss(10, 10, 15, T30)
    assert not is_near_miss(10, 15, 10, T30)
    # 14 items: 4/14 = 28.6% unique in b.
    assert is_near_miss(10, 10, 14, T30)
    assert is_near_miss(10, 14, 10, T30)


def test_one_side_within_threshold_is_not_enough():
    # a: 3 of 10 unique (30%, fine); b: 4 of 11 unique (36%).
    assert not is_near_miss(7, 10, 11, T30)


def test_threshold_zero_requires_identical_lengths_and_full_lcs():
    zero = Fraction(0)
    assert is_near_miss(5, 5, 5, zero)
    assert not is_near_miss(4, 5, 5, zero)
    assert not is_near_miss(5, 5, 6, zero)


def test_empty_fragments_are_never_near_misses():
    assert not is_near_miss(0, 0, 0, T30)
    assert not is_near_miss(0, 0, 5, T30)
    assert not is_near_miss(0, 5, 0, Fraction("0.99"))


def test_min_lcs_is_the_smallest_accepted_lcs():
    for n in range(1, 60):
        low = min_lcs(n, T30)
        assert is_near_miss(low, n, n, T30)
        assert not is_near_miss(low - 1, n, n, T30)


# --- similarity_percent -------------------------------------------------------------------------


def test_similarity_is_over_the_larger_side():
    assert similarity_percent(7, 10, 8) == 70
    assert similarity_percent(7, 8, 10) == 70
    assert similarity_percent(10, 10, 14) == 71


def test_similarity_rounds_down_as_nicad_prints_it():
    # NiCad prints 90 for 10 of 11 lines and 96 for 24 of 25 (the study's GPT-3.5 reports)
    assert similarity_percent(10, 11, 10) == 90
    assert similarity_percent(24, 25, 24) == 96
    assert similarity_percent(1, 8, 8) == 12  # 12.5
    assert similarity_percent(2, 3, 3) == 66  # 66.67
    assert similarity_percent(199, 200, 1) == 99  # 99.5: only an exact match is 100


def test_similarity_of_identical_and_empty():
    assert similarity_percent(12, 12, 12) == 100
    assert similarity_percent(0, 0, 0) == 0
    assert similarity_percent(0, 5, 7) == 0


@given(st.integers(1, 400), st.integers(1, 400), st.data())
@settings(max_examples=200, deadline=None)
def test_similarity_is_the_exact_percentage_rounded_down(n1, n2, data):
    lcs = data.draw(st.integers(0, min(n1, n2)))
    exact = Fraction(lcs * 100, max(n1, n2))
    assert similarity_percent(lcs, n1, n2) == int(exact)  # floor, x >= 0


# --- size_window --------------------------------------------------------------------------------


def test_size_window_bounds_for_30_percent():
    assert size_window(10, T30) == (7, 14)
    assert size_window(7, T30) == (5, 10)
    assert size_window(100, T30) == (70, 142)


def test_size_window_at_threshold_zero_is_the_size_itself():
    assert size_window(13, Fraction(0)) == (13, 13)


@pytest.mark.parametrize("threshold", [Fraction(0), Fraction(1, 10), T30, Fraction(1, 2)])
def test_size_window_holds_exactly_the_sizes_that_can_be_clones(threshold):
    # A size m can pair with size n only if the best case, LCS = min(n, m), is a near miss.
    for n in range(1, 80):
        low, high = size_window(n, threshold)
        for m in range(1, 200):
            possible = is_near_miss(min(n, m), n, m, threshold)
            assert (low <= m <= high) == possible, (n, m, low, high)


# --- exact_matches and near_miss_matches --------------------------------------------------------


def test_exact_matches_reports_every_equal_pair_with_its_length():
    a = [(1, 2, 3), (4,), (1, 2, 3)]
    b = [(4,), (1, 2, 3), (5, 6)]
    assert sorted(exact_matches(a, b)) == [(0, 1, 3), (1, 0, 1), (2, 1, 3)]


def test_exact_matches_of_disjoint_systems_is_empty():
    assert exact_matches([(1, 2)], [(2, 1), (1,)]) == []


def test_near_miss_matches_at_the_30_percent_boundary():
    a = [tuple(range(10))]
    b = [
        (0, 1, 2, 93, 4, 5, 96, 7, 8, 99),  # LCS 7 of 10
        (90, 1, 2, 93, 4, 5, 96, 7, 8, 99),  # LCS 6 of 10
        (*range(10), 20, 21, 22, 23),  # LCS 10 of 14
        (*range(10), 20, 21, 22, 23, 24),  # LCS 10 of 15
    ]
    assert sorted(near_miss_matches(a, b, T30)) == [(0, 0, 7), (0, 2, 10)]


def test_near_miss_matches_skips_empty_sequences():
    assert near_miss_matches([()], [(), (1,)], T30) == []
    assert near_miss_matches([(1,)], [()], T30) == []


sequences = st.lists(
    st.lists(st.integers(0, 4), min_size=0, max_size=12).map(tuple), min_size=0, max_size=6
)


@given(
    sequences,
    sequences,
    st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 4), T30, Fraction(1, 2)]),
)
@settings(max_examples=300, deadline=None)
def test_near_miss_matches_agrees_with_brute_force_lcs(a, b, threshold):
    assert sorted(near_miss_matches(a, b, threshold)) == brute_force_near_misses(a, b, threshold)


@given(sequences, sequences)
@settings(max_examples=100, deadline=None)
def test_exact_matches_agrees_with_brute_force_equality(a, b):
    expected = sorted((i, j, len(x)) for i, x in enumerate(a) for j, y in enumerate(b) if x == y)
    assert sorted(exact_matches(a, b)) == expected


def test_reference_lcs_is_right():
    assert lcs_length((1, 2, 3, 4), (2, 4, 3)) == 2
    assert lcs_length((), (1,)) == 0
    assert lcs_length((1, 3, 5, 7), (0, 1, 2, 3, 4, 5, 6, 7)) == 4


long_sequences = st.lists(
    st.lists(st.integers(0, 3), min_size=50, max_size=90).map(tuple), min_size=1, max_size=3
)


@given(long_sequences, long_sequences, st.sampled_from([T30, Fraction(1, 2)]))
@settings(max_examples=40, deadline=None)
def test_near_miss_matches_agrees_with_brute_force_beyond_one_machine_word(a, b, threshold):
    assert sorted(near_miss_matches(a, b, threshold)) == brute_force_near_misses(a, b, threshold)


large_ids = st.lists(
    st.lists(st.sampled_from([0, 255, 256, 2**31 - 1, 2**31, 2**40, 2**63 - 1]), max_size=10).map(
        tuple
    ),
    max_size=4,
)


@given(large_ids, large_ids)
@settings(max_examples=60, deadline=None)
def test_near_miss_matches_agrees_with_brute_force_on_large_item_ids(a, b):
    assert sorted(near_miss_matches(a, b, T30)) == brute_force_near_misses(a, b, T30)
