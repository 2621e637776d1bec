"""The plan's estimate is measured, never guessed: a first run with no history of the model in
the store says so, then prints the seconds per sample it measured on its first wave of samples
and the time left (`measured: ...`); a second run estimates from the store's history. Through
the CLI against the OpenAI test server; the warm-up's arithmetic on a given clock."""

from __future__ import annotations

import json
import re
from dataclasses import astuple

from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.reports.durations import measured_text
from cloneprobe.warmup import Measured, WarmUp, first_wave

HUMANEVAL = load_humaneval()
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None, "COLUMNS": "200"}
MEASURED = re.compile(r"measured: ([\d.e+-]+) s/sample for openai:test on this machine \(the "
                      r"first (\d+) back took ([\d.]+) s\); about \d+ (s|min|h) left for the "
                      r"other (\d+)")  # fmt: skip


def canonical(kind, prompt, index, body) -> str:
    text = prompt if isinstance(prompt, str) else json.dumps(prompt)
    task = next((t for t in HUMANEVAL.tasks if f"def {t.entry_point}(" in text), None)
    return task.canonical_solution if task is not None else "    return None\n"


def audit(server, store, limit: int):
    result = CliRunner().invoke(main, [
        "audit", "--model", "openai:test", "--base-url", server.base_url, "--mode",
        "completion", "--store", str(store), "--limit", str(limit), "-n", "1", "--prompts",
        "original", "--max-new-tokens", "64", "--concurrency", "1", "--json"], env=ENV)  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stderr


def test_a_first_run_measures_its_estimate_and_a_second_uses_the_stores_history(tmp_path):
    store = tmp_path / "s.sqlite"
    with OpenAITestServer(canonical) as server:
        first = audit(server, store, 3)
        second = audit(server, store, 4)
    # no history: no figure in the plan, and none guessed
    assert "estimate: none yet (no history of this model in the store)" in first
    assert "s/sample" not in first.split("measured:")[0]
    # one request at a time: the first wave is one sample, then the other 2 are estimated
    (found,) = MEASURED.findall(first)
    rate, made, elapsed, _, left = found
    assert (int(made), int(left)) == (1, 2)
    assert abs(float(rate) - float(elapsed) / int(made)) <= 0.06 * float(rate) + 0.05
    # the measured line comes after the plan and before the run finishes
    assert first.index("audit: plan") < first.index("measured:") < first.index(
        "openai:test: 3/3 finished")
    # the second run: the store's history is the estimate, and nothing is measured again
    assert "over 3 earlier samples in the store" in second
    assert "estimate: about" in second
    assert "measured:" not in second


def test_the_warm_up_waits_for_the_first_wave_and_says_the_time_left_once():
    now = [100.0]
    warm = WarmUp(wave=16, clock=lambda: now[0])
    assert warm.measure(already=0, planned=6560, made=0) is None  # started: the model loaded
    now[0] = 110.0
    assert warm.measure(0, 6560, 15) is None  # the first batch is not all back
    now[0] = 114.0
    measured = warm.measure(0, 6560, 16)
    assert measured == Measured(14.0 / 16, 16, 14.0, 6544)
    assert measured_text("embedded", *astuple(measured)) == (
        "measured: 0.88 s/sample for embedded on this machine (the first 16 back took 14.0 s); "
        "about 1.6 h left for the other 6,544")  # fmt: skip
    assert warm.measure(0, 6560, 32) is None  # said once


def test_a_plan_of_one_wave_has_nothing_left_to_estimate():
    now = [0.0]
    warm = WarmUp(wave=16, clock=lambda: now[0])
    warm.measure(0, 16, 0)
    now[0] = 14.0
    assert warm.measure(0, 16, 16) is None


def test_the_first_wave_is_a_batch_or_the_concurrent_requests():
    class Local:
        batch_size = 16

    class Server:
        concurrency = 4

    assert first_wave(Local(), n=20) == 16
    assert first_wave(Server(), n=5) == 20
    assert first_wave(object(), n=3) == 1


def test_a_plan_of_one_batch_does_not_promise_a_measured_line(tmp_path):
    """The walkthrough's 8 samples on a batch of 16 were promised `measured: ...`, which a
    plan of one wave never prints (its first samples back are all of them)."""
    with OpenAITestServer(canonical) as server:
        result = CliRunner().invoke(main, [
            "audit", "--model", "openai:test", "--base-url", server.base_url, "--mode",
            "completion", "--store", str(tmp_path / "s.sqlite"), "--limit", "3", "-n", "1",
            "--prompts", "original", "--max-new-tokens", "64", "--concurrency", "4", "--json"],
            env=ENV)  # fmt: skip
    assert result.exit_code == 0, result.output
    plan = " ".join(result.stderr.split())
    assert "the plan is one batch (3 samples a model)" in plan
    assert "printed then" not in plan and "measured:" not in plan
