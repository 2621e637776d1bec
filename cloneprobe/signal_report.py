"""The report's per-task view: each task's clone evidence beside every signal's score, and a
per-group summary of the signals.

`tasks` is a flat list, one entry per model x temperature x prompt set x task, so a reader can
rank every task by any signal (and check the ranking against a known split).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from .aggregate import TYPES, prompt_label
from .signal_flow import TaskSignals
from .signals.registry import SIGNALS
from .signals.surface import distribution


def clone_evidence(report: dict) -> dict[tuple, dict]:
    """Per (model, temperature, prompt set label, task): the clone verdicts of its samples."""
    evidence: dict[tuple, dict] = {}
    for sample in report.get("samples", []):
        key = (sample["model"], sample["temperature"], sample["prompt_set"], sample["task_id"])
        entry = evidence.setdefault(
            key,
            {"samples": 0, "best_type": None, "best_similarity": None,
             "samples_with_clone": dict.fromkeys(TYPES, 0), "trivial_only": False},
        )  # fmt: skip
        entry["samples"] += 1
        rank = sample.get("clone_type")
        if rank is not None:
            for t in TYPES:
                entry["samples_with_clone"][t] += rank <= int(t)
            if entry["best_type"] is None or rank < int(entry["best_type"]):
                entry["best_type"] = str(rank)
            similarity = sample.get("similarity")
            if similarity is not None:
                entry["best_similarity"] = max(entry["best_similarity"] or 0, similarity)
        entry["trivial_only"] = entry["best_type"] is None and (
            entry["trivial_only"] or sample.get("trivial_type") is not None
        )
    return evidence


def tasks_list(rows: list[TaskSignals], report: dict) -> list[dict]:
    """One entry per row: ids, the clone evidence, every signal's score, relative views."""
    evidence = clone_evidence(report)
    entries = []
    for row in rows:
        label = prompt_label(row.prompt_set, row.variant)
        entries.append(
            {
                "model": row.model,
                "settings_key": row.settings_key,
                "temperature": row.temperature,
                "prompt_set": label,
                "task_id": row.task_id,
                "mode": row.mode,
                "samples": row.samples,
                "clones": evidence.get((row.model, row.temperature, label, row.task_id)),
                "signals": {name: score.to_dict() for name, score in row.scores.items()},
                "relative": row.relative,
            }
        )
    return entries


def signal_groups(rows: list[TaskSignals]) -> list[dict]:
    """Per model x temperature x prompt set: each signal's available count and distribution
    over tasks; CDD's share of tasks over its threshold; surface similarity over samples."""
    grouped: dict[tuple, list[TaskSignals]] = defaultdict(list)
    for row in rows:
        label = prompt_label(row.prompt_set, row.variant)
        grouped[(row.model, row.settings_key, row.temperature, label)].append(row)
    summaries = []
    for (model, key, temperature, label), members in grouped.items():
        per_signal = {}
        for name in members[0].scores:
            scores = [m.scores[name] for m in members]
            values = [s.value for s in scores if s.value is not None]
            summary: dict = {"tasks": len(scores), "available": len(values)}
            if values:
                summary.update(mean=statistics.fmean(values), median=statistics.median(values))
            else:
                summary["reason"] = next((s.reason for s in scores if s.reason), None)
            if name == "cdd":
                summary["tasks_over_xi"] = sum(1 for s in scores if s.detail.get("contaminated"))
            if name == "surface":
                summary["samples"] = distribution(
                    [v for s in scores for v in s.detail.get("per_sample", [])]
                )
            per_signal[name] = summary
        summaries.append({"model": model, "settings_key": key, "temperature": temperature,
                          "prompt_set": label, "signals": per_signal})  # fmt: skip
    return summaries


def signals_section(rows: list[TaskSignals], names, reference_model: str | None) -> dict:
    """What the report says about the signals as a whole."""
    return {
        "names": list(names),
        "higher_means_memorized": {n: SIGNALS[n].higher_means_memorized for n in names},
        "reference_model": reference_model,
        "relative": "evidence(target) - evidence(reference): positive is more memorization-"
        "like; 'fixed' compares the original prompt with the fixed one, 'reference' the "
        "model with the reference model; perplexity on the log scale",
        "groups": signal_groups(rows),
    }
