"""The intervals the evidence rates come with, and a store written before evidence existed."""

from __future__ import annotations

import json
import random
import sqlite3
from contextlib import closing
from types import SimpleNamespace

import pytest

from cloneprobe.audit.detection import (
    CanonicalFragments,
    DetectionSettings,
    DetectionStore,
    SampleProgram,
    detect_samples,
    inputs_key,
)
from cloneprobe.audit.stats import (
    bootstrap_difference,
    bootstrap_ratio,
    percentile_interval,
    wilson_interval,
)
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import DetectorConfig
from cloneprobe.evidence.null_model import chance_pool
from cloneprobe.evidence.stream import bounded_chance_pool


def test_wilson_interval_matches_the_closed_form():
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 0.0)


def test_bootstrap_ratio_resamples_tasks_not_samples():
    # One task holds every hit: resampling tasks makes the interval wide, as it should be.
    clusters = [(10, 10)] + [(0, 10)] * 9
    rate, low, high = bootstrap_ratio(clusters, seed=1)
    assert rate == pytest.approx(0.1)
    assert low == 0.0 and high >= 0.3
    assert bootstrap_ratio([]) == (0.0, 0.0, 0.0)


def _choices_bootstrap_ratio(clusters, resamples, seed):
    """The estimates as `rng.choices` draws them (how bootstrap_ratio computed them before)."""
    rng, estimates = random.Random(seed), []
    for _ in range(resamples):
        drawn = rng.choices(clusters, k=len(clusters))
        trials = sum(t for _, t in drawn)
        estimates.append(sum(h for h, _ in drawn) / trials if trials else 0.0)
    estimates.sort()
    return percentile_interval(estimates, 0.95)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_bootstraps_draw_exactly_what_random_choices_draws(seed):
    """The resampling without `choices`' lists gives the same intervals to the last digit,
    trials of unequal size and empty clusters included."""
    draw = random.Random(100 + seed)
    clusters = [(h, h + draw.randint(0, 40)) for h in (draw.randint(0, 30) for _ in range(164))]
    clusters[3] = (0, 0)
    rate, low, high = bootstrap_ratio(clusters, resamples=500, seed=seed)
    assert rate == sum(h for h, _ in clusters) / sum(t for _, t in clusters)
    assert (low, high) == _choices_bootstrap_ratio(clusters, 500, seed)
    first = [draw.random() < 0.3 for _ in range(120)]
    second = [draw.random() < 0.5 for _ in range(120)]
    diffs = [int(a) - int(b) for a, b in zip(first, second, strict=True)]
    rng = random.Random(seed)
    estimates = sorted(sum(rng.choices(diffs, k=120)) / 120 for _ in range(300))
    assert bootstrap_difference(first, second, resamples=300, seed=seed)[1:] == (
        percentile_interval(estimates, 0.95))


def test_a_rate_of_none_or_all_is_not_certain_the_interval_is_wilsons_over_the_tasks():
    """Every resample of 0 hits is 0: the percentile bootstrap said [0, 0] for 0 of 4 tasks'
    samples, certainty it does not have; the interval is Wilson's over the 4 tasks."""
    assert bootstrap_ratio([(0, 2)] * 4) == (0.0, 0.0, pytest.approx(wilson_interval(0, 4)[1]))
    rate, low, high = bootstrap_ratio([(3, 3)] * 5)
    assert rate == 1.0 and high == 1.0 and low == pytest.approx(wilson_interval(5, 5)[0])


def test_verdicts_stored_before_evidence_are_judged_again(tmp_path):
    path = tmp_path / "old.sqlite"
    benchmark = load_humaneval()
    task = benchmark.get("HumanEval/0")
    program = task.prompt + task.canonical_solution
    samples = [SampleProgram(1, "HumanEval/0", program)]
    settings = DetectionSettings(DetectorConfig())
    keys = {1: inputs_key(CanonicalFragments(benchmark), settings, samples[0])}
    with closing(sqlite3.connect(path)) as db:
        # a store written by the detector before evidence: keyed by inputs, no answer column
        db.executescript(
            "CREATE TABLE detections (sample_id INTEGER NOT NULL, detector_key TEXT NOT NULL, "
            "clone_type TEXT, similarity INTEGER, trivial_type TEXT, pairs TEXT NOT NULL, "
            "inputs_key TEXT, PRIMARY KEY (sample_id, detector_key));"
        )
        db.execute("INSERT INTO detections VALUES (1, ?, NULL, NULL, NULL, '[]', ?)",
                    (settings.key, keys[1]))  # fmt: skip
        db.commit()
        assert DetectionStore(db).matching(settings.key, keys) == {}
        verdict = detect_samples(db, benchmark, settings, samples)[1]
        assert verdict.clone_type == "1" and verdict.answer["verbatim"] == 1.0
        assert DetectionStore(db).matching(settings.key, keys)[1].answer == verdict.answer
        stored = json.loads(db.execute("SELECT answer FROM detections").fetchone()[0])
        assert stored["function"] == "has_close_elements"


def test_the_streamed_chance_pool_is_the_pool_of_all_samples_and_stays_bounded():
    # tasks arrive in runs, as the streamed audit reads them; a late task must still get its
    # share, and no task keeps more than the pool needs of it
    samples = [SimpleNamespace(task_id=f"T{t % 7}", program=f"p{n}")
               for n, t in enumerate([0] * 300 + [1] * 40 + list(range(7)) * 30)]  # fmt: skip
    everything = [(s.task_id, s.program) for s in samples]
    expected = sorted(everything[i] for i in chance_pool(everything, size=64))
    kept = bounded_chance_pool(samples, size=64)
    assert sorted(kept[i] for i in chance_pool(kept, size=64)) == expected
    assert len(kept) <= 64 + 7
