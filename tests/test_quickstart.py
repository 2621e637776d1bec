"""The README's main command, as a user runs it: the embedded model, offline, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cloneprobe.reports.files import REPORT_FILES


@pytest.mark.slow(reason="about 35 s: the README's audit on the embedded model")
def test_audit_of_the_embedded_model_writes_a_report_for_both_prompt_sets(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["HF_HUB_OFFLINE"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "cloneprobe", "audit", "-n", "1", "--max-new-tokens", "32",
         "--limit", "2", "--store", str(tmp_path / "s.sqlite"),
         "--report", str(tmp_path / "report")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert {p.name for p in (tmp_path / "report").iterdir()} == REPORT_FILES
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert [(g["model"], g["prompt_set"], g["tasks"], g["samples"]) for g in report["groups"]] == [
        ("embedded", "original", 2, 2),
        ("embedded", "fixed", 2, 2),
    ]
    assert {s["task_id"] for s in report["samples"]} == {"HumanEval/0", "HumanEval/1"}
    assert (tmp_path / "s.sqlite").exists()
