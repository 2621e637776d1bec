"""The per-task view of the reports: one row per model x temperature x prompt set x task with
pass@1, clone evidence, every signal and the combined verdict, in JSON, the terminal, Markdown
and HTML (sortable, with distribution plots and original-against-fixed plots), and hostile
task ids, model names and canonical literals kept inert. Built through the CLI on real stores
(sample files imported, executed in the sandbox, signals from samples)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli.main import main

ENV = {"OPENAI_API_KEY": "", "HF_HUB_OFFLINE": "1", "COLUMNS": "300"}
MODEL = "<img src=x onerror=alert(1)> m[b]"
EVIL_TASK = "<b>Evil</b>/0"
EVIL_CANONICAL = (
    "    tag = '<script>alert(3)</script>'\n    label = tag + str(x)\n    extra = label * 2\n"
    "    for item in range(3):\n        extra = extra + tag\n    return extra + label\n"
)


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A user benchmark whose task id and canonical literal are markup; a model named with
    markup whose first sample of each task copies the canonical."""
    tmp = tmp_path_factory.mktemp("hostile")
    tasks = [
        {"task_id": EVIL_TASK, "prompt": 'def f(x):\n    """Return a tagged string."""\n',
         "canonical_solution": EVIL_CANONICAL, "entry_point": "f",
         "test": "def check(candidate):\n    assert candidate(1)\n"},
        {"task_id": "Plain/1", "prompt": 'def g(y):\n    """Double."""\n',
         "canonical_solution": "    return y * 2 + y * 3 - y // 2 + (y % 5) * 7\n",
         "entry_point": "g",
         "test": "def check(candidate):\n    assert candidate(1) == 2\n"},
    ]  # fmt: skip
    samples = [{"task_id": t["task_id"], "model": MODEL, "temperature": 0.8,
                "completion": t["canonical_solution"] if i == 0 else "    return None\n"}
               for t in tasks for i in range(3)]  # fmt: skip
    bench = write_jsonl(tmp / "bench.jsonl", tasks)
    source = write_jsonl(tmp / "samples.jsonl", samples)
    store, folder = str(tmp / "s.sqlite"), tmp / "report"
    as_json = invoke("signals", source, "--store", store, "--benchmark", bench,
                     "--signals", "surface,cdd", "--report", str(folder), "--json")  # fmt: skip
    text = invoke("signals", store, "--benchmark", bench, "--signals", "surface,cdd")
    return json.loads(as_json.stdout), folder, text.output


def test_each_task_gets_its_verdict_from_clone_evidence_with_reasons(hostile):
    report, _, _ = hostile
    tasks = {t["task_id"]: t for t in report["tasks"]}
    assert set(tasks) == {EVIL_TASK, "Plain/1"}
    evil = tasks[EVIL_TASK]
    # a user benchmark has no panel and the report no other solver: the copy is clone
    # evidence, but convergence is not measured, so the verdict is suspected and says why
    assert evil["clones"]["tier"] == "evidence" and evil["verdict"] == "suspected"
    assert evil["verdict_reasons"][0].startswith("clone evidence: exact copy")
    assert any("convergence not measured" in r for r in evil["verdict_reasons"])
    # a short canonical with no names of its own, copied, is what any solver writes: no claim
    plain = tasks["Plain/1"]
    assert plain["clones"]["tier"] == "similar" and plain["verdict"] == "no evidence"
    # no reference model: the likelihood decides nothing, and says so
    assert any("bare likelihood is no evidence" in r for r in plain["verdict_reasons"])
    assert report["signals"]["verdict_rule"] == {"likelihood_signal": "min_k",
                                                 "reference_margin": 0.53}  # fmt: skip


def test_the_html_per_task_view_has_a_row_per_task_and_nothing_live(hostile):
    _, folder, _ = hostile
    page = (folder / "report.html").read_text(encoding="utf-8")
    view = page[page.index("Per task: pass@1") :]
    table = view[: view.index("</table>")]
    assert table.count("<tr>") == 1 + 2  # heading + one row per task
    assert "&lt;b&gt;Evil&lt;/b&gt;/0" in table and "suspected" in table
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in table  # the literal kept, as text
    assert "&lt;img src=x onerror=alert(1)&gt; m[b]" in table
    for live in ("<b>Evil", "<img src=x", "<script>alert(3)"):
        assert live not in page
    # the only script is the static sorter
    assert page.count("<script>") == 1 and "table.sortable" in page
    assert 'aria-label="surface per task"' in page  # the distribution plot
    assert "&lt;img src=x onerror=alert(1)&gt; m[b] t=0.8 original (2)" in page  # its label


