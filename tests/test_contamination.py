"""Joining a scan with the audit: pass@k and the clone evidence split into tasks found in the
corpus and tasks not found, through `cloneprobe report --contamination`."""

from __future__ import annotations

import json

from click.testing import CliRunner
from scan_corpora import host_documents, write_files

from cloneprobe.audit.audit_report import empty_report
from cloneprobe.audit.contamination import permutation_p_value, split_by_contamination
from cloneprobe.benchmarks import canonical_source, load_humaneval
from cloneprobe.cli import main

HUMANEVAL = load_humaneval()


def ok(*args: str):
    result = CliRunner().invoke(main, list(args), env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 0, result.output
    return result


def test_report_splits_pass_at_1_and_clones_by_what_the_scan_found(tmp_path):
    # samples: HumanEval/0 answered with its canonical twice (passes, Type-1), HumanEval/4 once
    # right and once wrong, HumanEval/9 wrong twice
    samples = [(0, HUMANEVAL.get("HumanEval/0").canonical_solution)] * 2 + [
        (4, HUMANEVAL.get("HumanEval/4").canonical_solution), (4, "    return 0.0\n"),
        (9, "    return []\n"), (9, "    return []\n")]  # fmt: skip
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"HumanEval/{t}", "completion": c}) + "\n"
                            for t, c in samples))  # fmt: skip
    store = tmp_path / "store.sqlite"
    ok("execute", str(path), "--model", "m", "--temperature", "0.8", "--store", str(store),
       "--workers", "2")  # fmt: skip
    # a corpus holding HumanEval/0's canonical: the scan finds that task only
    docs = host_documents(3)
    corpus = write_files(tmp_path / "corpus", docs)
    (corpus / "x" / "solutions.py").parent.mkdir()
    (corpus / "x" / "solutions.py").write_text(canonical_source(HUMANEVAL.get("HumanEval/0")))
    ok("scan", str(corpus), "--output", str(tmp_path / "scan"), "--workers", "1")
    report = json.loads(ok("report", "--store", str(store), "--json", "--contamination",
                           str(tmp_path / "scan")).stdout)  # fmt: skip
    split = report["contamination"]
    assert split["found_tasks"] == ["HumanEval/0"]
    (group,) = split["groups"]
    assert group["found"]["tasks"] == 1 and group["not_found"]["tasks"] == 2
    assert group["found"]["pass@1"] == 100.0 and group["not_found"]["pass@1"] == 25.0
    assert group["found"]["clone_rate"] == 1.0 and group["found"]["tasks_with_clones"] == 1
    assert group["pass@1_difference"] == 0.75 and 0 < group["pass@1_p_value"] <= 1
    text = ok("report", "--store", str(store), "--contamination", str(tmp_path / "scan")).stdout
    assert "Contamination split" in text


def test_a_folder_that_is_not_a_scan_is_named_in_the_error(tmp_path):
    import pytest

    from cloneprobe.audit.contamination import found_tasks
    from cloneprobe.scan.errors import ScanError

    with pytest.raises(ScanError, match=f"{tmp_path}: no summary.json"):
        found_tasks(tmp_path)


def test_permutation_test_separates_what_differs():
    assert permutation_p_value([1.0] * 12, [0.0] * 12) < 0.001
    assert permutation_p_value([1, 0] * 6, [0, 1] * 6) == 1.0
    assert permutation_p_value([], [1.0]) is None


def test_split_without_executions_reports_clone_rates_only():
    report = empty_report(samples=[
        {"model": "m", "temperature": 0.2, "prompt_set": "original", "task_id": "A",
         "clone_type": 1},
        {"model": "m", "temperature": 0.2, "prompt_set": "original", "task_id": "B",
         "clone_type": None}])  # fmt: skip
    (group,) = split_by_contamination(report, {"A"})["groups"]
    assert group["found"]["clone_rate"] == 1.0 and group["not_found"]["clone_rate"] == 0.0
    assert "pass@1" not in group["found"] and "pass@1_p_value" not in group
