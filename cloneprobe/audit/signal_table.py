"""The report's per-task view: each task's clone evidence beside every signal's score, and a
per-group summary of the signals.

`tasks` is a flat list, one entry per model x temperature x prompt set x task, so a reader can
rank every task by any signal (and check the ranking against a known split).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from cloneprobe.audit.aggregate import TYPES, prompt_label
from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.evidence.verdict import DEFAULT_VERDICT_RULE, VerdictRule, task_verdict
from cloneprobe.signals.flow import TaskSignals
from cloneprobe.signals.registry import SIGNALS

TIER_ORDER = {"evidence": 3, "similar": 2, "uninformative": 1}
"""A task's clone tier is its strongest sample's."""


def clone_evidence(report: AuditReport) -> dict[tuple, dict]:
    """Per (model, temperature, prompt set label, task): the clone verdicts of its samples,
    their best evidence tier (with the strongest sample's reasons) and, when executed, how
    many passed."""
    evidence: dict[tuple, dict] = {}
    for sample in report.samples:
        key = (sample["model"], sample["temperature"], sample["prompt_set"], sample["task_id"])
        entry = evidence.setdefault(
            key,
            {"samples": 0, "best_type": None, "best_similarity": None,
             "samples_with_clone": dict.fromkeys(TYPES, 0), "trivial_only": False,
             "tier": None, "strength": None, "reasons": [], "samples_with_evidence": 0,
             "executed": 0, "passed": 0},
        )  # fmt: skip
        entry["samples"] += 1
        tier = sample.get("evidence_tier")
        entry["samples_with_evidence"] += tier == "evidence"
        strength = sample.get("evidence_strength") or 0.0
        if tier and (TIER_ORDER[tier], strength) > (
            TIER_ORDER.get(entry["tier"], 0),
            entry["strength"] or 0.0,
        ):
            entry.update(tier=tier, strength=strength,
                         reasons=list(sample.get("evidence_reasons") or []))  # fmt: skip
        if sample.get("passed") is not None:
            entry["executed"] += 1
            entry["passed"] += bool(sample["passed"])
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


def tasks_list(
    rows: list[TaskSignals], report: AuditReport, rule: VerdictRule = DEFAULT_VERDICT_RULE
) -> list[dict]:
    """One entry per row: ids, the clone evidence, every signal's score, relative views, and
    the combined verdict (`verdict`, `verdict_reasons`; cloneprobe.evidence.verdict)."""
    evidence = clone_evidence(report)
    convergence = task_convergence(report)
    uninformative = {u["task_id"] for u in report.uninformative_tasks or []}
    entries = []
    for row in rows:
        label = prompt_label(row.prompt_set, row.variant)
        clones = evidence.get((row.model, row.temperature, label, row.task_id))
        verdict = task_verdict(
            (clones or {}).get("tier"),
            row.task_id not in uninformative,
            row.relative,
            rule,
            (clones or {}).get("reasons") or (),
            any(s.detail.get("contaminated") for s in row.scores.values()),  # CDD's call
            convergence.get((row.model, row.temperature, label, row.task_id)),
        )
        entries.append(
            {
                "model": row.model,
                "settings_key": row.settings_key,
                "temperature": row.temperature,
                "prompt_set": label,
                "task_id": row.task_id,
                "mode": row.mode,
                "samples": row.samples,
                "clones": clones,
                "informative": row.task_id not in uninformative,
                "pass@1": pass_at_1(clones),
                "signals": {name: score.to_dict() for name, score in row.scores.items()},
                "relative": row.relative,
                "verdict": verdict.verdict,
                "verdict_reasons": list(verdict.reasons),
            }
        )
    return entries


def task_convergence(report: AuditReport) -> dict[tuple, dict]:
    """Each (model, temperature, prompt set, task)'s same-task convergence null, for the tasks
    with clone evidence (what decides `memorized`)."""
    return {
        (g["model"], g["temperature"], g["prompt_set"], task): null
        for g in report.groups
        for task, null in (g.get("convergence") or {}).items()
    }


def pass_at_1(clones: dict | None) -> float | None:
    """The task's pass@1 (passed over executed samples: the unbiased estimator at k = 1), or
    None when none of its samples ran."""
    if not clones or not clones["executed"]:
        return None
    return clones["passed"] / clones["executed"]


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
            if name in SIGNALS:  # what the signal adds (CDD's tasks over xi, surface's samples)
                summary.update(SIGNALS[name].group_summary(scores))
            per_signal[name] = summary
        summaries.append({"model": model, "settings_key": key, "temperature": temperature,
                          "prompt_set": label, "signals": per_signal})  # fmt: skip
    return summaries


def signals_section(rows: list[TaskSignals], names, reference_model: str | None,
                    rule: VerdictRule = DEFAULT_VERDICT_RULE) -> dict:  # fmt: skip
    """What the report says about the signals as a whole, and the verdict rule."""
    return {
        "verdict_rule": rule.as_dict(),
        "names": list(names),
        "higher_means_memorized": {n: SIGNALS[n].higher_means_memorized for n in names},
        "reference_model": reference_model,
        "relative": "evidence(target) - evidence(reference): positive is more memorization-"
        "like; 'fixed' compares the original prompt with the fixed one, 'reference' the "
        "model with the reference model; perplexity on the log scale",
        "groups": signal_groups(rows),
    }
