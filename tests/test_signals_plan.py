"""`cloneprobe signals` gives its plan the generation's treatment: an estimate before the work
(none yet on a store without signal history, saying how it will be measured; from the store's
history of signal scores on the next run), the rate measured on this machine once the first
chunk is scored, and piped progress lines with an ETA. Through the CLI on a SQLite store in
tmp_path, with the signals read from samples alone (CDD, surface: no model is loaded)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.signals.flow import CHUNK

HUMANEVAL = load_humaneval()


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args],
                              env={"OPENAI_API_KEY": None, "COLUMNS": "200"})  # fmt: skip


def store_of(tmp_path, tasks: int):
    rows = [{"task_id": t.task_id, "completion": completion}
            for t in HUMANEVAL.tasks[:tasks]
            for completion in (t.canonical_solution, "    return None\n", "    return 0\n")]
    path = tmp_path / f"samples{tasks}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = tmp_path / "s.sqlite"
    result = invoke("import", path, "--store", store, "--model", "m", "--temperature", 0.8)
    assert result.exit_code == 0, result.output
    return store


def plan_lines(stderr: str) -> list[str]:
    """The signals plan's lines (the indented ones under `plan` that start with `signals`)."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  signals "))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("  ")),
               len(lines))  # fmt: skip
    return [line.strip() for line in lines[start:end]]


def test_signals_plans_with_an_estimate_and_measures_its_first_chunk(tmp_path):
    tasks = 3 * CHUNK  # more than two chunks: the first is not timed, the second measured
    store = store_of(tmp_path, tasks)
    first = invoke("signals", "--store", store, "--signals", "cdd,surface", "--json")
    assert first.exit_code == 0, first.output
    plan = plan_lines(first.stderr)
    assert plan[0].startswith(f"signals cdd, surface on {3 * tasks} samples of m")
    assert plan[1].startswith("estimate: none yet (no signal history of these models in the "
                              "store)"), plan  # fmt: skip
    assert "measured: " in first.stderr and "s/task row for the signals" in first.stderr
    assert "signals: 0/" in first.stderr and "finished" in first.stderr
    # the next run on more tasks estimates from the scores the first one stored
    more = store_of(tmp_path, tasks + CHUNK)
    second = invoke("signals", "--store", more, "--signals", "cdd,surface", "--json")
    assert second.exit_code == 0, second.output
    plan = plan_lines(second.stderr)
    assert plan[1].startswith("estimate: about "), plan
    assert "earlier scores in the store" in plan[1]


def test_a_plan_of_one_chunk_says_nothing_is_measured_before_it_is_done(tmp_path):
    store = store_of(tmp_path, 2)
    result = invoke("signals", "--store", store, "--signals", "cdd", "--json")
    assert result.exit_code == 0, result.output
    plan = plan_lines(result.stderr)
    assert "the plan is one chunk of 2 task rows" in plan[1], plan
    assert "measured: " not in result.stderr
