"""Sandboxed execution throughput: the 164 HumanEval canonical solutions, each `--repeat` times,
judged against their tests by `--workers` threads sharing one `Sandbox`.

    python3 perf/execute_throughput.py                       # 164 x 5 = 820 runs, 2 workers
    python3 perf/execute_throughput.py --baseline 16f97e1    # and the sandbox of that commit
    python3 perf/execute_throughput.py --repeat 2 --workers 4 --json

With `--baseline COMMIT`, the `execution/` folder of that commit is extracted (`git archive`)
to a temporary folder and its `Sandbox` runs the same samples (as one program: sample, tests,
`check(...)`, which is how it judged them) in the same process, alternating rounds with the
current sandbox so that both see the same load; the ratio current/baseline is printed.

Printed, all measured in this run: samples executed, wall time, samples per second, the median
run, how many passed (every canonical solution should) with the reasons of any that did not,
and which isolation ran. Each sample is a fresh interpreter (and, with namespaces, fresh
namespaces), so the figure is dominated by process start-up and scales with workers up to the
cores.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.execution import Sandbox

REPOSITORY = Path(__file__).resolve().parent.parent


def load_baseline_sandbox(commit: str, folder: Path):
    """The `Sandbox` of `execution/` at `commit`, with the package it imports from, under a name
    of its own (`baseline_cloneprobe`) so that it never mixes with today's modules; the
    programs it starts in children are found by path inside the extracted tree."""
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", commit],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "baseline_cloneprobe").symlink_to(folder / "cloneprobe")
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("baseline_cloneprobe.execution.sandbox")
    finally:
        sys.path.remove(str(folder))
    return module.Sandbox()


def current_runner(sandbox: Sandbox) -> Callable:
    def run(task):
        program = task.prompt + task.canonical_solution
        return sandbox.run(program, task.test, task.entry_point, prelude=task.prompt)

    return run


def baseline_runner(sandbox) -> Callable:
    """A baseline whose `run` takes the test apart (as today's) or, before the harness held
    the test, one program with the test appended."""
    if "test" in inspect.signature(sandbox.run).parameters:
        return current_runner(sandbox)

    def run(task):
        program = task.prompt + task.canonical_solution
        return sandbox.run(f"{program}\n\n{task.test}\n\ncheck({task.entry_point})\n")

    return run


def measure_round(run: Callable, tasks: list, workers: int) -> tuple[float, list]:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run, tasks))
    return time.perf_counter() - started, results


def summarize(wall: float, results: list) -> dict:
    seconds = sorted(r.seconds for r in results)
    return {
        "executed": len(results),
        "passed": sum(r.ok for r in results),
        "failures": dict(Counter(r.reason for r in results if not r.ok)),
        "wall_seconds": round(wall, 3),
        "samples_per_second": round(len(results) / wall, 2),
        "median_run_seconds": round(seconds[len(seconds) // 2], 4),
    }


def measure(repeat: int, workers: int, baseline: str | None) -> dict:
    tasks = load_humaneval().tasks
    current = Sandbox()
    runners = {"current": current_runner(current)}
    with tempfile.TemporaryDirectory(prefix="cloneprobe-baseline-") as folder:
        if baseline:
            runners["baseline"] = baseline_runner(load_baseline_sandbox(baseline, Path(folder)))
        walls = {name: 0.0 for name in runners}
        results = {name: [] for name in runners}
        for _ in range(repeat):  # alternate, so that both see the same load
            for name, run in runners.items():
                wall, round_results = measure_round(run, tasks, workers)
                walls[name] += wall
                results[name] += round_results
    figures = {
        "tasks": len(tasks),
        "repeat": repeat,
        "workers": workers,
        "isolation": current.isolation,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "python": platform.python_version(),
        **{name: summarize(walls[name], results[name]) for name in runners},
    }
    if baseline:
        figures["baseline_commit"] = baseline
        figures["ratio"] = round(
            figures["current"]["samples_per_second"] / figures["baseline"]["samples_per_second"], 3
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="Rounds over the 164 tasks (5).")
    parser.add_argument("--workers", type=int, default=2, help="Sandboxed runs at once (2).")
    parser.add_argument("--baseline", metavar="COMMIT", help="Also measure this commit's sandbox.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON only.")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.workers < 1:
        parser.error("--repeat and --workers must be at least 1")
    figures = measure(args.repeat, args.workers, args.baseline)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"{figures['tasks']} HumanEval canonical solutions x {figures['repeat']} rounds, "
            f"{figures['workers']} workers, {figures['cpus']} CPUs (load average "
            f"{figures['load_average']:.1f}), Python {figures['python']}, "
            f"isolation: {figures['isolation']}"
        )
        for name in ("current", "baseline"):
            if name not in figures:
                continue
            f = figures[name]
            label = name if name == "current" else f"baseline ({figures['baseline_commit']})"
            median_ms = f["median_run_seconds"] * 1000
            print(
                f"{label:>20}: {f['samples_per_second']:6.1f} samples/s, "
                f"wall {f['wall_seconds']:.1f} s, median run {median_ms:.0f} ms, "
                f"passed {f['passed']}/{f['executed']}"
            )
            for reason, count in f["failures"].items():
                print(f"{'':>22}not passed x{count}: {reason}")
        if "ratio" in figures:
            print(f"{'current / baseline':>20}: {figures['ratio']:.2f}")
    every = [figures[n] for n in ("current", "baseline") if n in figures]
    return 0 if all(f["passed"] == f["executed"] for f in every) else 1


if __name__ == "__main__":
    sys.exit(main())
