"""The hand review of HumanEval's prompts: language fixes written as data, and their checks.

`data/humaneval_review.json` maps every task id to what a reader found and the edits made:

    {"HumanEval/0": {"found": ["spelling_grammar"],
                     "edits": [{"kind": "spelling_grammar", "old": "...", "new": "...",
                                "why": "..."}],
                     "notes": "..."}}

Edits apply in order; each `old` must occur exactly once in the text the previous ones left.
Run `python -m cloneprobe.benchmarks.review FILE` to check a review file.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .docstrings import syntax_without_docstrings
from .edits import PromptEdit, apply_edit, check_kind, edit_for_substring
from .errors import BenchmarkError
from .reference_run import run_reference
from .tasks import Task, load_humaneval


@dataclass(frozen=True)
class ReviewEntry:
    found: tuple[str, ...]
    edits: tuple[dict, ...]
    notes: str = ""


def load_review(path: Path) -> dict[str, ReviewEntry]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise BenchmarkError(f"{path}: cannot read the review file ({error})") from error
    review = {}
    for task_id, entry in data.items():
        where = f"{path} {task_id}"
        for kind in entry.get("found", []):
            check_kind(kind, where)
        edits = tuple(entry.get("edits", []))
        for edit in edits:
            if set(edit) - {"kind", "old", "new", "why"} or not {"kind", "old", "new"} <= set(edit):
                raise BenchmarkError(f"{where}: an edit needs kind, old, new (and why): {edit}")
        review[task_id] = ReviewEntry(tuple(entry.get("found", [])), edits, entry.get("notes", ""))
    return review


def review_edits(task: Task, entry: ReviewEntry) -> tuple[str, list[PromptEdit]]:
    """The prompt after the reviewed edits, and those edits as line edits with provenance."""
    text, edits = task.prompt, []
    for number, raw in enumerate(entry.edits, start=1):
        where = f"{task.task_id} edit {number}"
        edit = edit_for_substring(
            text, raw["old"], raw["new"], raw["kind"], raw.get("why", ""), where
        )
        text = apply_edit(text, edit, where)
        edits.append(edit)
    return text, edits


def check_fixed_prompt(task: Task, fixed: str) -> list[str]:
    """Problems with a fixed prompt: changed code or signature, or canonical + tests failing."""
    problems = []
    try:
        if syntax_without_docstrings(fixed) != syntax_without_docstrings(task.prompt):
            problems.append("the code changed (only docstrings and comments may change)")
    except SyntaxError as error:
        return [f"the fixed prompt does not parse: {error}"]
    program = f"{fixed}{task.canonical_solution}\n\n{task.test}\n\ncheck({task.entry_point})\n"
    result = run_reference(program)
    if not result.ok:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        problems.append(f"canonical solution fails its tests on the fixed prompt: {tail}")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m cloneprobe.benchmarks.review REVIEW.json", file=sys.stderr)
        return 2
    benchmark = load_humaneval()
    try:
        review = load_review(Path(args[0]))
    except BenchmarkError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    bad = 0
    for task_id, entry in review.items():
        task = benchmark.get(task_id)
        if task is None:
            print(f"{task_id}: not a HumanEval task")
            bad += 1
            continue
        try:
            fixed, edits = review_edits(task, entry)
        except BenchmarkError as error:
            print(f"{task_id}: {error}")
            bad += 1
            continue
        for kind in {e.kind for e in edits} - set(entry.found):
            print(f"{task_id}: edit kind {kind} is not listed in found")
            bad += 1
        problems = check_fixed_prompt(task, fixed) if edits else []
        for problem in problems:
            print(f"{task_id}: {problem}")
        bad += len(problems)
    print(f"{len(review)} tasks reviewed, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
