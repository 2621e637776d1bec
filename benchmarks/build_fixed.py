"""Build `data/humaneval_fixed.jsonl` from the hand review and the mechanical fixer.

    python -m cloneprobe.benchmarks.build_fixed           # rewrite the shipped file
    python -m cloneprobe.benchmarks.build_fixed --check   # exit 1 if it is out of date

For each task: the reviewed language edits (`data/humaneval_review.json`) apply first, then the
mechanical fixes (docstring layout, URLs, examples checked against the canonical solution).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import BenchmarkError
from .fixer import mechanical_fixes
from .review import load_review, review_edits
from .tasks import Benchmark, load_humaneval

DATA = Path(__file__).resolve().parent / "data"
REVIEW = DATA / "humaneval_review.json"
FIXED = DATA / "humaneval_fixed.jsonl"


def build_fixed_records(benchmark: Benchmark, review_path: Path = REVIEW) -> list[dict]:
    review = load_review(review_path)
    missing = [task.task_id for task in benchmark if task.task_id not in review]
    if missing:
        raise BenchmarkError(
            f"{review_path}: {len(missing)} task(s) were not reviewed, e.g. {missing[:3]}; "
            "every task needs an entry (found: [], edits: [] when nothing is wrong)"
        )
    records = []
    for task in benchmark:
        entry = review[task.task_id]
        text, edits = review_edits(task, entry)
        text, mechanical = mechanical_fixes(task, text)
        changes = [*edits, *mechanical]
        found = sorted(set(entry.found) | {edit.kind for edit in changes})
        records.append(
            {
                "task_id": task.task_id,
                "prompt": text,
                "found": found,
                "changes": [edit.to_dict() for edit in changes],
                "notes": entry.notes,
            }
        )
    return records


def render(records: list[dict]) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the shipped file")
    args = parser.parse_args(argv)
    try:
        text = render(build_fixed_records(load_humaneval()))
    except BenchmarkError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        current = FIXED.read_text(encoding="utf-8") if FIXED.exists() else ""
        if current != text:
            print(f"{FIXED} is out of date: run python -m cloneprobe.benchmarks.build_fixed")
            return 1
        print(f"{FIXED} is up to date")
        return 0
    FIXED.write_text(text, encoding="utf-8")
    print(f"wrote {FIXED} ({text.count(chr(10))} tasks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
