"""Verdicts of this tree against a baseline tree's, pair by pair: a speed change must change none.

Each tree runs in its own subprocess with its own `PYTHONPATH` (as perf/detect_speed.py does)
and detects clones between the 164 HumanEval canonical programs (prompt + canonical solution)
and these candidates:

- the synthetic workload of perf/detect_throughput.py (perf/workload.py) at `--scale`
  (0.05 by default: 3,280 candidates);
- the published-style sample files the tests keep (tests/data/humaneval_results.jsonl,
  tests/data/import_samples.jsonl), each sample as the prompt followed by its completion
  and as the completion alone.

with both profiles (nicad at its own and at the study's min_lines 5, default) and every clone
type: the Type-1/2/3 ladder and the consistent-renaming types 2c and 3-2c. Every pair (files,
lines, type, similarity, trivial flag) and every clone class are compared; the script prints
the counts and the first differences, and exits 1 when anything differs.

    git worktree add --detach ../cloneprobe-base main     # the baseline, once
    python3 perf/detect_verdicts.py --baseline ../cloneprobe-base
    python3 perf/detect_verdicts.py --baseline ../cloneprobe-base --scale 0.2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
SAMPLE_FILES = ("humaneval_results.jsonl", "import_samples.jsonl")


def worker(scale: float, seed: int, out: Path) -> None:
    """Runs in the subprocess: every run's pairs and classes, as JSON in `out`."""
    import random
    from dataclasses import replace

    tree = Path(os.environ["PYTHONPATH"].split(os.pathsep)[0])
    sys.path.insert(0, str(tree / "perf"))
    from workload import candidate_system, canonical_system, load_templates

    from cloneprobe.benchmarks import load_humaneval
    from cloneprobe.clones import (
        CLONE_TYPES,
        DEFAULT,
        LADDER,
        NICAD,
        DetectorConfig,
        FragmentExtractor,
        SourceFile,
        compare_systems,
        get_language,
    )

    templates = load_templates()
    canon = canonical_system(templates)
    count = max(1, round(164 * 20 * 2 * 10 * scale))
    candidates = candidate_system(templates, count, random.Random(seed), (20, 2, 10))
    prompts = {task.task_id: task.prompt for task in load_humaneval()}
    for name in SAMPLE_FILES:
        rows = (TREE / "tests" / "data" / name).read_text(encoding="utf-8").splitlines()
        for number, row in enumerate(map(json.loads, rows)):
            text = row.get("completion") or row["solution"]
            candidates.append(SourceFile(f"{name}/{number}.py", text))
            candidates.append(
                SourceFile(f"{name}/{number}_full.py", prompts[row["task_id"]] + text)
            )
    types = (*LADDER, CLONE_TYPES["2c"], CLONE_TYPES["3-2c"])
    runs = {}
    for profile, min_lines in ((NICAD, None), (NICAD, 5), (DEFAULT, None)):
        extractor = FragmentExtractor(get_language("python"), profile.layout)
        fragments_a = [f for s in canon for f in extractor.extract(s)]
        fragments_b = [f for s in candidates for f in extractor.extract(s)]
        config = DetectorConfig(profile=profile, types=LADDER, min_lines=min_lines)
        for chosen in (LADDER, *((t,) for t in types)):
            report = compare_systems(fragments_a, fragments_b, replace(config, types=chosen))
            name = f"{profile.name} min_lines {config.min_size}, {'/'.join(t.name for t in chosen)}"
            runs[name] = {
                "pairs": [
                    [p.a.file, p.a.start_line, p.a.end_line, p.b.file, p.b.start_line,
                     p.b.end_line, p.clone_type.name, p.similarity, p.trivial]
                    for p in report.pairs
                ],
                "classes": [[c.clone_type, c.pairs, [f.location for f in c.fragments]]
                            for c in report.classes],
            }  # fmt: skip
    out.write_text(json.dumps({"candidates": len(candidates), "runs": runs}))


def run_tree(tree: Path, scale: float, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "verdicts.json"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(out),
                   "--scale", str(scale), "--seed", str(seed)]  # fmt: skip
        subprocess.run(command, env=env, check=True)
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=False, help="a checkout of main")
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.scale, args.seed, args.worker)
        return 0
    if args.baseline is None:
        parser.error("--baseline TREE is required (a checkout of the code to compare with)")
    base = run_tree(args.baseline.resolve(), args.scale, args.seed)
    this = run_tree(TREE, args.scale, args.seed)
    print(f"verdicts, this tree against {args.baseline}: {this['candidates']:,} candidate "
          f"programs (workload scale {args.scale} and the tests' sample files)")  # fmt: skip
    differ = 0
    for name, run in this["runs"].items():
        other = base["runs"].get(name)
        same_pairs = other is not None and other["pairs"] == run["pairs"]
        same_classes = other is not None and other["classes"] == run["classes"]
        print(f"  {name}: {len(run['pairs']):,} pairs, {len(run['classes']):,} classes; "
              f"identical pairs {same_pairs}, identical classes {same_classes}")  # fmt: skip
        if not (same_pairs and same_classes):
            differ = 1
            if other is not None:
                shown = [(a, b) for a, b in zip(other["pairs"], run["pairs"], strict=False)
                         if a != b][:3]  # fmt: skip
                for a, b in shown:
                    print(f"    baseline {a}\n    this     {b}")
    print("every verdict identical" if not differ else "VERDICTS DIFFER")
    return differ


if __name__ == "__main__":
    sys.exit(main())
