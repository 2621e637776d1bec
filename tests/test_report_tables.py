"""The report's tables: LaTeX headings keep the case of variant names, and a custom clone
threshold gives its own Type-3 counts."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cloneprobe.audit.audit_report import empty_report
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.reports.files import render_latex

LENGTHS = (24, 108, 30)


def test_latex_headings_keep_the_case_of_variant_names():
    group = {"label": "m", "temperature": 0.2, "tasks_with_clone": {"1": 1, "2": 1, "3": 1}}
    report = empty_report(groups=[{**group, "prompt_set": "original"},
                                  {**group, "prompt_set": "fixed:P1"}])  # fmt: skip
    latex = render_latex(report)
    assert "Fixed:P1" in latex and "Fixed:p1" not in latex


def test_a_custom_threshold_gives_type_3_counts(tmp_path):
    task = load_humaneval().get("HumanEval/0")
    edited = task.canonical_solution.replace("distance < threshold", "threshold > distance")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": edited}) + "\n")
    result = CliRunner().invoke(main, [
        "detect", str(samples), "--model", "m", "--temperature", "0.2", "--threshold", "0.2",
        "--json", "--store", str(tmp_path / "s.sqlite")])  # fmt: skip
    assert result.exit_code == 0, result.output
    (group,) = json.loads(result.stdout)["groups"]
    assert group["tasks_with_clone"]["3"] == 1
