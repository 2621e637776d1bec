"""Sandboxed execution throughput: the 164 HumanEval canonical solutions, each `--repeat` times,
run against their tests through `execute_samples` into a temporary SQLite store.

    python3 perf/execute_throughput.py                    # 164 x 10 = 1,640 runs, 2 workers
    python3 perf/execute_throughput.py --repeat 2 --workers 4
    python3 perf/execute_throughput.py --json

Printed, all measured in this run: the samples executed, the wall time, samples executed per
second, and how many passed (every canonical solution should), with the reasons of any that did
not. Each sample is a fresh interpreter in the sandbox (`unshare -n` where allowed), so the
figure is dominated by interpreter start-up and scales with the workers up to the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.execution import ExecutionStore, Sandbox, execute_samples


def measure(repeat: int, workers: int) -> dict:
    benchmark = load_humaneval()
    samples = [
        (number * len(benchmark) + index, task.task_id, task.prompt + task.canonical_solution)
        for number in range(repeat)
        for index, task in enumerate(benchmark.tasks)
    ]
    with (
        tempfile.TemporaryDirectory(prefix="cloneprobe-perf-") as folder,
        closing(sqlite3.connect(Path(folder) / "store.sqlite")) as db,
    ):
        started = time.perf_counter()
        executed = execute_samples(db, benchmark, samples, workers=workers)
        wall = time.perf_counter() - started
        results = ExecutionStore(db).results()
    failures = Counter(r.reason for r in results.values() if not r.passed)
    run_seconds = sorted(r.seconds for r in results.values())
    return {
        "tasks": len(benchmark),
        "repeat": repeat,
        "workers": workers,
        "samples": len(samples),
        "executed": executed,
        "passed": sum(1 for r in results.values() if r.passed),
        "failures": dict(failures),
        "wall_seconds": round(wall, 3),
        "samples_per_second": round(executed / wall, 2) if wall else None,
        "median_run_seconds": round(run_seconds[len(run_seconds) // 2], 4) if run_seconds else None,
        "network_namespace": Sandbox().isolate_network,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="Runs of each canonical (10).")
    parser.add_argument("--workers", type=int, default=2, help="Sandboxed processes at once (2).")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON only.")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.workers < 1:
        parser.error("--repeat and --workers must be at least 1")
    figures = measure(args.repeat, args.workers)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"{figures['executed']} samples executed ({figures['tasks']} HumanEval canonical "
            f"solutions x {figures['repeat']}) with {figures['workers']} workers "
            f"on {figures['cpus']} CPUs, Python {figures['python']}, network namespace: "
            f"{'yes' if figures['network_namespace'] else 'no'}"
        )
        print(f"wall time:          {figures['wall_seconds']:.2f} s")
        print(f"samples per second: {figures['samples_per_second']:.1f}")
        print(f"median run:         {figures['median_run_seconds'] * 1000:.0f} ms")
        print(f"passed:             {figures['passed']}/{figures['samples']}")
        for reason, count in figures["failures"].items():
            print(f"  not passed x{count}: {reason}")
    return 0 if figures["passed"] == figures["samples"] else 1


if __name__ == "__main__":
    sys.exit(main())
