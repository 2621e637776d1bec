"""`cloneprobe prompts`: list, show, diff, JSON and export."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cloneprobe.cli import main


def run(*args: str):
    return CliRunner().invoke(main, ["prompts", *args], catch_exceptions=False)


def test_lists_sets_and_the_issue_kinds_touched():
    result = run()
    assert result.exit_code == 0
    assert "original" in result.output and "fixed" in result.output
    assert "incorrect input/output example" in result.output


def test_json_gives_variants_and_counts():
    data = json.loads(run("--json").stdout)
    assert [(s["name"], s["variants"]) for s in data["sets"]] == [
        ("original", {"original": 164}),
        ("fixed", {"fixed": 164}),
    ]


def test_show_accepts_a_bare_index():
    result = run("--show", "47", "--prompts", "fixed")
    assert "def median" in result.output and "8.0" in result.output


def test_diff_shows_changes_and_why():
    result = run("--diff", "HumanEval/47")
    assert "-    15.0" in result.output and "+    8.0" in result.output
    assert "the canonical solution returns 8.0" in result.output


def test_export_writes_jsonl(tmp_path):
    out = tmp_path / "fixed.jsonl"
    result = run("--prompts", "fixed", "--export", str(out))
    assert result.exit_code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 164
    assert set(json.loads(lines[0])) == {"task_id", "variant", "prompt"}


def test_unknown_task_and_unknown_set_exit_with_code_2():
    runner = CliRunner()
    assert runner.invoke(main, ["prompts", "--show", "999"]).exit_code == 2
    assert runner.invoke(main, ["prompts", "--prompts", "nope"]).exit_code == 2
