"""Progress is visible when output is piped, and samples over the size cap are refused before
they are parsed (from a file: an error naming the line; from the store: left out and said)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.generation import SampleStore, StoredSample

ENV = {"OPENAI_API_KEY": "", "HF_HUB_OFFLINE": "1"}


def test_progress_is_printed_as_plain_lines_when_stderr_is_piped(tmp_path):
    samples = tmp_path / "s.jsonl"
    task = load_humaneval().get("HumanEval/0")
    samples.write_text(json.dumps({"task_id": task.task_id, "completion":
                                   task.canonical_solution}) + "\n")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "cloneprobe", "detect", str(samples), "--model", "m",
         "--temperature", "0.2", "--store", str(tmp_path / "s.sqlite")],
        capture_output=True, text=True, timeout=120, env={**os.environ, **ENV},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "detecting: 0/1 started (0 s)" in lines
    assert any(line.startswith("detecting: 1/1 finished") for line in lines)
    assert "\x1b" not in done.stderr


def test_a_stored_sample_over_the_cap_is_left_out_and_said(tmp_path):
    task = load_humaneval().get("HumanEval/0")
    huge = task.prompt + task.canonical_solution + "#" * 1_100_000 + "\n"
    with SampleStore(tmp_path / "s.sqlite") as store:
        store.add([
            StoredSample("m", "k", "original", "original", task.task_id, 0.2, index,
                         program=program, completion="x")
            for index, program in enumerate([task.prompt + task.canonical_solution, huge])
        ])  # fmt: skip
    result = CliRunner().invoke(main, ["detect", str(tmp_path / "s.sqlite"), "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["groups"][0]["samples"] == 1
    assert report["skipped"] == {"over the 1,000,000 byte size cap": 1}
    assert "1 samples left out of the report: over the 1,000,000 byte size cap" in result.stderr


def test_the_file_size_cap_can_be_raised(tmp_path):
    task = load_humaneval().get("HumanEval/0")
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": task.task_id, "completion":
                                   task.canonical_solution + "#" * 2000}) + "\n")  # fmt: skip
    args = ["detect", str(samples), "--model", "m", "--temperature", "0.2", "--store",
            str(tmp_path / "s.sqlite"), "--max-sample-bytes"]  # fmt: skip
    refused = CliRunner().invoke(main, [*args, "1000"], env=ENV)
    assert refused.exit_code == 2 and "over the 1,000 byte cap" in refused.stderr
    assert CliRunner().invoke(main, [*args, "5000"], env=ENV).exit_code == 0
