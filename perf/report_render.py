"""Cost of rendering a report in every format (the files `--report DIR` writes), this tree
against another (e.g. the main branch before the typed report), alternated in one run.

A synthetic report.json is built (seeded): `--samples` sample rows over 164 tasks x 2 prompt
sets, a clone pair for every tenth sample. Each tree renders it from the same file in a child
process (`PYTHONPATH` set to the tree), `--repeat` times, alternating; printed: each tree's
median seconds and the ratio this/other.

    python perf/report_render.py --other ../cloneprobe-base
    python perf/report_render.py --other ../cloneprobe-base --samples 200000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, sys, time
from pathlib import Path
source, out = Path(sys.argv[1]), Path(sys.argv[2])
document = json.loads(source.read_text())
from cloneprobe.reports.files import write_reports
try:
    from cloneprobe.audit.audit_report import report_from_dict
    report = report_from_dict(document)
except ImportError:  # a tree before the typed report renders the dictionary
    report = document
started = time.perf_counter()
write_reports(report, out)
print(time.perf_counter() - started)
"""


def synthetic_report(samples: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    rows, pairs = [], []
    for number in range(samples):
        task = f"HumanEval/{number % 164}"
        prompt_set = "original" if number % 2 else "fixed"
        clone = rng.choice([None, None, None, 1, 2, 3])
        tier = rng.choice(["evidence", "similar"]) if clone else None
        rows.append({"model": "m", "temperature": 0.2, "prompt_set": prompt_set,
                     "variant": "", "task_id": task, "sample": number // 328,
                     "clone_type": clone, "similarity": 100.0 if clone else None,
                     "trivial_type": None, "evidence_tier": tier,
                     "evidence_strength": rng.random() if clone else None,
                     "evidence_reasons": ["exact copy"] if clone else []})  # fmt: skip
        if clone and number % 10 == 0:
            lines = [f"line {i} of {task}" for i in range(12)]
            pairs.append({"model": "m", "temperature": 0.2, "prompt_set": prompt_set,
                          "task_id": task, "sample": number // 328, "type": str(clone),
                          "similarity": 100.0, "canonical_task": task,
                          "canonical_lines": [1, 12], "sample_lines": [1, 12],
                          "has_errors": False, "compared": {"canonical": lines, "sample": lines},
                          "tier": tier, "strength": 0.5, "reasons": ["exact copy"],
                          "sample_function": "f", "in_answer": True})  # fmt: skip
    group = {"model": "m", "label": "m", "settings_key": "k", "temperature": 0.2,
             "variant": "", "tasks": 164, "samples": samples // 2,
             "tasks_with_clone": {"1": 1, "2": 1, "3": 1},
             "tasks_with_clone_exclusive": {"1": 1, "2": 0, "3": 0},
             "samples_with_clone": {"1": 1, "2": 1, "3": 1},
             "samples_with_clone_exclusive": {"1": 1, "2": 0, "3": 0},
             "task_rate": {"1": 0.6, "2": 0.6, "3": 0.6}, "sample_rate": {"1": 0, "2": 0, "3": 0},
             "tasks_trivial_only": 0, "correctness": None}  # fmt: skip
    shown = pairs[:1640]
    return {"schema": "cloneprobe.audit/1", "profile": "default",
            "settings": {"grain": "token", "min_lines": 2, "max_lines": 2500, "min_tokens": 12,
                         "cross_task": False, "sampling": [], "execution": {"isolation": {}},
                         "types": [{"name": "1", "threshold": 0, "rename": "none"}]},
            "groups": [{**group, "prompt_set": "original"}, {**group, "prompt_set": "fixed"}],
            "comparisons": [], "samples": rows, "evidence": shown,
            "evidence_total": len(shown), "evidence_per_task": 10,
            "evidence_file": "evidence.jsonl", "skipped": {}}  # fmt: skip


def render_seconds(tree: Path, source: Path) -> float:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        done = subprocess.run([sys.executable, "-c", CHILD, str(source), out], env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="the tree to compare with")
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "report.json"
        source.write_text(json.dumps(synthetic_report(args.samples)))
        this, other = [], []
        for _ in range(args.repeat):
            this.append(render_seconds(HERE, source))
            other.append(render_seconds(args.other, source))
    a, b = statistics.median(this), statistics.median(other)
    print(f"samples {args.samples}: this tree {a:.3f} s, {args.other} {b:.3f} s "
          f"(median of {args.repeat}); ratio this/other {a / b:.2f}")


if __name__ == "__main__":
    main()
