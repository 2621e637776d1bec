"""compute_signals on a real SQLite store, scoring through the local OpenAI-compatible server:
every signal per task, the relative views, and resuming from what the store already has."""

from __future__ import annotations

import pytest
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.generation import SampleStore, StoredSample
from cloneprobe.signals import SIGNALS
from cloneprobe.signals.flow import compute_signals
from cloneprobe.signals.scoring import ScorerFactory, ScorerOptions
from cloneprobe.signals.store import SignalStore

HUMANEVAL = load_humaneval()
TASKS = ("HumanEval/2", "HumanEval/4", "HumanEval/7")
MODEL = "openai:test-model"


def program(task_id: str, index: int) -> str:
    """The canonical for even indices, something else for odd ones."""
    task = HUMANEVAL.get(task_id)
    assert task is not None
    if index % 2 == 0:
        return task.prompt + task.canonical_solution
    return task.prompt + f"    return {index}\n"


def fill(store: SampleStore, n: int = 4) -> None:
    rows = []
    for prompt_set in ("original", "fixed"):
        for task_id in TASKS:
            for temperature, count in ((0.8, n), (0.0, 1)):
                for index in range(count):
                    rows.append(
                        StoredSample(
                            model=MODEL,
                            settings_key="k1",
                            prompt_set=prompt_set,
                            variant=prompt_set,
                            task_id=task_id,
                            temperature=temperature,
                            sample_index=index,
                            mode="completion",
                            program=program(task_id, index if temperature else 0),
                        )
                    )
    store.add(rows)


def run(store, server, reference=None, names=tuple(SIGNALS), progress=None):
    prompt_sets = [load_prompt_set(n, HUMANEVAL) for n in ("original", "fixed")]
    factory = ScorerFactory(ScorerOptions(base_url=server.base_url, api_key="k"))
    return compute_signals(
        store, HUMANEVAL, [MODEL], prompt_sets, names, factory, progress, reference
    )


def completions(server) -> int:
    return sum(1 for r in server.requests if r["path"] == "/v1/completions")


def test_every_signal_per_task_with_the_fixed_and_reference_views(tmp_path):
    with (
        OpenAITestServer(prompt_logprobs="echo") as server,
        SampleStore(tmp_path / "s.sqlite") as store,
    ):
        fill(store)
        advanced = []
        rows = run(store, server, reference="openai:reference", progress=advanced.append)
    assert sum(advanced) == len(rows) == 2 * len(TASKS) * 2  # sets x tasks x temperatures
    hot = [r for r in rows if r.temperature == 0.8]
    for row in hot:
        assert set(row.scores) == set(SIGNALS)
        for name in ("perplexity", "zlib", "min_k"):
            assert row.scores[name].available, row.scores[name].reason
        assert not row.scores["min_k_plus_plus"].available
        # two of four samples copy the canonical, which the greedy (index 0) copies too
        assert row.scores["cdd"].value == pytest.approx(0.5)
        assert row.scores["cdd"].detail["greedy"] == "temperature 0 sample"
        assert row.scores["surface"].value == pytest.approx(1.0)
        # the reference model is the same server: its likelihoods are the target's exactly
        assert row.relative["reference"]["min_k"] == pytest.approx(0.0)
    original = [r for r in hot if r.prompt_set == "original"]
    assert all("fixed" in r.relative for r in original)
    assert all("fixed" not in r.relative for r in hot if r.prompt_set == "fixed")
    # HumanEval/2's fixed prompt differs from the original: the views are real differences
    task2 = next(r for r in original if r.task_id == "HumanEval/2")
    assert task2.relative["fixed"]["perplexity"] is not None
    cold = [r for r in rows if r.temperature == 0.0]
    assert all(not r.scores["cdd"].available for r in cold)


