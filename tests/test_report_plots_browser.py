"""The HTML report's plots in a real browser (headless Chromium, tests/browser.py): every plot
labels its axes and has a legend, plots whose points are tasks name tasks on the plot without
writing one name over another, and at a 1000-pixel window no plot (nor anything else) makes
the page scroll sideways. Skipped, with a message saying so, where no Chromium is installed."""

from __future__ import annotations

import json

import pytest
from browser import Browser
from test_report_browser import CHROMIUM, HUMANEVAL, ok, pytestmark  # noqa: F401 (skip rule)


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    """Two models at two temperatures (so the clone rate is plotted against temperature),
    original and fixed prompts, with signals (strip plots and original-against-fixed
    scatters); several tasks land on one spot of a scatter."""
    root = tmp_path_factory.mktemp("plots")
    rows = []
    for model, copies in (("model-a", (0, 9, 4)), ("model-b", (4,))):
        for temperature in (0.2, 0.8):
            for prompt_set in ("original", "fixed"):
                for task in (0, 4, 9, 12, 13):
                    text = (HUMANEVAL.get(f"HumanEval/{task}").canonical_solution
                            if task in copies else "    return None\n")  # fmt: skip
                    for completion in (text, "    return 0\n", "    x = 1\n    return x\n"):
                        rows.append({"task_id": f"HumanEval/{task}", "completion": completion,
                                     "model": model, "temperature": temperature,
                                     "prompt_set": prompt_set})  # fmt: skip
    samples = root / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = root / "s.sqlite"
    ok("detect", str(samples), "--store", str(store))
    ok("signals", "--store", str(store), "--signals", "cdd,surface", "--json")
    ok("report", "--store", str(store), "--report", str(root / "out"))
    return root / "out" / "report.html"


PLOTS = """Array.from(document.querySelectorAll('svg')).map(s => ({
  label: s.getAttribute('aria-label'),
  right: s.getBoundingClientRect().right,
  axes: Array.from(s.querySelectorAll('text.axis')).map(t => t.textContent),
  legend: s.querySelectorAll('.legend').length,
  tasks: Array.from(s.querySelectorAll('text')).filter(t => /HumanEval\\/\\d/.test(
    t.textContent)).map(t => { const r = t.getBoundingClientRect();
    return [t.textContent, r.left, r.top, r.right, r.bottom]; }),
}))"""


def overlapping(boxes) -> list[tuple[str, str]]:
    found = []
    for i, (a, *box_a) in enumerate(boxes):
        for b, *box_b in boxes[i + 1:]:
            if (box_a[0] < box_b[2] and box_b[0] < box_a[2] and box_a[1] < box_b[3]
                    and box_b[1] < box_a[3]):  # fmt: skip
                found.append((a, b))
    return found


def test_every_plot_labels_its_axes_has_a_legend_and_names_its_tasks(page_path):
    with Browser(CHROMIUM, 1000, 900) as page:
        page.open(page_path.as_uri())
        plots = page.evaluate(PLOTS)
    kinds = {p["label"] for p in plots}
    assert "clone rate against temperature" in kinds
    assert any(k.endswith("per task") for k in kinds)
    assert any("original against fixed prompts" in k for k in kinds)
    for plot in plots:
        # a strip plot's rows are named series (its legend), its one axis the values
        assert len(plot["axes"]) >= (1 if plot["label"].endswith("per task") else 2), plot
        assert plot["legend"] >= 1, plot["label"]
        if plot["label"] == "clone rate against temperature":
            assert "temperature" in plot["axes"] and any("%" in a for a in plot["axes"])
        else:  # points are tasks: tasks are named on the plot, no name over another
            assert plot["tasks"], plot["label"]
            assert overlapping(plot["tasks"]) == [], plot["label"]


def test_at_1000_pixels_no_plot_makes_the_page_scroll_sideways(page_path):
    with Browser(CHROMIUM, 1000, 900) as page:
        page.open(page_path.as_uri())
        width = page.evaluate("document.documentElement.clientWidth")
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"the page is {scroll - width} px wider than the window"
        rights = page.evaluate("Array.from(document.querySelectorAll('svg'))"
                               ".map(s => s.getBoundingClientRect().right)")  # fmt: skip
        assert rights and max(rights) <= width