def test_markdown_and_terminal_show_the_verdicts_and_the_calibration_state(hostile):
    _, folder, text = hostile
    markdown = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Per-task memorization verdict" in markdown
    assert "<img" not in markdown
    # the shipped calibration was measured under these settings: its rates are shown (a stale
    # one is said, not shown: tests/test_verdict.py)
    assert "not calibrated for these settings" not in markdown
    assert "false positives on held-out tasks" in markdown
    assert "suspected" in text and "Verdict rule: memorized = clone evidence" in text
    assert "<b>Evil</b>/0" in text  # the terminal shows the id literally


def test_original_against_fixed_is_plotted_and_pass_at_1_is_per_task(tmp_path):
    humaneval = load_humaneval()
    samples = [{"task_id": t, "model": "m", "temperature": 0.8,
                "completion": humaneval.get(t).canonical_solution if i != 1
                else "    return None\n"}
               for t in ("HumanEval/0", "HumanEval/1") for i in range(3)]  # fmt: skip
    source = write_jsonl(tmp_path / "he.jsonl", samples)
    store = str(tmp_path / "h.sqlite")
    invoke("detect", source, "--store", store, "--prompts", "original")
    invoke("detect", source, "--store", store, "--prompts", "fixed")
    invoke("execute", store)
    result = invoke("signals", store, "--signals", "surface", "--report", str(tmp_path / "r"),
                    "--json")  # fmt: skip
    tasks = json.loads(result.stdout)["tasks"]
    assert sorted((t["prompt_set"], t["task_id"]) for t in tasks) == [
        ("fixed", "HumanEval/0"), ("fixed", "HumanEval/1"),
        ("original", "HumanEval/0"), ("original", "HumanEval/1")]  # fmt: skip
    assert all(t["pass@1"] == pytest.approx(2 / 3) for t in tasks)  # 2 of 3 samples pass
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert 'aria-label="surface: original against fixed prompts"' in page
    assert '<td class="">0.67</td>' in page  # pass@1 in the task table


def test_report_renders_the_signals_and_verdicts_the_store_holds(tmp_path):
    """`signals` stores its scores; `report` (read-only, no model) brings back the same
    per-task signals and verdicts, in JSON and on the HTML page."""
    humaneval = load_humaneval()
    samples = [{"task_id": t, "model": "m", "temperature": 0.8,
                "completion": humaneval.get(t).canonical_solution if i == 0
                else "    return None\n"}
               for t in ("HumanEval/0", "HumanEval/9") for i in range(3)]  # fmt: skip
    source = write_jsonl(tmp_path / "he.jsonl", samples)
    store = str(tmp_path / "h.sqlite")
    computed = json.loads(invoke("signals", source, "--store", store, "--signals",
                                 "surface,cdd", "--json").stdout)  # fmt: skip
    reported = json.loads(invoke("report", "--store", store, "--json", "--report",
                                 str(tmp_path / "r")).stdout)  # fmt: skip
    assert reported["tasks"] == computed["tasks"] and len(reported["tasks"]) == 2
    assert reported["signals"]["names"] == ["cdd", "surface"]
    assert {t["verdict"] for t in reported["tasks"]} == {"memorized"}
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert 'aria-label="surface per task"' in page and "<th" in page and ">surface</th>" in page


def test_report_without_stored_signals_still_gives_each_task_its_verdict(tmp_path):
    humaneval = load_humaneval()
    samples = [{"task_id": "HumanEval/0", "model": "m", "temperature": 0.8,
                "completion": humaneval.get("HumanEval/0").canonical_solution}]
    source = write_jsonl(tmp_path / "he.jsonl", samples)
    store = str(tmp_path / "h.sqlite")
    reported = json.loads(invoke("detect", source, "--store", store, "--json", "--report",
                                 str(tmp_path / "r")).stdout)  # fmt: skip
    assert "tasks" not in reported and "signals" not in reported  # report.json as before
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert ("m at temperature 0.8, original prompts: 1 of 1 tasks memorized (95% CI 21-100% of "
            "such tasks): HumanEval/0") in page
    assert "each verdict rests on the clone evidence alone" in page
