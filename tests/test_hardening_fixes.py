"""Small fixes, each with the test that failed before it: per-sample token counts, the
bootstrap percentile index, LaTeX headings keeping variant names, custom-threshold tables."""

from __future__ import annotations

import itertools
import json
import random

from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.audit.stats import bootstrap_difference
from cloneprobe.benchmarks import load_humaneval, load_prompt_set
from cloneprobe.cli import main
from cloneprobe.generation import Plan, SampleStore, SamplingSettings, library_versions, run_plan
from cloneprobe.generation.backends import GenerationRequest, GenerationResult
from cloneprobe.generation.backends.openai_backend import OpenAIBackend
from cloneprobe.generation.runner import sample_token_counts
from cloneprobe.reports.files import render_latex

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


def test_latex_headings_keep_the_case_of_variant_names():
    group = {"label": "m", "temperature": 0.2, "tasks_with_clone": {"1": 1, "2": 1, "3": 1}}
    report = {"profile": "default", "groups": [{**group, "prompt_set": "original"},
                                                {**group, "prompt_set": "fixed:P1"}]}  # fmt: skip
    latex = render_latex(report)
    assert "Fixed:P1" in latex and "Fixed:p1" not in latex


def test_a_custom_threshold_gives_type_3_counts(tmp_path):
    task = load_humaneval().get("HumanEval/0")
    edited = task.canonical_solution.replace("distance < threshold", "threshold > distance")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": edited}) + "\n")
    result = CliRunner().invoke(main, [
        "detect", str(samples), "--model", "m", "--temperature", "0.2", "--threshold", "0.2",
        "--json", "--store", str(tmp_path / "s.sqlite")])  # fmt: skip
    assert result.exit_code == 0, result.output
    (group,) = json.loads(result.stdout)["groups"]
    assert group["tasks_with_clone"]["3"] == 1
