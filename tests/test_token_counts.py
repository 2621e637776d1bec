"""Token counts per sample: the server's own count when it answers one sample at a time, and
shares marked as estimates when a request holds several."""

from __future__ import annotations

import itertools

from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.generation import Plan, SampleStore, SamplingSettings, library_versions, run_plan
from cloneprobe.generation.backends import GenerationRequest, GenerationResult
from cloneprobe.generation.backends.openai_backend import OpenAIBackend
from cloneprobe.generation.runner import sample_token_counts

LENGTHS = (24, 108, 30)


LENGTHS = (24, 108, 30)


def sized_responder():
    """The i-th text the server writes has LENGTHS[i % 3] words (the test server counts words
    as tokens)."""
    counter = itertools.count()

    def respond(kind, prompt, index, body):
        return "    return 1\n" + " ".join(["x"] * (LENGTHS[next(counter) % 3] - 2)) + "\n"

    return respond


def stored_tokens(tmp_path, n_mode: str) -> list[tuple[int, int | None]]:
    humaneval = load_humaneval()
    plan = Plan([load_prompt_set("original", humaneval)], humaneval, (0.8,), 3,
                SamplingSettings(max_new_tokens=500), frozenset({"HumanEval/0"}))  # fmt: skip
    with OpenAITestServer(sized_responder(), n_mode=n_mode) as server:
        backend = OpenAIBackend("m", base_url=server.base_url, backoff=0.01, timeout=5.0,
                                concurrency=1)  # fmt: skip
        with SampleStore(tmp_path / "s.sqlite") as store:
            run_plan("m", backend, plan, store, library_versions())
            rows = store.db.execute(
                "SELECT completion_tokens, tokens_estimated FROM samples ORDER BY sample_index"
            ).fetchall()
    return rows


def test_each_sample_stores_its_own_token_count_when_the_server_answers_one_at_a_time(tmp_path):
    # llama.cpp-like: n > 1 refused, so each request's usage is one sample's own count
    assert stored_tokens(tmp_path, "refuse") == [(24, 0), (108, 0), (30, 0)]


def test_a_request_of_several_samples_gives_shares_marked_as_estimates(tmp_path):
    rows = stored_tokens(tmp_path, "openai")
    assert sum(tokens for tokens, _ in rows) == sum(LENGTHS)  # nothing lost to rounding
    assert {estimated for _, estimated in rows} == {1}


def test_backend_counts_per_text_are_used_exactly():
    request = GenerationRequest(0, "p", 3, 0.8, 0.95, 128, (), "completion")
    result = GenerationResult(request, ["a", "b", "c"], ["stop"] * 3, 30, 162,
                              text_tokens=list(LENGTHS))  # fmt: skip
    assert sample_token_counts(result) == (list(LENGTHS), False)
