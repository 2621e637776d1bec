"""How long the fast test suite takes, against a baseline checkout measured in the same run.

    python3 perf/suite_time.py                           # this checkout, once
    python3 perf/suite_time.py --baseline-rev main --runs 2
    python3 perf/suite_time.py --baseline /path/to/other/checkout --json

Each run is `python3 -m pytest -q -m "not slow" -p no:cacheprovider` in the checkout's folder
with the checkout first on PYTHONPATH (the suite's own settings: its `-n auto`).
With a baseline the two alternate (baseline, this, baseline, this, ...), so the machine's load
hits both alike. Printed per run: wall time, CPU time (user + sys of pytest and every process
it waited for: the workers, the CLI runs, the sandboxes), the 1-minute load average at start
and end, the cores the rest of the machine kept busy meanwhile (on average: /proc/stat's busy
time less the suite's CPU, over the wall time; 0 on a quiet machine), and pytest's last line;
then the medians and this checkout's ratio to the baseline.
`--baseline-rev` exports that git revision of this repository into a temporary folder (`git
archive`: the committed files only). `--clean-bytecode` removes every `__pycache__` folder of
both checkouts before each run, so that each run starts as a fresh clone does (the suite writes
bytecode caches since issue 24; a second run in one checkout reads them). The target (issue
24): at most 60 s wall on a quiet 2-core machine. The machine is rarely quiet: read the CPU
time and the ratio beside the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds() -> float | None:
    """CPU seconds every process of the machine spent busy so far (/proc/stat's all-CPU line:
    user, nice, system, irq, softirq, steal), or None where there is no /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def remove_bytecode(checkout: Path) -> None:
    for folder in sorted(checkout.rglob("__pycache__"), reverse=True):
        if ".git" not in folder.relative_to(checkout).parts:
            shutil.rmtree(folder, ignore_errors=True)


def run_suite(checkout: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(checkout), *filter(None, [os.environ.get("PYTHONPATH")])])}  # fmt: skip
    busy_before = machine_busy_seconds()
    load_before, cpu_before, started = os.getloadavg()[0], children_cpu(), time.perf_counter()
    done = subprocess.run(COMMAND, cwd=checkout, env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    busy_after = machine_busy_seconds()
    lines = done.stdout.strip().splitlines()
    summary = lines[-1] if lines else done.stderr[-500:]
    others = None  # cores the rest of the machine kept busy meanwhile, on average
    if busy_before is not None and busy_after is not None and wall > 0:
        others = round(max(0.0, busy_after - busy_before - cpu) / wall, 2)
    return {"wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "other_cores_busy": others, "exit_code": done.returncode,
            "summary": summary}  # fmt: skip


def exported(revision: str, into: Path) -> Path:
    """`revision` of this repository as plain files under `into`."""
    archive = into / "baseline.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision], check=True)
    with tarfile.open(archive) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(into / "baseline", **safe)
    return into / "baseline"


def measure(baseline: Path | None, runs: int, clean_bytecode: bool = False) -> dict:
    checkouts = {"this": ROOT} if baseline is None else {"baseline": baseline, "this": ROOT}
    results: dict[str, list[dict]] = {name: [] for name in checkouts}
    for number in range(runs):
        for name, checkout in checkouts.items():
            if clean_bytecode:
                remove_bytecode(checkout)
            result = run_suite(checkout)
            results[name].append(result)
            load = " -> ".join(map(str, result["load"]))
            others = result["other_cores_busy"]
            print(f"run {number + 1} {name}: {result['wall_seconds']} s wall, "
                  f"{result['cpu_seconds']} s CPU, load {load}, other work "
                  f"{'?' if others is None else others} cores: {result['summary']}",
                  file=sys.stderr, flush=True)  # fmt: skip
    medians = {name: {key: round(statistics.median(r[key] for r in rows), 1)
                      for key in ("wall_seconds", "cpu_seconds")}
               for name, rows in results.items()}  # fmt: skip
    report = {"command": " ".join(COMMAND[2:]), "clean_bytecode": clean_bytecode,
              "runs": results, "medians": medians,
              "target_wall_seconds": 60}  # fmt: skip
    if baseline is not None:
        report["ratio_this_to_baseline"] = {
            key: round(medians["this"][key] / medians["baseline"][key], 3)
            for key in ("wall_seconds", "cpu_seconds")
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--baseline", type=Path, help="another checkout of the project")
    where.add_argument("--baseline-rev", help="a git revision of this repository, e.g. main")
    parser.add_argument("--runs", type=int, default=1, help="runs of each (alternating)")
    parser.add_argument("--clean-bytecode", action="store_true",
                        help="remove the checkouts' __pycache__ folders before each run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cloneprobe-suite-baseline-") as scratch:
        baseline = args.baseline
        if args.baseline_rev:
            baseline = exported(args.baseline_rev, Path(scratch))
        report = measure(baseline.resolve() if baseline else None, args.runs,
                         args.clean_bytecode)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, median in report["medians"].items():
        print(f"{name}: median {median['wall_seconds']} s wall, {median['cpu_seconds']} s CPU")
    if "ratio_this_to_baseline" in report:
        ratio = report["ratio_this_to_baseline"]
        print(f"this / baseline: wall {ratio['wall_seconds']}, CPU {ratio['cpu_seconds']}")
    print(f"target: at most {report['target_wall_seconds']} s wall on a quiet 2-core machine")


if __name__ == "__main__":
    main()
