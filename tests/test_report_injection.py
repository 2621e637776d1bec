"""Reports cannot be injected: model names and sample text planted with markup, escapes,
formulas and LaTeX commands come out inert in the terminal, HTML, Markdown, LaTeX, CSV and
JSON, and the report files are written whole (temporary name, then rename)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.reports.files import write_atomically

MODEL = ('=HYPERLINK("http://evil","x") gpt[b]-4[i]o [/red] <script>alert(1)</script> '
         '\x1b[31m| \\input{/etc/passwd}')
PAYLOAD = ("'[/red] [bold]x[/bold] \\x1b[31m <script>alert(2)</script> \\\\input{/etc/passwd} "
           "=HYPERLINK(1) | ` * _'")  # fmt: skip
ENV = {"OPENAI_API_KEY": "", "HF_HUB_OFFLINE": "1", "COLUMNS": "300"}


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("injection")
    task = load_humaneval().get("HumanEval/0")
    body = task.canonical_solution.replace(
        "    return False", f"    note = {PAYLOAD}\n    note = '\x1b[31m'\n    return False"
    )
    samples = tmp / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": body,
                                   "model": MODEL, "temperature": 0.2}) + "\n")  # fmt: skip
    result = CliRunner().invoke(main, [
        "detect", str(samples), "--store", str(tmp / "s.sqlite"), "--report", str(tmp / "r"),
        "--evidence", "--threshold", "0.5", "--rename", "none",
    ], env=ENV)  # fmt: skip
    assert result.exit_code == 0, result.output
    return tmp / "r", result


def test_the_planted_sample_is_a_clone_so_its_text_reaches_every_format(injected):
    folder, _ = injected
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["groups"][0]["model"] == MODEL  # JSON keeps the text exactly (escaped)
    assert report["evidence"] and any("HYPERLINK" in line for line in
                                      report["evidence"][0]["compared"]["sample"])  # fmt: skip


def test_the_terminal_shows_markup_literally_and_no_escape_sequence(injected):
    _, result = injected
    assert "\x1b" not in result.output
    assert "gpt[b]-4[i]o [/red]" in result.output  # not swallowed as markup
    assert "\\x1b[31m" in result.output  # the escape shown, not executed


def test_html_escapes_tags(injected):
    folder, _ = injected
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "\x1b" not in html


def test_markdown_cells_cannot_break_the_table_or_inject_html(injected):
    folder, _ = injected
    markdown = (folder / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown and "\x1b" not in markdown
    row = next(line for line in markdown.splitlines() if "HYPERLINK" in line)
    assert "\\[b\\]" in row and "\\|" in row
    header = next(line for line in markdown.splitlines() if line.startswith("| model"))
    assert row.replace("\\|", "").count("|") == header.count("|")


def test_latex_has_no_live_command_and_no_control_character(injected):
    folder, _ = injected
    latex = (folder / "table6.tex").read_text(encoding="utf-8")
    assert "\\input" not in latex and "\x1b" not in latex
    assert "<script>alert(1)</script>" in latex  # harmless in LaTeX, kept as text
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in latex  # the command shown as text


def test_csv_cells_starting_like_a_formula_are_text(injected):
    folder, _ = injected
    with (folder / "groups.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["model"].startswith("'=HYPERLINK(")
    assert "\x1b" not in rows[0]["model"]
    assert float(rows[0]["temperature"]) == 0.2  # numbers stay numbers


def test_the_full_evidence_is_in_json_lines_beside_the_report(injected):
    folder, _ = injected
    lines = (folder / "evidence.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["model"] for line in lines] == [MODEL] * len(lines) != []


def test_a_failed_report_write_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old", encoding="utf-8")

    def pieces():
        yield "new, half"
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_atomically(path, pieces())
    assert path.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_report_files_are_renamed_into_place(tmp_path, monkeypatch):
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append((Path(a), Path(b))),
                                                     real_replace(a, b))[1])  # fmt: skip
    write_atomically(tmp_path / "report.md", "text")
    ((source, target),) = renamed
    assert target == tmp_path / "report.md" and source.parent == tmp_path
    assert source.name.startswith(".report.md.")
