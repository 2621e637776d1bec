"""report.html in a real browser (headless Chromium over the DevTools protocol, tests/browser.py):
the first screen answers the question (the summary sentence and the verdict counts), sorting a
per-task column works, and a clone pair shows the code as written. Skipped, with a message
saying so, where no Chromium is installed (`apt-get install chromium`).

With CLONEPROBE_SCREENSHOTS=DIR the screenshots (first screen, a clone pair) are kept in DIR;
docs/img/ holds them (`CLONEPROBE_SCREENSHOTS=docs/img pytest tests/test_report_browser.py`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser import Browser, find_chromium
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (looked for $CHROMIUM, chromium, google-chrome): the report was "
    "NOT checked in a browser; install it with `apt-get install chromium`",
)
HUMANEVAL = load_humaneval()


def canonical(task: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{task}").canonical_solution


def ok(*args: str):
    result = CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    """Two models, original and fixed prompts: copies of the canonical (HumanEval/0, /9 and
    /4's short one), a renamed copy, wrong answers; samples detected, signals computed, and
    `cloneprobe report` writing every format."""
    root = tmp_path_factory.mktemp("browser")
    rows = []
    for model, copies in (("model-a", (0, 9, 4)), ("model-b", (4,))):
        for prompt_set in ("original", "fixed"):
            for task in (0, 4, 9, 12, 13):
                text = canonical(task) if task in copies else "    return None\n"
                if prompt_set == "fixed" and task == 9:
                    text = canonical(9).replace("running_max", "best")  # a renamed copy
                rows += [{"task_id": f"HumanEval/{task}", "completion": text, "model": model,
                          "temperature": 0.2, "prompt_set": prompt_set},
                         {"task_id": f"HumanEval/{task}", "completion": "    return 0\n",
                          "model": model, "temperature": 0.2, "prompt_set": prompt_set}]
    samples = root / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = root / "s.sqlite"
    ok("detect", str(samples), "--store", str(store))
    ok("signals", "--store", str(store), "--signals", "cdd,surface", "--json")
    ok("report", "--store", str(store), "--report", str(root / "out"))
    report = json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))
    return root / "out" / "report.html", report


def on_first_screen(page: Browser, selector: str) -> bool:
    return page.evaluate(
        f"(() => {{const e = document.querySelector({json.dumps(selector)}); if (!e) return false;"
        "const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && "
        "r.bottom <= innerHeight;})()"
    )


def column(page: Browser, heading: str) -> list[str]:
    return page.evaluate(
        "(() => {const t = document.querySelector('table.tasks');"
        "const i = Array.from(t.rows[0].cells).findIndex(c => c.textContent === "
        f"{json.dumps(heading)}); return Array.from(t.tBodies[0].rows).map(r => "
        "r.cells[i].textContent);})()"
    )


def click_heading(page: Browser, heading: str) -> None:
    page.evaluate(
        "Array.from(document.querySelectorAll('table.tasks th')).find(c => c.textContent === "
        f"{json.dumps(heading)}).click()"
    )


def keep(path: Path) -> None:
    folder = os.environ.get("CLONEPROBE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / path.name).write_bytes(path.read_bytes())


def test_the_first_screen_answers_the_question_with_the_verdict_counts(report_page, tmp_path):
    html, report = report_page
    with Browser(CHROMIUM, 1280, 800) as page:
        page.open(html.as_uri())
        assert on_first_screen(page, "#summary p.answer")
        answer = page.evaluate("document.querySelector('#summary p.answer').textContent")
        # the sentence counts each model's memorized tasks as the report's per-task verdicts do
        # (model-b's copy is one model-a, another family, writes too: convergent, not memorized)
        memorized: dict[str, set] = {}
        for entry in report["tasks"]:
            if entry["verdict"] == "memorized":
                memorized.setdefault(entry["model"], set()).add(entry["task_id"])
        assert memorized, "the fixture must have memorized tasks"
        expected = ", ".join(f"{m} for {len(t)} task(s)" for m, t in sorted(memorized.items()))
        assert answer.startswith(f"Evidence of memorization: {expected} reproduced")
        # the verdict counts, as the browser shows them, are the report's per-task verdicts
        assert on_first_screen(page, "#summary table")
        shown = page.evaluate(
            "Array.from(document.querySelectorAll('#summary table tr')).slice(1)"
            ".map(r => Array.from(r.cells).map(c => c.innerText))"
        )
        counted: dict[tuple, dict] = {}
        for task in report["tasks"]:
            key = (task["model"], f"{task['temperature']:g}", task["prompt_set"])
            counted.setdefault(key, {}).setdefault(task["verdict"], 0)
            counted[key][task["verdict"]] += 1
        assert len(shown) == len(counted) == 4
        for model, temperature, prompts, tasks, memorized, suspected, none, uninformative in shown:
            verdicts = counted[(model, temperature, prompts)]
            assert int(tasks) == sum(verdicts.values()) == 5
            assert int(memorized) == verdicts.get("memorized", 0)
            assert (int(suspected), int(none), int(uninformative)) == (
                verdicts.get("suspected", 0), verdicts.get("no evidence", 0),
                verdicts.get("uninformative", 0))  # fmt: skip
        assert any(row[0] == "model-a" and int(row[4]) > 0 for row in shown)  # copies shown
        # the strongest case links to its clone pair, which exists on the page
        target = page.evaluate("document.querySelector('ol.cases a').getAttribute('href')")
        assert page.evaluate(f"!!document.querySelector({json.dumps(target)})")
        keep(page.screenshot(tmp_path / "report-first-screen.png"))
    assert (tmp_path / "report-first-screen.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sorting_a_per_task_column_orders_its_rows(report_page):
    html, _ = report_page
    with Browser(CHROMIUM) as page:
        page.open(html.as_uri())
        assert column(page, "verdict")[0] == "memorized"  # the strongest claims first
        click_heading(page, "task")
        tasks = column(page, "task")
        number = [int(t.split("/")[1]) for t in tasks]
        assert number == sorted(number) and len(tasks) == 20  # HumanEval/4 before /12
        click_heading(page, "task")
        assert [int(t.split("/")[1]) for t in column(page, "task")] == sorted(number,
                                                                              reverse=True)
        click_heading(page, "surface")
        values = [float(v) for v in column(page, "surface")]
        assert values == sorted(values) and values[0] < values[-1]
        # every row stays one line high however long its reasons
        heights = page.evaluate("Array.from(document.querySelector('table.tasks').tBodies[0]"
                                ".rows).map(r => r.getBoundingClientRect().height)")
        assert max(heights) < 1.6 * min(heights)


def test_a_clone_pair_shows_the_code_and_folds_the_renamed_form(report_page, tmp_path):
    html, report = report_page
    renamed = next(i for i, p in enumerate(report["evidence"]) if p["type"] != "1")
    with Browser(CHROMIUM) as page:
        page.open(html.as_uri())
        pair = f"#pair-{renamed}"
        shown = page.evaluate(f"document.querySelector('{pair} table.code').innerText")
        assert "best = None" in shown and "running_max = None" in shown  # the code as written
        assert " . x (" not in shown
        folded = page.evaluate(f"document.querySelector('{pair} details.compared').open")
        assert folded is False
        compared = page.evaluate(f"document.querySelector('{pair} details.compared')"
                                 ".textContent")
        assert "x . x ( x )" in compared  # the renamed form is there, folded
        first = next(i for i, p in enumerate(report["evidence"]) if p.get("tier") == "evidence")
        keep(page.screenshot(tmp_path / "report-evidence-pair.png", f"#pair-{first}"))


def test_in_an_800_pixel_window_nothing_pushes_the_page_sideways(report_page):
    """Only the wide tables scroll, inside their own box: the 970-pixel strip plots (fixed
    width, no viewBox) and the summary's verdict table made the whole page scroll sideways
    at 800 pixels, cutting the summary's last columns at the edge of its box."""
    html, _ = report_page
    with Browser(CHROMIUM, 800, 900) as page:
        page.open(html.as_uri())
        assert page.evaluate("document.querySelectorAll('svg').length") > 0  # plots drawn
        overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the window"
        box = page.evaluate("document.querySelector('#summary').getBoundingClientRect().right")
        assert box <= 800
