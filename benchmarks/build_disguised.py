"""Build `data/humaneval_disguised.jsonl`: the disguised prompt of every HumanEval task
(`disguise.disguise_task`), its examples' outputs recomputed by running the canonical solution
in a separate interpreter (`reference_run.evaluate_calls`), so nothing runs at audit time.

    python -m cloneprobe.benchmarks.build_disguised           # rewrite the shipped file
    python -m cloneprobe.benchmarks.build_disguised --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .disguise import disguise_task
from .reference_run import evaluate_calls
from .tasks import Benchmark, load_humaneval

DISGUISED = Path(__file__).resolve().parent / "data" / "humaneval_disguised.jsonl"


def build_disguised_records(benchmark: Benchmark) -> list[dict]:
    records = []
    for task in benchmark:
        disguise = disguise_task(task, evaluate_calls)
        records.append({"task_id": task.task_id, "prompt": disguise.prompt,
                        "entry_point": disguise.entry_point, "renames": disguise.renames,
                        "examples_changed": disguise.examples_changed})  # fmt: skip
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = "".join(json.dumps(r) + "\n" for r in build_disguised_records(load_humaneval()))
    if args.check:
        current = DISGUISED.read_text(encoding="utf-8") if DISGUISED.exists() else ""
        if current != text:
            print(f"{DISGUISED} is out of date: rebuild it", file=sys.stderr)
            return 1
        return 0
    DISGUISED.write_text(text, encoding="utf-8")
    print(f"wrote {DISGUISED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
