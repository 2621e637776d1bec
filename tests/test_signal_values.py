"""Each signal's value on inputs whose answer is worked out by hand."""

from __future__ import annotations

import math
import zlib

import pytest

from cloneprobe.signals import SignalError, parse_signal_names
from cloneprobe.signals.base import TaskInputs
from cloneprobe.signals.cdd import CDDSignal, code_tokens, medoid_index, peakedness
from cloneprobe.signals.likelihood import (
    lowest_count,
    min_k_plus_plus,
    min_k_prob,
    perplexity,
    zlib_ratio,
)
from cloneprobe.signals.relative import evidence, relative_score
from cloneprobe.signals.surface import SurfaceSignal, distribution, similarity

LOGPROBS = [-0.5, -3.0, -1.0, -0.1, -2.0, -4.0, -0.2, -1.5, -0.3, -2.5]


def test_perplexity_is_exp_of_minus_the_mean_log_prob():
    assert perplexity([-1.0, -3.0]) == pytest.approx(math.exp(2.0))
    assert perplexity(LOGPROBS) == pytest.approx(math.exp(15.1 / 10))


def test_zlib_ratio_divides_the_mean_log_prob_by_the_compressed_bytes():
    text = "    return sorted(set(l))\n"
    compressed = len(zlib.compress(text.encode()))
    assert zlib_ratio([-1.0, -2.0], text) == pytest.approx(-1.5 / compressed)


def test_min_k_averages_the_k_percent_least_likely_tokens():
    # 10 tokens, k = 20%: the two lowest, -4.0 and -3.0
    assert min_k_prob(LOGPROBS, 0.2) == pytest.approx(-3.5)
    # k = 50%: -4, -3, -2.5, -2, -1.5
    assert min_k_prob(LOGPROBS, 0.5) == pytest.approx(-2.6)
    # at least one token, even where floor(k * n) is 0
    assert lowest_count(3, 0.2) == 1
    assert min_k_prob([-1.0, -0.5, -2.0], 0.2) == pytest.approx(-2.0)


def test_min_k_plus_plus_standardises_each_token_by_its_position_distribution():
    logprobs = [-1.0, -2.0, -0.5, -3.0, -1.0]
    means = [-1.5, -1.0, -1.0, -2.0, -0.5]
    stds = [0.5, 2.0, 0.25, 1.0, 0.0]
    # z = [(−1+1.5)/.5, (−2+1)/2, (−.5+1)/.25, (−3+2)/1, 0 (sigma 0)] = [1, -0.5, 2, -1, 0]
    # k = 40% of 5 -> the two lowest: -1 and -0.5
    assert min_k_plus_plus(logprobs, means, stds, 0.4) == pytest.approx(-0.75)


def test_cdd_peakedness_counts_samples_within_alpha_times_the_longest_length():
    greedy = list("abcdefghijklmnopqrst")  # 20 tokens
    near = list("abcdefghijklmnopqrsX")  # 1 edit
    far = list("abcdefghijXXXXXXXXXX")  # 10 edits
    # alpha 0.05 * longest 20 = 1 edit allowed: near and the copy count, far does not
    assert peakedness(greedy, [near, far, greedy, far], alpha=0.05) == pytest.approx(0.5)
    assert peakedness(greedy, [near, far], alpha=0.0) == 0.0


def test_cdd_uses_the_temperature_zero_sample_as_the_greedy_answer():
    answer = "def f(x):\n    return x + 1\n"
    other = "def f(value):\n    total = value\n    total = total + 1\n    return total\n"
    task = TaskInputs("T/0", "", "", samples=(answer, answer, other, answer), greedy=(answer,),
                      temperature=0.8)  # fmt: skip
    score = CDDSignal().score_task(task)
    assert score.value == pytest.approx(0.75)
    assert score.detail["greedy"] == "temperature 0 sample"
    assert score.detail["samples"] == 4
    assert score.detail["contaminated"] is True


def test_cdd_without_a_greedy_sample_compares_with_the_most_central_one_left_out():
    centre = "def f(x):\n    return x + 1\n"
    close = "def f(x):\n    return x + 2\n"
    far = "def f(a, b):\n    while a:\n        a, b = b, a % b\n    return b\n"
    samples = (far, close, centre, close)
    assert medoid_index([code_tokens(s) for s in samples]) == 1  # lowest index among ties
    task = TaskInputs("T/0", "", "", samples=samples, temperature=0.8)
    score = CDDSignal(alpha=0.1).score_task(task)
    # greedy = samples[1]; compared: far (many edits), centre (1 edit), close (0 edits);
    # longest = 21 tokens, bound 2.1: 2 of 3
    assert score.detail["greedy"] == "most central sample (index 1)"
    assert score.detail["samples"] == 3
    assert score.value == pytest.approx(2 / 3)


def test_cdd_is_not_available_without_enough_to_compare():
    one = TaskInputs("T/0", "", "", samples=("x = 1",), temperature=0.8)
    assert CDDSignal().score_task(one).value is None
    assert "3 or more" in (CDDSignal().score_task(one).reason or "")
    greedy_group = TaskInputs("T/0", "", "", samples=("x",) * 5, temperature=0.0)
    assert "temperature 0" in (CDDSignal().score_task(greedy_group).reason or "")


def test_surface_similarity_is_one_minus_levenshtein_over_the_longer_length():
    assert similarity("abcd", "abcd") == 1.0
    assert similarity("abcd", "abXd") == pytest.approx(0.75)
    assert similarity("ab", "abcd") == pytest.approx(0.5)
    task = TaskInputs("T/0", "", "", canonical_function="abcd", samples=("abXd", "wxyz", "abcd"))
    score = SurfaceSignal().score_task(task)
    assert score.value == 1.0
    assert score.detail["per_sample"] == [0.75, 0.0, 1.0]
    assert score.detail["mean"] == pytest.approx(0.5833, abs=1e-4)


def test_surface_distribution_gives_quartiles():
    summary = distribution([0.0, 0.25, 0.5, 0.75, 1.0])
    assert summary == {"count": 5, "mean": 0.5, "min": 0.0, "q1": 0.25, "median": 0.5,
                       "q3": 0.75, "max": 1.0}  # fmt: skip


def test_relative_views_are_oriented_so_positive_means_more_memorized():
    from cloneprobe.signals.base import SignalScore

    # perplexity: lower is more memorized; compared on the log scale
    target, reference = SignalScore("perplexity", 2.0), SignalScore("perplexity", 8.0)
    assert relative_score("perplexity", target, reference) == pytest.approx(math.log(4.0))
    assert evidence("min_k", -1.0) == -1.0
    lower, higher = SignalScore("min_k", -3.0), SignalScore("min_k", -1.0)
    assert relative_score("min_k", higher, lower) == pytest.approx(2.0)
    assert relative_score("min_k", higher, SignalScore("min_k", None, "no scorer")) is None


def test_signal_names_parse_and_unknown_names_are_refused():
    assert parse_signal_names(None)[0] == "perplexity"
    assert parse_signal_names("all") == parse_signal_names("")
    assert parse_signal_names("cdd, min-k-plus-plus,cdd") == ("cdd", "min_k_plus_plus")
    with pytest.raises(SignalError, match="unknown signal 'minkk'"):
        parse_signal_names("minkk")
