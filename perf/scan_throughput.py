"""Throughput and planted recall of `cloneprobe scan`, end to end, on this machine's Python.

Builds a corpus from the Python files of this interpreter's library (the standard library and
installed packages), plants HumanEval canonical fragments (signature and body) in randomly
chosen files in three kinds (verbatim, consistently renamed, a line added), runs the real
command `cloneprobe scan CORPUS --output OUT --workers W --json` in a subprocess, and prints:
- MB/s of the whole run (wall clock, start-up included) and per core (per worker); MB per CPU-second
  of the ranks (the scan's own cost per core, which a loaded machine does not distort) and
  of the whole command (parent and workers, start-up included; it counts the processes the
  command waits for, so it is whole only when the workers are forked from the command, as
  they are on Linux: forkserver workers are not counted);
- recall per kind (a plant counts as found when `matches` holds its task in its document);
- matches outside the plants, by evidence label (copy, idiom, short, strong).

    python perf/scan_throughput.py                     # whole library, 2 workers
    python perf/scan_throughput.py --limit-mb 50       # a quick check
    python perf/scan_throughput.py --format jsonl      # the corpus as JSONL shards instead
    python perf/scan_throughput.py --format jsonl --shards 1   # one JSONL file
    python perf/scan_throughput.py --baseline ../cloneprobe-base --rounds 3
        # the same corpus scanned by this code and by the code in another source tree (a
        # worktree of main), alternating, and the ratio of their medians
    python perf/scan_throughput.py --single-file --baseline ../cloneprobe-base --rounds 3
        # then the same library as one JSONL file too: how many ranks read a piece of it,
        # and how many cores the command kept busy (CPU-seconds over wall-clock seconds)

"Per core" is per worker: the command runs --workers W (default 2, this machine's cores), so
MB/s per core end to end = MB / wall-clock seconds / W. With other work on the machine the
wall clock says little; MB per CPU-second (what a core does) is the figure to compare then.

Unmodified files are hard links (no copy); the corpus folder is deleted at the end.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.scan.planting import KINDS, Plant, plant_into, planted_code


def library_files(limit_bytes: int | None) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files, total = [], 0
    for path in sorted(root.rglob("*.py")):
        if not path.is_file():
            continue
        files.append(path)
        total += path.stat().st_size
        if limit_bytes and total >= limit_bytes:
            break
    return files


def build_corpus(folder: Path, files: list[Path], per_kind: int, seed: int, fmt: str,
                 shards: int = 16):  # fmt: skip
    rng = random.Random(seed)
    tasks = list(load_humaneval())
    root = Path(sysconfig.get_paths()["stdlib"])
    hosts = rng.sample(range(len(files)), per_kind * len(KINDS))
    plants: dict[int, tuple[str, str]] = {}
    for n, host in enumerate(hosts):
        kind = KINDS[n % len(KINDS)]
        task = rng.choice(tasks)
        plants[host] = (task.task_id, planted_code(task, kind, seed + n), kind)
    planted: list[Plant] = []
    by_shard = collections.defaultdict(list)
    for i, path in enumerate(files):
        relative = str(path.relative_to(root))
        if i in plants:
            task_id, code, kind = plants[i]
            text = plant_into(path.read_text(encoding="utf-8", errors="replace"), code, seed + i)
            planted.append(Plant(relative, task_id, kind))
        else:
            text = None
        if fmt == "files":
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if text is None:
                os.link(path, target)
            else:
                target.write_text(text, encoding="utf-8")
        else:
            if text is None:
                text = path.read_text(encoding="utf-8", errors="replace")
            record = {"id": relative, "text": text, "repo": relative.split("/")[0]}
            by_shard[i % shards].append(record)
    for shard, records in by_shard.items():
        with (folder / f"shard-{shard:02d}.jsonl").open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")
    return planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit-mb", type=float, help="Use only this many MB of files.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-kind", type=int, default=20, help="Plants per kind.")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--format", choices=["files", "jsonl"], default="files")
    parser.add_argument("--shards", type=int, default=16, help="JSONL files (--format jsonl).")
    parser.add_argument("--baseline", type=Path,
                        help="A source tree (e.g. a worktree of main) to scan the same corpus "
                        "with, alternating with this code, for the ratio.")
    parser.add_argument("--rounds", type=int, default=1,
                        help="Runs of each code (alternating with the baseline's).")
    parser.add_argument("--single-file", action="store_true",
                        help="Then scan the same library as one JSONL file too.")
    args = parser.parse_args()
    print(f"load average at the start: {load_line()}", flush=True)
    files = library_files(int(args.limit_mb * 1e6) if args.limit_mb else None)
    layouts = [(args.format, args.shards)] + ([("jsonl", 1)] if args.single_file else [])
    for fmt, shards in layouts:
        what = "folder of source files" if fmt == "files" else f"{shards} JSONL file(s)"
        print(f"\n######## the library as a {what} ########", flush=True)
        measure(files, args, fmt, shards)
    print(f"\nload average at the end: {load_line()}")


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def measure(files: list[Path], args, fmt: str, shards: int) -> None:
    """Build the corpus, scan it with each code (alternating), report."""
    work = Path(tempfile.mkdtemp(prefix="scan-perf-"))
    codes = [("this code", Path(__file__).resolve().parents[1])]
    if args.baseline:
        codes.append(("baseline", args.baseline.resolve()))
    runs: dict[str, list[dict]] = {name: [] for name, _ in codes}
    try:
        corpus = work / "corpus"
        corpus.mkdir()
        planted = build_corpus(corpus, files, args.per_kind, args.seed, fmt, shards)
        for round_number in range(args.rounds):
            order = codes if round_number % 2 == 0 else codes[::-1]
            for name, tree in order:
                output = work / f"out-{len(runs[name])}-{name[0]}"
                run = scan_once(corpus, output, args, tree, fmt)
                runs[name].append(run)
                print(f"round {round_number + 1}, {name}: {run_line(run)}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, _ in codes:
        print(f"\n== {name} (its last run) ==")
        last = runs[name][-1]
        report(last["summary"], planted, last["wall"], args.workers, last["cpu"], last["load"])
        print(f"documents read per rank: {last['rank_documents']}; cores kept busy (the "
              f"command's CPU-seconds over its wall clock): {last['cpu'] / last['wall']:.2f}")
    if args.baseline:
        compare(runs, args.workers)
        same = {name: sorted((m["document"], m["task_id"], tuple(m["span"]))
                             for m in runs[name][-1]["summary"]["matches"])
                for name, _ in codes}  # fmt: skip
        print("matches (document, task, span) identical to the baseline's: "
              f"{same['this code'] == same['baseline']} ({len(same['this code'])} and "
              f"{len(same['baseline'])})")


def scan_once(corpus: Path, output: Path, args, tree: Path, fmt: str) -> dict:
    """One run of the command, in a subprocess that imports cloneprobe from the source tree
    (its PYTHONPATH and its working folder: `python -m` puts the working folder first)."""
    command = [sys.executable, "-m", "cloneprobe", "scan", str(corpus), "--output",
               str(output), "--workers", str(args.workers), "--json"]  # fmt: skip
    if fmt == "jsonl":
        command += ["--group-field", "repo"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env,
                            cwd=tree)  # fmt: skip
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if result.returncode != 0:
        sys.exit(f"scan failed ({result.returncode}): {result.stderr[-2000:]}")
    progress = [json.loads(p.read_text()) for p in (output / "progress").glob("*.json")]
    shutil.rmtree(output, ignore_errors=True)
    return {"summary": json.loads(result.stdout), "wall": wall, "cpu": cpu, "load": load,
            "load_end": os.getloadavg()[0],
            "rank_documents": [p["documents"] for p in sorted(progress, key=lambda p: p["rank"])]}


def rates(run: dict, workers: int) -> dict[str, float]:
    megabytes = run["summary"]["characters"] / 1e6
    return {"MB/s per core, end to end": megabytes / run["wall"] / workers,
            "MB per CPU-second, ranks": run["summary"]["throughput"]["mb_per_cpu_second"],
            "MB per CPU-second, command": megabytes / run["cpu"]}  # fmt: skip


def run_line(run: dict) -> str:
    s = run["summary"]
    return (f"{s['characters'] / 1e6:.1f} MB, {s['ranks']} ranks, {run['wall']:.1f} s wall, "
            f"{run['cpu']:.1f} CPU-s, ranks {s['throughput']['mb_per_cpu_second']:.2f} MB per "
            f"CPU-s, load {run['load']:.1f} -> {run['load_end']:.1f}")  # fmt: skip


def compare(runs: dict[str, list[dict]], workers: int) -> None:
    """Medians of each code's runs and their ratio (this code over the baseline)."""
    print(f"\n== this code against the baseline, medians of {len(runs['this code'])} "
          "alternating runs each ==")
    for key in rates(runs["this code"][0], workers):
        mine = statistics.median(rates(r, workers)[key] for r in runs["this code"])
        base = statistics.median(rates(r, workers)[key] for r in runs["baseline"])
        print(f"{key:28s} this code {mine:6.2f}  baseline {base:6.2f}  ratio {mine / base:.2f}")
    loads = [r["load"] for rs in runs.values() for r in rs]
    print(f"load average at the runs' starts: {min(loads):.1f} to {max(loads):.1f} on "
          f"{os.cpu_count()} cores")


