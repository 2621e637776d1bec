"""Which HumanEval canonical fragments are mostly code the prompt already shows.

For each profile and renaming (`none` for Type-1, `blind` for Type-2/3), the share of each
canonical fragment's compared items that `prompt_overlap` marks as shown by the task's prompt,
and the tasks whose canonical is uninformative (more than half shown, or nothing of its own).

    python perf/prompt_shown_canonicals.py
"""

from __future__ import annotations

from cloneprobe.benchmarks import canonical_source, load_humaneval
from cloneprobe.clones import (
    DEFAULT,
    NICAD,
    FragmentExtractor,
    SourceFile,
    get_language,
    prompt_overlap,
)


def main() -> None:
    tasks = list(load_humaneval())
    for profile in (DEFAULT, NICAD):
        extractor = FragmentExtractor(get_language("python"), profile.layout)
        for rename in ("none", "blind"):
            shares = {}
            for task in tasks:
                fragments = extractor.extract(SourceFile("canonical", canonical_source(task)))
                canonical = next(f for f in fragments if f.name == task.entry_point)
                (prompt,) = extractor.extract(SourceFile("prompt", task.prompt), "files")
                shares[task.task_id] = prompt_overlap(canonical, prompt, profile, rename)
            uninformative = {t: o for t, o in shares.items() if not o.informative()}
            over_quarter = sum(1 for o in shares.values() if o.shown_share > 0.25)
            print(
                f"{profile.name}, rename {rename}: {len(uninformative)} of {len(tasks)} "
                f"uninformative; {over_quarter} with more than 25% shown"
            )
            for task_id, overlap in uninformative.items():
                print(f"  {task_id}: {overlap.shown_share:.0%} of {len(overlap.items)} shown")


if __name__ == "__main__":
    main()
