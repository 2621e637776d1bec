"""The convergence null's cost: `cloneprobe detect FILE --json` into a fresh store, with this
tree's code against a baseline tree's (e.g. a checkout of main before the panel), alternated in each
round so load on the machine hits both alike; prints each run's wall time and the ratio.

    python perf/convergence_cost.py SAMPLES.jsonl --baseline /path/to/base/tree [--rounds 3]

Each run is a child process with PYTHONPATH set to its tree; nothing is timed in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def detect_once(tree: Path, samples: Path) -> float:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "cloneprobe", "detect", str(samples), "--store",
                        str(Path(folder) / "s.sqlite"), "--model", "codegen-2B-mono",
                        "--temperature", "0.2", "--json"],
                       env=env, check=True, capture_output=True)  # fmt: skip
        return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path)
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"baseline": [], "this": []}
    for number in range(args.rounds):
        for name, tree in (("baseline", args.baseline), ("this", HERE)):
            seconds = detect_once(tree, args.samples)
            times[name].append(seconds)
            print(f"round {number + 1}: {name} {seconds:.2f} s", flush=True)
    base, this = statistics.median(times["baseline"]), statistics.median(times["this"])
    print(f"median baseline {base:.2f} s, this {this:.2f} s, ratio {this / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