def report(summary: dict, planted: list[Plant], wall: float, workers: int, cpu: float | None = None,
           load: float | None = None) -> None:  # fmt: skip
    found = {(m["document"], m["task_id"]) for m in summary["matches"]}
    megabytes = summary["characters"] / 1e6
    t = summary["throughput"]
    print(f"corpus: {summary['documents']:,} documents, {megabytes:,.1f} MB, "
          f"{summary['ranks']} ranks, {workers} workers")
    print(f"end to end (process start to exit): {wall:.1f} s = {megabytes / wall:.2f} MB/s = "
          f"{megabytes / wall / workers:.2f} MB/s per core ({workers} workers)")
    print(f"ranks' CPU time: {t['cpu_seconds']:.1f} s = {t['mb_per_cpu_second']:.2f} MB per "
          "CPU-second (per-core speed of the scan itself)")
    if cpu:
        print(f"whole command's CPU time (parent and workers, start-up included): {cpu:.1f} s = "
              f"{megabytes / cpu:.2f} MB per CPU-second end to end")
    started = f"{load:.1f} at the start, " if load is not None else ""
    print(f"load average: {started}{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores")
    for kind in KINDS:
        mine = [p for p in planted if p.kind == kind]
        hit = [p for p in mine if (p.document, p.task_id) in found]
        missed = [f"{p.task_id}@{p.document}" for p in mine if p not in hit]
        print(f"recall {kind}: {len(hit)}/{len(mine)} = {len(hit) / max(1, len(mine)):.2f}"
              + (f"  missed: {', '.join(missed)}" if missed else ""))
    plant_keys = {(p.document, p.task_id) for p in planted}
    hosts = {p.document for p in planted}
    labels = {(m["document"], m["task_id"]): m["evidence"] for m in summary["matches"]}
    planted_labels = collections.Counter(labels[k] for k in plant_keys if k in labels)
    in_hosts = collections.Counter(
        v for k, v in labels.items() if k not in plant_keys and k[0] in hosts
    )
    others = collections.Counter(v for k, v in labels.items() if k[0] not in hosts)
    print(f"labels of the plants found: {dict(planted_labels)}")
    print(f"other tasks matched inside a plant (a canonical that holds another, e.g. is_prime): "
          f"{dict(in_hosts)}")
    print(f"matches in files with no plant: {sum(others.values())} {dict(others)}; "
          f"unlisted (over the per-task cap): {summary['unlisted_matches']}")
    for m in summary["matches"]:
        if m["document"] not in hosts and m["evidence"] in ("copy", "strong"):
            print(f"  in a file with no plant, {m['evidence']}: {m['task_id']} in {m['document']} "
                  f"lines {m['lines'][0]}-{m['lines'][1]}, Type-{m['clone_type']}, "
                  f"similarity {m['similarity']:.2f}")
    print(f"peak memory of a worker process: {t.get('max_rank_memory_mb')} MB")
    print("generic tasks: " + ", ".join(f"{g['task_id']} ({g['reason']}, {g['documents']} docs)"
                                        for g in summary["generic"]))  # fmt: skip


if __name__ == "__main__":
    main()
