"""`cloneprobe prompts`: list, show, diff, JSON and export."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.benchmarks.prompts import fixed_records
from cloneprobe.cli import main


def run(*args: str):
    return CliRunner().invoke(main, ["prompts", *args], catch_exceptions=False)


def test_lists_sets_and_the_issue_kinds_touched():
    result = run()
    assert result.exit_code == 0
    assert "original" in result.output and "fixed" in result.output
    assert "disguised" in result.output  # a built-in set `--prompts disguised` samples
    assert "incorrect input/output example" in result.output


def test_json_gives_variants_and_counts():
    data = json.loads(run("--json").stdout)
    assert [(s["name"], s["variants"]) for s in data["sets"]] == [
        ("original", {"original": 164}),
        ("fixed", {"fixed": 164}),
        ("disguised", {"disguised": 164}),
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


def test_show_at_80_columns_wraps_long_prompt_lines_and_cuts_no_word():
    """HumanEval/116's prompt has lines over 80 characters; they were cropped ('according t',
    and the fixed prompt lost 'ascending order.')."""
    result = CliRunner().invoke(main, ["prompts", "--show", "116"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
    # a cut line goes on in a row marked CONTINUED (as --diff marks it): read without it
    shown = " ".join(result.output.replace("\u21aa ", "").split())
    fixed = next(r["prompt"] for r in fixed_records() if r["task_id"] == "HumanEval/116")
    for prompt in (load_humaneval().get("HumanEval/116").prompt, fixed):
        for line in prompt.splitlines():
            assert " ".join(line.split()) in shown, line


def test_diff_names_a_one_line_change_as_one_line_in_reading_order():
    result = run("--diff", "116")
    reasons = [line for line in result.output.splitlines() if line.startswith("  ")
               and "(line" in line]  # fmt: skip
    assert any("(line 6)" in line for line in reasons) and "6-6" not in result.output
    starts = [int(line.split("(line")[1].split(")")[0].lstrip("s ").split("-")[0])
              for line in reasons]  # fmt: skip
    assert starts == sorted(starts), reasons


def test_a_diff_line_wider_than_the_console_keeps_its_marker_on_every_row():
    """At 80 columns HumanEval/116's long removed and added lines wrapped with their rest on an
    unmarked row ("to", "ascending order."), which read as an unchanged line when piped."""
    import difflib

    from cloneprobe.reports.prompts_text import CONTINUED

    result = CliRunner().invoke(main, ["prompts", "--diff", "116"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()
    assert all(len(row) <= 80 for row in rows), result.stdout
    rebuilt: list[str] = []
    for row in rows:
        if row[1:].startswith(CONTINUED):
            assert rebuilt and rebuilt[-1][:1] == row[:1], row  # the marker of its line
            rebuilt[-1] += " " + row[1 + len(CONTINUED):]
        else:
            rebuilt.append(row)
    fixed = next(r["prompt"] for r in fixed_records() if r["task_id"] == "HumanEval/116")
    original = load_humaneval().get("HumanEval/116").prompt
    expected = list(difflib.unified_diff(original.splitlines(), fixed.splitlines(), "original",
                                         "fixed", lineterm="", n=2))  # fmt: skip
    assert any(len(line) > 80 for line in expected)  # the case needs a line to wrap
    squeeze = lambda line: line[:1] + " ".join(line[1:].split())  # noqa: E731
    assert [squeeze(x) for x in expected] == [squeeze(x) for x in rebuilt[1:len(expected) + 1]]
