"""Merging the ranks' files into the summary a scan prints and keeps."""

from __future__ import annotations

import json

from .idioms import IDIOM_DOCUMENTS, TaskTally, is_idiom, judge
from .index_cache import benchmark_index
from .results import read_rank_matches
from .verify import MIN_BODY_TOKENS

FOUND_EVIDENCE = ("strong", "copy")
"""A task is found in the corpus when one of its matches carries this evidence."""


def merge_ranks(output, benchmark: str, identity: dict, wall: float, ran_now: set) -> dict:
    index = benchmark_index(benchmark)
    body_sizes = {task.task_id: len(task.body) for task in index.tasks}
    tallies: dict[str, TaskTally] = {}
    for name in sorted(output.list_files("tallies", glob_pattern="*.json")):
        with output.open(name, "r") as handle:
            for task_id, record in json.load(handle).items():
                tallies.setdefault(task_id, TaskTally()).add(TaskTally.from_dict(record))
    matches = judge(read_rank_matches(output), tallies, body_sizes)
    matches.sort(key=lambda m: (m.task_id, m.document, m.span))
    progress = []
    for name in sorted(output.list_files("progress", glob_pattern="*.json")):
        with output.open(name, "r") as handle:
            progress.append(json.load(handle))
    characters = sum(p["characters"] for p in progress)
    cpu = sum(p["cpu_seconds"] for p in progress)
    now = sum(p["characters"] for p in progress if p["rank"] in ran_now)
    tasks = []
    for task in index.tasks:
        own = [m for m in matches if m.task_id == task.task_id]
        tally = tallies.get(task.task_id, TaskTally())
        evidence = sorted({m.evidence for m in own})
        tasks.append({
            "task_id": task.task_id,
            "found": any(m.evidence in FOUND_EVIDENCE for m in own),
            "evidence": evidence,
            "documents": tally.documents,
            "generic": "short" if body_sizes[task.task_id] < MIN_BODY_TOKENS
            else "idiom" if is_idiom(tally) else None,
            "repositories": dict(tally.groups.most_common(20)),
        })  # fmt: skip
    return {
        "benchmark": index.name,
        "corpora": identity["corpora"],
        "ranks": identity["ranks"],
        "documents": sum(p["documents"] for p in progress),
        "characters": characters,
        "throughput": {
            "seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),
            "mb_per_second": round(now / 1e6 / wall, 3) if wall > 0 else None,
            "mb_per_cpu_second": round(characters / 1e6 / cpu, 3) if cpu > 0 else None,
            "ranks_run": len(ran_now),
            "max_rank_memory_mb": round(max([p.get("max_rss_mb", 0) for p in progress] or [0]), 1),
        },
        "found": [t["task_id"] for t in tasks if t["found"]],
        "not_found": [t["task_id"] for t in tasks if not t["found"]],
        "generic": [
            {"task_id": t["task_id"], "reason": t["generic"], "documents": t["documents"]}
            for t in tasks if t["generic"] and t["documents"]
        ],
        "rules": {"min_body_tokens": MIN_BODY_TOKENS, "idiom_documents": IDIOM_DOCUMENTS},
        "unlisted_matches": sum(t.unlisted for t in tallies.values()),
        "matches": [m.to_dict() for m in matches],
        "tasks": tasks,
    }
