"""`cloneprobe execute`, `cloneprobe audit --execute` and the correctness table of
`cloneprobe report`: the real CLI, real sandboxed runs, a SQLite store in tmp_path and, for the
audit, the local OpenAI-compatible test server.

Every expected figure is worked out by hand from the sample table below.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from openai_test_server import OpenAITestServer

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None}
LOOP = "    while True:\n        pass\n"
CORRECTNESS_HEADING = "pass@k (percent) beside memorization"


def canonical(task: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{task}").canonical_solution


# (task, completion, passes, reason): two samples per task, in file order. HumanEval/0 and /4
# answered with their canonical are Type-1 clones under the default profile; nothing of
# HumanEval/9's is a clone.
SAMPLES = [
    (0, canonical(0), True, "passed"),
    (0, canonical(0), True, "passed"),
    (4, canonical(4), True, "passed"),
    (4, "    return 0.0\n", False, "failed: AssertionError"),
    (9, LOOP, False, "timeout"),
    (9, "    return []\n", False, "failed: AssertionError"),
]
EXTRA = (12, "    return max(strings, key=len) if strings else None\n", True, "passed")
"""Not the canonical of HumanEval/12 (which picks the first longest), but it passes its tests."""


def write_samples(path: Path, samples) -> Path:
    lines = [
        json.dumps({"task_id": f"HumanEval/{task}", "completion": text})
        for task, text, _, _ in samples
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ok(*args: str):
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result


def executions(store: Path) -> dict[tuple[str, int], tuple[int, str, float]]:
    """(task, sample index) -> (passed, reason, seconds), straight from the SQLite file."""
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute(
            "SELECT s.task_id, s.sample_index, e.passed, e.reason, e.seconds "
            "FROM executions e JOIN samples s ON s.id = e.sample_id"
        ).fetchall()
    return {
        (task, index): (passed, reason, seconds) for task, index, passed, reason, seconds in rows
    }


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the markdown table under `## heading`."""
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


class TableAfterHeading(HTMLParser):
    """Collects the cell texts of the first table after the <h2> whose text is `heading`."""

    def __init__(self, heading: str):
        super().__init__()
        self.heading, self.state, self.text = heading, "looking", ""
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        self.text = "" if tag in ("h2", "td", "th") else self.text
        if tag == "table" and self.state == "found":
            self.state = "table"
        elif tag == "tr" and self.state == "table":
            self.rows.append([])

    def handle_data(self, data):
        self.text += data

    def handle_endtag(self, tag):
        if tag == "h2" and self.state == "looking" and self.text.strip() == self.heading:
            self.state = "found"
        elif tag == "table" and self.state == "table":
            self.state = "done"
        elif tag in ("td", "th") and self.state == "table":
            self.rows[-1].append(self.text.strip())


def html_table(html: str, heading: str) -> list[list[str]]:
    parser = TableAfterHeading(heading)
    parser.feed(html)
    return parser.rows


