"""Auditing a large store without a model: detect, aggregate and report, timed, with the peak
memory of the process, at two store sizes (memory must not grow with the number of samples).

A synthetic store is built straight through the store API (one run, samples inserted in large
transactions): per task, samples that copy the canonical (1 in 10), copy it with a renamed
variable (1 in 10), or are another task's canonical (the rest). Then `cloneprobe detect STORE
--report DIR` runs in a child process; its wall time and peak RSS (getrusage of the child) are
printed, with the report's sizes.

    python perf/audit_scale.py                       # 100,000 and 200,000 samples
    python perf/audit_scale.py --sizes 5000 20000    # quicker
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.generation import SampleStore, StoredSample, library_versions


def build_store(path: Path, samples: int) -> float:
    """A store of `samples` samples spread evenly over the 164 tasks; returns seconds taken."""
    started = time.monotonic()
    tasks = load_humaneval().tasks
    with SampleStore(path) as store:
        run_id = store.start_run("synthetic", {"synthetic": True}, library_versions())
        batch: list[StoredSample] = []
        for number in range(samples):
            task = tasks[number % len(tasks)]
            index = number // len(tasks)
            if index % 10 == 0:
                body = task.canonical_solution
            elif index % 10 == 1:
                body = task.canonical_solution.replace("return", "return  ")
            else:
                body = tasks[(number * 7 + 3) % len(tasks)].canonical_solution
            batch.append(StoredSample(
                model="synthetic", settings_key="imported", prompt_set="original",
                variant="original", task_id=task.task_id, temperature=0.8, sample_index=index,
                completion=body, program=task.prompt + body, form="continuation", run_id=run_id,
            ))  # fmt: skip
            if len(batch) == 5000:
                store.add(batch)
                batch = []
        store.add(batch)
        store.end_run(run_id)
    return time.monotonic() - started


def audit(path: Path, report: Path) -> tuple[float, float, str]:
    """`cloneprobe detect` on the store in a child process: (seconds, peak RSS MB, stderr)."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen(
            [sys.executable, "-m", "cloneprobe", "detect", str(path), "--report", str(report)],
            stdout=subprocess.DEVNULL, stderr=errors, text=True,
        )  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)  # this child's own resource usage
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        errors.seek(0)
        stderr = errors.read()
    if child.returncode != 0:
        raise SystemExit(f"detect failed: {stderr[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 200_000])
    args = parser.parse_args()
    rows = []
    for size in sorted(args.sizes):
        with tempfile.TemporaryDirectory() as folder:
            store, report = Path(folder) / "store.sqlite", Path(folder) / "report"
            built = build_store(store, size)
            seconds, peak, stderr = audit(store, report)
            sizes = {p.name: p.stat().st_size / 1e6 for p in report.iterdir()}
            progress_lines = sum(1 for line in stderr.splitlines() if "detecting:" in line)
            rows.append((size, built, seconds, peak, sizes, progress_lines))
            print(f"{size:,} samples: store built in {built:.1f} s; detect+report "
                  f"{seconds:.1f} s ({size / seconds:,.0f} samples/s), peak RSS {peak:,.0f} MB; "
                  f"report.html {sizes['report.html']:.1f} MB, "
                  f"report.json {sizes['report.json']:.1f} MB, evidence.jsonl "
                  f"{sizes['evidence.jsonl']:.1f} MB; {progress_lines} progress lines",
                  flush=True)  # fmt: skip
    if len(rows) > 1:
        (small, *_, small_peak, _, _), (large, *_, large_peak, _, _) = rows[0], rows[-1]
        print(f"samples x{large / small:.1f}, peak RSS x{large_peak / small_peak:.2f}")


if __name__ == "__main__":
    main()
