"""How fast `cloneprobe --help` starts, against the interpreter's own start-up.

    python3 perf/cli_startup.py              # 15 runs of each, medians
    python3 perf/cli_startup.py --runs 40 --json

Printed, all measured in this run, alternating the commands so machine load hits both alike:
the median wall time of `python -c pass` (the floor no command line can go under), of
`python -c "import click"`, and of `python -m cloneprobe --help`; cloneprobe's own share
(help minus bare interpreter); and the modules the help run imported that a command only needs
when it runs (networkx, numpy, torch, transformers, openai, datatrove, rich.progress).
The target (issue 11): `cloneprobe --help` under 0.15 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import click'": [sys.executable, "-c", "import click"],
    "cloneprobe --help": [sys.executable, "-m", "cloneprobe", "--help"],
}
HEAVY = ("networkx", "numpy", "torch", "transformers", "openai", "datatrove", "rich.progress")
def wall_time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure(runs: int) -> dict:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, command in COMMANDS.items():
            times[name].append(wall_time(command))
    medians = {name: round(statistics.median(values), 4) for name, values in times.items()}
    # -X importtime lists every module the run imported, one per line on stderr
    traced = subprocess.run([sys.executable, "-X", "importtime", "-m", "cloneprobe", "--help"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()}
    loaded = [m for m in HEAVY if m in imported]
    help_seconds = medians["cloneprobe --help"]
    return {
        "runs": runs,
        "median_seconds": medians,
        "cloneprobe_share_seconds": round(help_seconds - medians["python -c pass"], 4),
        "target_seconds": 0.15,
        "help_over_target": round(help_seconds / 0.15, 2),
        "heavy_modules_loaded_by_help": loaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, seconds in figures["median_seconds"].items():
        print(f"{name:28} {seconds * 1000:7.1f} ms (median of {figures['runs']})")
    print(f"{'cloneprobe own share':28} {figures['cloneprobe_share_seconds'] * 1000:7.1f} ms")
    print(f"--help against the 0.15 s target: {figures['help_over_target']:.2f}x")
    print("heavy modules --help loaded: " + (", ".join(figures["heavy_modules_loaded_by_help"])
                                              or "none"))  # fmt: skip


if __name__ == "__main__":
    main()
