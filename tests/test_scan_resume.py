"""Resume: a rank that did not finish (no completion marker) runs again, the finished ones do
not, and the merged result is the one an uninterrupted scan gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from scan_corpora import host_documents, planted_corpus, write_jsonl

from cloneprobe.cli import main


def scan(corpus, output) -> dict:
    result = CliRunner().invoke(main, ["scan", str(corpus), "--output", str(output),
                                       "--workers", "1", "--ranks", "4", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def comparable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "throughput"}


def test_only_the_unfinished_rank_runs_again_with_identical_results(tmp_path):
    docs, _ = planted_corpus(count=16, per_kind=2)
    corpus = write_jsonl(tmp_path / "corpus", docs, shards=4)
    clean = scan(corpus, tmp_path / "clean")
    out = tmp_path / "out"
    first = scan(corpus, out)
    assert first["throughput"]["ranks_run"] == 4
    # what a rank killed mid-way leaves: no completion marker, no results, a partial progress
    (out / "datatrove" / "completions" / "00002").unlink()
    (out / "matches" / "00002.jsonl").unlink()
    (out / "tallies" / "00002.json").unlink()
    (out / "progress" / "00002.json").write_text(json.dumps(
        {"rank": 2, "documents": 1, "characters": 10, "candidates": 0, "matches": 0,
         "seconds": 1.0, "cpu_seconds": 1.0, "done": False}))  # fmt: skip
    resumed = scan(corpus, out)
    assert resumed["throughput"]["ranks_run"] == 1
    assert comparable(resumed) == comparable(clean) == comparable(first)
    again = scan(corpus, out)  # everything done: nothing runs, same answer
    assert again["throughput"]["ranks_run"] == 0 and comparable(again) == comparable(clean)


@pytest.mark.slow(reason="about 8 s: kills a scan and resumes it")
def test_killed_scan_resumes_where_it_stopped(tmp_path):
    docs = host_documents(40) * 6
    corpus = write_jsonl(tmp_path / "corpus", docs, shards=6)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "cloneprobe", "scan", str(corpus), "--output", str(out),
               "--workers", "1", "--ranks", "6", "--json"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)  # fmt: skip
    completions = out / "datatrove" / "completions"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (completions.is_dir() and any(completions.iterdir())):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_before = len(list(completions.iterdir()))
    assert 0 < done_before < 6, "the scan finished before it could be killed: use a bigger corpus"
    resumed = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(resumed.stdout)
    assert summary["throughput"]["ranks_run"] == 6 - done_before
    clean = subprocess.run([*command[:6], str(tmp_path / "clean"), *command[7:]],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert comparable(json.loads(clean.stdout)) == comparable(summary)
