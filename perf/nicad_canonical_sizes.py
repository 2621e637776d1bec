"""How NiCad's grammar layout changes the sizes of HumanEval's canonical fragments.

For each of the 164 canonical fragments (`canonical_source`), its size in the `statements`
layout (one statement per line, what the nicad profile printed before issue 12) and in the
`source` layout (NiCad's Python grammar, what it prints now), and which tasks cross the study's
per-task minimum size (half the canonical's lines, never below 5) either way.

    python perf/nicad_canonical_sizes.py
"""

from __future__ import annotations

from cloneprobe.benchmarks import canonical_source, load_humaneval, nicad_min_lines
from cloneprobe.clones import FragmentExtractor, SourceFile, get_language


def canonical_sizes(layout: str) -> dict[str, int]:
    extractor = FragmentExtractor(get_language("python"), layout)
    sizes = {}
    for task in load_humaneval():
        fragments = extractor.extract(SourceFile(task.task_id, canonical_source(task)))
        entry = [f for f in fragments if f.name == task.entry_point] or fragments
        sizes[task.task_id] = entry[0].size
    return sizes


def main() -> None:
    tasks = {task.task_id: task for task in load_humaneval()}
    before, after = canonical_sizes("statements"), canonical_sizes("source")
    changed = [(t, before[t], after[t]) for t in tasks if before[t] != after[t]]
    print(f"canonical fragments: {len(tasks)}; nicad line count changed: {len(changed)}")
    print(f"  larger: {sum(1 for _, b, a in changed if a > b)}", end="; ")
    print(f"smaller: {sum(1 for _, b, a in changed if a < b)}")
    for task_id, old, new in changed:
        print(f"  {task_id}: {old} -> {new} lines (minimum {nicad_min_lines(tasks[task_id])})")
    minimum = {t: nicad_min_lines(task) for t, task in tasks.items()}
    gained = [t for t in tasks if before[t] < minimum[t] <= after[t]]
    lost = [t for t in tasks if after[t] < minimum[t] <= before[t]]
    kept_before = sum(1 for t in tasks if before[t] >= minimum[t])
    kept_after = sum(1 for t in tasks if after[t] >= minimum[t])
    print(f"at or above the per-task minimum: {kept_before} before, {kept_after} after")
    print(f"  now above, below before: {', '.join(gained) or 'none'}")
    print(f"  now below, above before: {', '.join(lost) or 'none'}")


if __name__ == "__main__":
    main()