def test_rows_finish_all_along_not_only_when_the_last_signal_starts(tmp_path):
    """Progress advances a row once its last score is in: each chunk of rows gets every signal
    before the next chunk starts, so the first rows are done after a fraction of the work (a
    loop over signals first kept the bar at 0 until the last signal's turn)."""
    import sqlite3

    from cloneprobe.signals.flow import CHUNK

    path = tmp_path / "s.sqlite"
    tasks = [f"HumanEval/{i}" for i in range(2 * CHUNK)]
    stored_at_first_advance = []
    with (
        OpenAITestServer(prompt_logprobs="echo") as server,
        SampleStore(path) as store,
    ):
        store.add([
            StoredSample(model=MODEL, settings_key="k1", prompt_set="original",
                         variant="original", task_id=task_id, temperature=0.8, sample_index=i,
                         mode="completion", program=HUMANEVAL.get(task_id).prompt + "    pass\n")
            for task_id in tasks for i in range(3)
        ])  # fmt: skip

        def advanced(count: int) -> None:
            if count and not stored_at_first_advance:
                with sqlite3.connect(path) as db:
                    (done,) = db.execute("SELECT COUNT(*) FROM signal_scores").fetchone()
                stored_at_first_advance.append(done)

        prompt_sets = [load_prompt_set("original", HUMANEVAL)]
        factory = ScorerFactory(ScorerOptions(base_url=server.base_url, api_key="k"))
        rows = compute_signals(store, HUMANEVAL, [MODEL], prompt_sets, tuple(SIGNALS), factory,
                               advanced)  # fmt: skip
    assert len(rows) == len(tasks)
    everything = len(tasks) * len(SIGNALS)
    assert stored_at_first_advance and stored_at_first_advance[0] <= everything // 2, (
        stored_at_first_advance, everything)


def test_a_second_run_reads_the_store_and_asks_the_server_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    with OpenAITestServer(prompt_logprobs="echo") as server:
        with SampleStore(path) as store:
            fill(store)
            first = run(store, server, names=("min_k", "cdd"))
            stored = SignalStore(store.db).count()
        asked = completions(server)
        with SampleStore(path) as store:
            second = run(store, server, names=("min_k", "cdd"))
            assert SignalStore(store.db).count() == stored
        assert completions(server) == asked  # no probe, no scoring: nothing was missing
    assert asked > 0
    assert [r.scores["min_k"].value for r in first] == [r.scores["min_k"].value for r in second]
    assert [r.scores["cdd"].value for r in first] == [r.scores["cdd"].value for r in second]


def test_new_samples_are_scored_again_and_old_scores_kept(tmp_path):
    with (
        OpenAITestServer(prompt_logprobs="echo") as server,
        SampleStore(tmp_path / "s.sqlite") as store,
    ):
        fill(store, n=4)
        before = {
            (r.prompt_set, r.task_id, r.temperature): r for r in run(store, server, names=("cdd",))
        }
        fill(store, n=6)  # samples 4 and 5 added: 0, 2, 4 copy the canonical
        after = run(store, server, names=("cdd",))
    for row in after:
        if row.temperature == 0.8:
            assert row.samples == 6
            assert row.scores["cdd"].value == pytest.approx(0.5)
            assert row.scores["cdd"].detail["samples"] == 6
            assert before[(row.prompt_set, row.task_id, 0.8)].scores["cdd"].detail["samples"] == 4


def test_a_server_that_cannot_score_leaves_likelihood_not_available_and_stores_nothing_for_it(
    tmp_path,
):
    with (
        OpenAITestServer(prompt_logprobs="refuse") as server,
        SampleStore(tmp_path / "s.sqlite") as store,
    ):
        fill(store)
        rows = run(store, server, names=("perplexity", "surface"))
        kept = {row[0] for row in store.db.execute("SELECT signal FROM signal_scores")}
    assert kept == {"surface"}
    for row in rows:
        assert row.scores["perplexity"].value is None
        assert "does not give prompt log-probs" in (row.scores["perplexity"].reason or "")
