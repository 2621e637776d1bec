"""`cloneprobe audit --signals` and `cloneprobe signals` through the command line, against the
local OpenAI-compatible server (which returns prompt log-probs with echo) and a real store."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli.main import main
from cloneprobe.signals import SIGNALS

HUMANEVAL = load_humaneval()
LIMIT, N = 3, 3
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}


def canonical_for_even(kind, prompt, index, body) -> str:
    """The canonical body for choice 0 and 2 of each prompt, `return None` otherwise."""
    task = next((t for t in HUMANEVAL.tasks[:LIMIT] if isinstance(prompt, str) and
                 prompt.startswith(t.prompt[:40])), None)  # fmt: skip
    if task is not None and index % 2 == 0:
        return task.canonical_solution
    return "    return None\n"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), env=ENV)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """An audit with --signals (bare), the `signals` command on its store twice, and the
    server's request counts."""
    store = tmp_path_factory.mktemp("signals") / "store.sqlite"
    with OpenAITestServer(canonical_for_even, prompt_logprobs="echo") as server:
        audit = invoke(
            "audit", "--model", "openai:test", "--base-url", server.base_url, "--store",
            str(store), "--limit", str(LIMIT), "-n", str(N), "--temperature", "0.8",
            "--temperature", "0", "--signals", "--json",
        )  # fmt: skip
        after_audit = len(server.requests)
        again = invoke("signals", str(store), "--base-url", server.base_url, "--json")
        after_again = len(server.requests)
        text = invoke("signals", str(store), "--base-url", server.base_url,
                      "--signals", "min_k,cdd")  # fmt: skip
    return {"audit": audit, "again": again, "text": text, "store": store,
            "after_audit": after_audit, "after_again": after_again}  # fmt: skip


def test_audit_signals_json_carries_a_tasks_list_with_clones_and_every_signal(audited):
    result = audited["audit"]
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    tasks = report["tasks"]
    # 3 tasks x 2 prompt sets x 2 temperatures
    assert len(tasks) == LIMIT * 2 * 2
    assert report["signals"]["names"] == list(SIGNALS)
    assert report["signals"]["higher_means_memorized"]["perplexity"] is False
    hot = [t for t in tasks if t["temperature"] == 0.8]
    for entry in hot:
        assert set(entry["signals"]) == set(SIGNALS)
        assert entry["signals"]["min_k"]["available"] is True
        assert entry["signals"]["min_k"]["detail"]["scorer"].startswith("openai:test@")
        assert entry["signals"]["min_k_plus_plus"]["available"] is False
        # 2 of 3 samples are the canonical, and so is the temperature-0 answer
        assert entry["signals"]["cdd"]["value"] == pytest.approx(2 / 3)
        assert entry["signals"]["surface"]["value"] == pytest.approx(1.0)
        if entry["task_id"] == "HumanEval/2":  # `return number % 1.0`: under the token floor
            assert entry["clones"]["best_type"] is None and entry["clones"]["trivial_only"]
        else:
            assert entry["clones"]["best_type"] == "1"
            assert entry["clones"]["samples_with_clone"]["1"] == 2
    originals = [t for t in hot if t["prompt_set"] == "original"]
    assert all("fixed" in t["relative"] for t in originals)
    # the combined verdict: clone evidence decides; the likelihood, here relative to the fixed
    # prompts only (no reference model), is shown in the reasons but decides nothing
    verdicts = {t["task_id"]: t for t in originals}
    assert verdicts["HumanEval/0"]["clones"]["tier"] == "evidence"
    assert verdicts["HumanEval/0"]["verdict"] == "memorized"
    assert verdicts["HumanEval/2"]["verdict"] == "no evidence"
    for entry in originals:
        reasons = " | ".join(entry["verdict_reasons"])
        assert "no reference model" in reasons and "original over fixed prompts" in reasons
    groups = report["signals"]["groups"]
    assert {(g["temperature"], g["prompt_set"]) for g in groups} == {
        (0.8, "original"), (0.8, "fixed"), (0.0, "original"), (0.0, "fixed")
    }  # fmt: skip


def test_the_signals_command_reuses_every_stored_score(audited):
    result = audited["again"]
    assert result.exit_code == 0, result.output
    first = json.loads(audited["audit"].stdout)["tasks"]
    second = json.loads(result.stdout)["tasks"]
    key = lambda t: (t["temperature"], t["prompt_set"], t["task_id"])  # noqa: E731
    assert {key(t): t["signals"] for t in first} == {key(t): t["signals"] for t in second}
    assert audited["after_again"] == audited["after_audit"]  # nothing asked of the server


def test_the_signals_command_prints_a_per_task_table(audited):
    result = audited["text"]
    assert result.exit_code == 0, result.output
    assert "Per task: clone evidence and signals" in result.stdout
    assert "HumanEval/2" in result.stdout and "Type-1" in result.stdout
    assert "min-k%" in result.stdout and "cdd" in result.stdout


def test_unknown_signal_names_and_a_lone_reference_model_are_one_red_line(tmp_path):
    bad = invoke("signals", str(tmp_path / "none.sqlite"), "--signals", "min_k,bogus")
    assert bad.exit_code == 2
    assert "unknown signal 'bogus'" in bad.stderr
    assert "Traceback" not in bad.output
    lone = invoke("audit", "--limit", "1", "-n", "1", "--reference-model", "embedded",
                  "--store", str(tmp_path / "s.sqlite"))  # fmt: skip
    assert lone.exit_code == 2
    assert "add --signals" in lone.stderr


def test_a_split_signal_table_repeats_temperature_and_prompts_in_every_piece(audited):
    """`report` prints the stored signals (it printed none in the terminal); at 80 columns the
    median-signal table is split, and each piece must repeat model, T and prompts, or its rows
    (one per temperature and prompt set) cannot be told apart (the second piece showed the
    model only)."""
    result = CliRunner().invoke(main, ["report", "--store", str(audited["store"])],
                                env={**ENV, "COLUMNS": "80"})  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    heads = [lines[n + 1] for n, line in enumerate(lines) if line.startswith("┏")
             and any("Memorization signals" in x for x in lines[max(0, n - 6):n])]
    assert len(heads) >= 2, result.stdout  # split in pieces
    for number, line in enumerate(lines):
        if line.startswith("┡") and any("Memorization signals" in x
                                         for x in lines[max(0, number - 12):number]):
            header = " ".join(lines[max(0, number - 4):number]).split()
            assert {"model", "T", "prompts"} <= set(header), header


def test_the_signals_plan_counts_samples_and_scored_groups_not_tasks(audited):
    """The plan said 'on 12 tasks' samples' for 3 tasks (12 = tasks x prompt sets x
    temperatures): it names the samples, and what the count is of."""
    plan = audited["audit"].stderr
    samples, groups = LIMIT * N * 2 * 2, LIMIT * 2 * 2  # two temperatures, two prompt sets
    assert (f"on {samples} samples of openai:test, scored per task, prompt set and temperature "
            f"({groups} in all") in " ".join(plan.split()), plan
