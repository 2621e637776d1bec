"""What the content cache saves per command: `cloneprobe detect FILE --json` with the cache
warm against the same tree with it off (`CLONEPROBE_NO_CACHE=1`, everything computed as before
the cache), and optionally against a baseline tree, alternating run by run in one run.

The cached work is what does not depend on the samples' verdicts: every canonical's fragments,
every canonical's evidence profile and the chance pool's comparisons (`content_cache`).
Files: the tests' 22-sample file, a 164-sample file (perf/workload.py's candidates, seeded) and
the tests' 656-sample file (a chance pool of 328). Each run is a child process in a fresh folder
(a fresh store); compiled modules are written and kept as a user's Python does.

Printed: per file and variant the median child CPU time (user + system, the figure to read on a
busy machine) and wall time, the ratios to the cache off, and whether every variant printed the
same JSON. Also in one process: building the evidence's canonical side and the chance rates
(`CanonicalFragments` + `chance_rates` + every profile) cold against warm, CPU time.

    python3 perf/content_cache.py --runs 5
    python3 perf/content_cache.py --runs 5 --baseline /path/to/main/checkout
    python3 perf/content_cache.py --runs 5 --profile nicad
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
DATA = TREE / "tests" / "data"
sys.path[:0] = [str(TREE), str(HERE)]  # this tree's cloneprobe, and detect_cli beside this file


def run_once(tree: Path, samples: Path, environ: dict, profile: str = "default",
             ) -> tuple[float, float, str]:  # fmt: skip
    """(wall seconds, child CPU seconds, stdout) of `detect --json` in a fresh folder."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, **environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "cloneprobe", "detect", str(samples),
                               "--model", "m", "--temperature", "0.2", "--json",
                               "--profile", profile],
                              cwd=folder, env=env, capture_output=True, text=True,
                              check=True)  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def in_process(samples_file: Path, rounds: int, cache: Path) -> dict:
    """CPU seconds of the canonical side and the chance rates, cache off against warm."""
    from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
    from cloneprobe.benchmarks import load_humaneval
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.content_cache import ContentCache
    from cloneprobe.evidence.null_model import chance_rates

    benchmark = load_humaneval()
    pool = []
    for line in samples_file.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        task = benchmark.get(record["task_id"])
        pool.append((task.task_id, task.prompt + record["completion"]))
    settings = DetectionSettings(DetectorConfig())

    def build(disk: ContentCache) -> tuple[float, dict]:
        started = time.process_time()
        canonicals = CanonicalFragments(benchmark, disk)
        rates = chance_rates(canonicals, settings, pool)
        profiles = [canonicals.profile(task.task_id) for task in benchmark]
        return time.process_time() - started, {"rates": rates, "profiles": profiles}

    build(ContentCache(cache))  # fills the cache
    off, warm, same = [], [], True
    for _ in range(rounds):
        seconds, computed = build(ContentCache(None))
        off.append(seconds)
        seconds, read = build(ContentCache(cache))
        warm.append(seconds)
        same = same and computed == read
    return {"off_cpu": statistics.median(off), "warm_cpu": statistics.median(warm),
            "ratio": statistics.median(warm) / statistics.median(off), "same": same}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a checkout without the cache (main)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", default="default", help="the detector profile")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "cache"
        from detect_cli import write_samples

        file_164 = Path(folder) / "samples-164.jsonl"
        write_samples(file_164, 3)
        files = {"22 samples": DATA / "humaneval_results.jsonl", "164 samples": file_164,
                 "656 samples": DATA / "import_samples.jsonl"}  # fmt: skip
        variants = {"cache off": (TREE, {"CLONEPROBE_NO_CACHE": "1"}),
                    "cache warm": (TREE, {"CLONEPROBE_CACHE_DIR": str(cache)})}  # fmt: skip
        if args.baseline:
            variants["baseline"] = (args.baseline.resolve(), {"CLONEPROBE_NO_CACHE": "1"})
        print(f"cloneprobe detect --json --profile {args.profile}, {args.runs} runs per "
              f"variant, alternating; load average at the start "
              f"{os.getloadavg()[0]:.1f}")  # fmt: skip
        for label, samples in files.items():
            outputs: dict[str, str] = {}
            for tree, environ in variants.values():  # untimed: compiled modules, the cache
                run_once(tree, samples, environ, args.profile)
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
            for _ in range(args.runs):
                for name, (tree, environ) in variants.items():
                    wall, cpu, outputs[name] = run_once(tree, samples, environ, args.profile)
                    times[name].append((wall, cpu))
            cpu = {n: statistics.median(c for _, c in t) for n, t in times.items()}
            wall = {n: statistics.median(w for w, _ in t) for n, t in times.items()}
            same = len(set(outputs.values())) == 1
            print(f"  {label}: " + "; ".join(
                f"{n} cpu {cpu[n]:.2f} s wall {wall[n]:.2f} s" for n in variants))  # fmt: skip
            print(f"    warm / off: cpu {cpu['cache warm'] / cpu['cache off']:.3f}, wall "
                  f"{wall['cache warm'] / wall['cache off']:.3f}"
                  + (f"; warm / baseline: cpu {cpu['cache warm'] / cpu['baseline']:.3f}"
                     if args.baseline else "") + f"; same JSON: {same}")  # fmt: skip
        figures = in_process(file_164, args.runs, cache)
        print(f"  in one process, canonical fragments + profiles + chance rates (164-sample pool):"
              f" off {figures['off_cpu']:.3f} s cpu, warm {figures['warm_cpu']:.3f} s cpu, ratio "
              f"{figures['ratio']:.3f}; same values: {figures['same']}")  # fmt: skip
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