# --- cloneprobe execute -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """`execute samples.jsonl --json` twice on one store, then once more with an extra sample,
    then `report` into a folder."""
    root = tmp_path_factory.mktemp("execute")
    store = root / "store.sqlite"
    args = ["--model", "m", "--temperature", "0.8", "--store", str(store), "--json"]
    args += ["--exec-timeout", "1", "--workers", "2"]
    samples = write_samples(root / "samples.jsonl", SAMPLES)
    first = json.loads(ok("execute", str(samples), *args).stdout)
    rows_first = executions(store)
    again = json.loads(ok("execute", str(samples), *args).stdout)
    rows_again = executions(store)
    more = write_samples(root / "more.jsonl", [*SAMPLES, EXTRA])
    extended = json.loads(ok("execute", str(more), *args).stdout)
    rows_extended = executions(store)
    ok("report", "--store", str(store), "--report", str(root / "report"))
    return {
        "first": first,
        "rows_first": rows_first,
        "again": again,
        "rows_again": rows_again,
        "extended": extended,
        "rows_extended": rows_extended,
        "report": root / "report",
    }


def test_execute_reports_passed_counts_and_pass_at_1(executed):
    (group,) = executed["first"]["groups"]
    assert (group["model"], group["temperature"], group["prompt_set"]) == ("m", 0.8, "original")
    correctness = group["correctness"]
    assert (correctness["tasks"], correctness["samples"], correctness["passed"]) == (3, 6, 3)
    assert correctness["pass@1"] == 50.0  # (2/2 + 1/2 + 0/2) / 3
    assert "pass@3" not in correctness and "pass@10" not in correctness  # n = 2


def test_execute_splits_pass_at_1_by_clone_and_decontaminates(executed):
    correctness = executed["first"]["groups"][0]["correctness"]
    # tasks 0 and 4 hold a Type-1 clone (their canonicals), task 9 none
    assert correctness["with_clone"] == {"tasks": 2, "pass@1": 75.0}
    assert correctness["without_clone"] == {"tasks": 1, "pass@1": 0.0}
    for level in "123":
        assert correctness["decontaminated"][level] == {"tasks": 1, "pass@1": 0.0, "drop": 50.0}


def test_execute_gives_each_sample_its_outcome_and_reason(executed):
    outcomes = {
        (s["task_id"], s["sample"]): (s["passed"], s["reason"])
        for s in executed["first"]["samples"]
    }
    expected = {}
    for task, _, passes, reason in SAMPLES:
        index = sum(1 for key in expected if key[0] == f"HumanEval/{task}")
        expected[(f"HumanEval/{task}", index)] = (passes, reason)
    assert outcomes == expected


def test_execute_stores_one_execution_row_per_sample(executed):
    rows = executed["rows_first"]
    assert len(rows) == len(SAMPLES)
    assert {key: (bool(p), r) for key, (p, r, _) in rows.items()} == {
        ("HumanEval/0", 0): (True, "passed"),
        ("HumanEval/0", 1): (True, "passed"),
        ("HumanEval/4", 0): (True, "passed"),
        ("HumanEval/4", 1): (False, "failed: AssertionError"),
        ("HumanEval/9", 0): (False, "timeout"),
        ("HumanEval/9", 1): (False, "failed: AssertionError"),
    }


def test_the_infinite_loop_is_stopped_by_the_exec_timeout(executed):
    _, reason, _ = executed["rows_first"][("HumanEval/9", 0)]
    assert reason == "timeout"


def test_exec_timeout_decides_whether_a_slow_correct_sample_passes(tmp_path):
    """A correct answer that sleeps 0.1 s per call (HumanEval/0's tests call it 7 times, 0.7 s
    in all): a timeout under --exec-timeout 0.5, a pass under --exec-timeout 10 (the flag
    reaches the sandbox)."""
    slow = "    import time\n    time.sleep(0.1)\n" + canonical(0)
    samples = write_samples(tmp_path / "slow.jsonl", [(0, slow, True, "passed")])
    reasons = {}
    for limit in ("0.5", "10"):
        store = tmp_path / f"s{limit}.sqlite"
        ok("execute", str(samples), "--model", "m", "--temperature", "0.2", "--store",
           str(store), "--exec-timeout", limit, "--json")  # fmt: skip
        with closing(sqlite3.connect(store)) as db:
            (reasons[limit],) = db.execute("SELECT reason FROM executions").fetchone()
    assert reasons == {"0.5": "timeout", "10": "passed"}


def test_executing_again_runs_nothing_new(executed):
    assert executed["rows_again"] == executed["rows_first"]  # same reasons, same seconds
    assert executed["again"]["groups"] == executed["first"]["groups"]


def test_executing_a_file_with_one_more_sample_runs_only_that_sample(executed):
    rows = executed["rows_extended"]
    assert len(rows) == len(SAMPLES) + 1
    assert rows[("HumanEval/12", 0)][:2] == (1, "passed")
    del rows[("HumanEval/12", 0)]
    assert rows == executed["rows_first"]
    correctness = executed["extended"]["groups"][0]["correctness"]
    # task 12 has one sample: pass@1 = (100 + 50 + 0 + 100)/4
    assert (correctness["tasks"], correctness["samples"], correctness["passed"]) == (4, 7, 4)
    assert correctness["pass@1"] == 62.5
    assert correctness["without_clone"] == {"tasks": 2, "pass@1": 50.0}


def test_report_after_execute_shows_the_correctness_table_in_markdown(executed):
    markdown = (executed["report"] / "report.md").read_text(encoding="utf-8")
    assert f"## {CORRECTNESS_HEADING}" in markdown
    (row,) = table_rows(markdown, CORRECTNESS_HEADING)
    # model, temperature, prompts, samples passed/run, pass@1, @3, @10, no clone, with clone,
    # w/o T1, w/o T1-2, w/o T1-3 (drop): 4 tasks, 7 samples after the extra one
    assert row == ["m", "0.8", "original", "4/7", "62.5", "-", "-", "50.0", "75.0", "50.0",
                   "50.0", "50.0 (12.5)"]  # fmt: skip


def test_report_after_execute_shows_the_correctness_table_in_html(executed):
    html = (executed["report"] / "report.html").read_text(encoding="utf-8")
    rows = html_table(html, CORRECTNESS_HEADING)
    assert rows[0][:5] == ["model", "temperature", "prompts", "samples passed/run", "pass@1"]
    assert rows[1] == ["m", "0.8", "original", "4/7", "62.5", "-", "-", "50.0", "75.0", "50.0",
                       "50.0", "50.0 (12.5)"]  # fmt: skip
    assert len(rows) == 2


def test_report_json_after_execute_holds_the_correctness(executed):
    report = json.loads((executed["report"] / "report.json").read_text(encoding="utf-8"))
    (group,) = report["groups"]
    assert group["correctness"] == executed["extended"]["groups"][0]["correctness"]


# --- cloneprobe audit --execute ---------------------------------------------------------------

JUNK = "    return None\n"
AUDIT_TASKS, AUDIT_N = 3, 2


def audit_responder(kind, prompt, index, body):
    """HumanEval/0: canonical (Type-1, passes); /1: junk (fails); /2: canonical, which is
    trivial (`return number % 1.0`: no clone counted) and passes."""
    assert kind == "completion", kind
    for task, text in ((0, canonical(0)), (1, JUNK), (2, canonical(2))):
        if f"def {HUMANEVAL.get(f'HumanEval/{task}').entry_point}(" in prompt:
            return text
    raise AssertionError(f"unexpected prompt {prompt[:80]!r}")


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    store, plain_store = root / "store.sqlite", root / "plain.sqlite"
    with OpenAITestServer(audit_responder) as server:
        common = ["audit", "--model", "openai:test", "--base-url", server.base_url]
        common += ["--limit", str(AUDIT_TASKS), "-n", str(AUDIT_N), "--prompts", "original"]
        common += ["--temperature", "0.2", "--json"]
        plain = json.loads(ok(*common, "--store", str(plain_store)).stdout)
        report = json.loads(ok(*common, "--store", str(store), "--execute").stdout)
    ok("report", "--store", str(store), "--report", str(root / "report"))
    return {"plain": plain, "report": report, "folder": root / "report", "store": store}


def test_audit_without_execute_reports_no_correctness(audited):
    (group,) = audited["plain"]["groups"]
    assert group["correctness"] is None
    assert all("passed" not in s for s in audited["plain"]["samples"])


def test_audit_with_execute_reports_pass_at_1_beside_the_clones(audited):
    (group,) = audited["report"]["groups"]
    assert group["tasks_with_clone"] == {"1": 1, "2": 1, "3": 1}  # HumanEval/0 only
    assert group["tasks_trivial_only"] == 1  # HumanEval/2
    correctness = group["correctness"]
    assert (correctness["tasks"], correctness["samples"], correctness["passed"]) == (3, 6, 4)
    assert correctness["pass@1"] == 66.67  # (100 + 0 + 100)/3
    assert correctness["with_clone"] == {"tasks": 1, "pass@1": 100.0}
    assert correctness["without_clone"] == {"tasks": 2, "pass@1": 50.0}
    assert correctness["decontaminated"]["1"] == {"tasks": 2, "pass@1": 50.0, "drop": 16.67}


def test_audit_with_execute_gives_each_sample_its_outcome(audited):
    outcomes = {(s["task_id"], s["passed"], s["reason"]) for s in audited["report"]["samples"]}
    assert outcomes == {
        ("HumanEval/0", True, "passed"),
        ("HumanEval/1", False, "failed: AssertionError"),
        ("HumanEval/2", True, "passed"),
    }
    assert len(executions(audited["store"])) == AUDIT_TASKS * AUDIT_N


def test_report_after_audit_with_execute_shows_the_correctness_table(audited):
    markdown = (audited["folder"] / "report.md").read_text(encoding="utf-8")
    (row,) = table_rows(markdown, CORRECTNESS_HEADING)
    assert row == ["openai:test", "0.2", "original", "4/6", "66.7", "-", "-", "50.0", "100.0",
                   "50.0", "50.0", "50.0 (16.7)"]  # fmt: skip
    html = (audited["folder"] / "report.html").read_text(encoding="utf-8")
    assert html_table(html, CORRECTNESS_HEADING)[1] == row


def test_the_report_names_the_isolation_the_samples_ran_under(executed):
    isolation = executed["first"]["settings"]["execution"]["isolation"]
    assert sum(isolation.values()) == len(SAMPLES)
    assert {name.removesuffix("+rlimits") for name in isolation} <= {"namespaces", "guard"}
