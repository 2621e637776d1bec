"""Evidence rates per group, with 95% intervals, and original against fixed on evidence.

Headline rates count evidence only, over informative tasks (uninformative tasks are left out
and named in the report): the task rate with a Wilson interval, the sample rate with a
bootstrap interval that resamples tasks.
"""

from __future__ import annotations

from collections import defaultdict

from ..stats import bootstrap_difference, bootstrap_ratio, mcnemar_exact, wilson_interval
from .assess import EvidenceView
from .tiers import EVIDENCE, SIMILAR


def _pct(value: float) -> float:
    return round(100 * value, 2)


def task_tiers(group, view: EvidenceView) -> dict[str, str | None]:
    """Per informative task of the group: `evidence`, `similar` or None (no clone)."""
    tiers: dict[str, str | None] = {}
    for judged in group.samples:
        task = judged.sample.task_id
        if task not in view.informative_tasks:
            continue
        evidence = view.samples.get(judged.sample.id)
        tier = evidence.tier if evidence else None
        current = tiers.get(task)
        if tier == EVIDENCE or current == EVIDENCE:
            tiers[task] = EVIDENCE
        elif tier == SIMILAR or current == SIMILAR:
            tiers[task] = SIMILAR
        else:
            tiers[task] = None
    return tiers


def group_evidence(group, view: EvidenceView) -> dict:
    """The keys a group's summary gains."""
    tiers = task_tiers(group, view)
    tasks = len(tiers)
    with_evidence = sum(1 for t in tiers.values() if t == EVIDENCE)
    low, high = wilson_interval(with_evidence, tasks)
    per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for judged in group.samples:
        task = judged.sample.task_id
        if task in view.informative_tasks:
            evidence = view.samples.get(judged.sample.id)
            per_task[task][0] += int(bool(evidence and evidence.tier == EVIDENCE))
            per_task[task][1] += 1
    clusters = [tuple(v) for v in per_task.values()]
    rate, s_low, s_high = bootstrap_ratio(clusters)  # type: ignore[arg-type]
    group_tasks = {j.sample.task_id for j in group.samples}
    return {
        "informative_tasks": tasks,
        "tasks_with_evidence": with_evidence,
        "evidence_task_rate": _pct(with_evidence / tasks) if tasks else 0.0,
        "evidence_task_ci95": [_pct(low), _pct(high)],
        "tasks_similar_only": sum(1 for t in tiers.values() if t == SIMILAR),
        "informative_samples": sum(t for _, t in clusters),
        "samples_with_evidence": sum(h for h, _ in clusters),
        "evidence_sample_rate": _pct(rate),
        "evidence_sample_ci95": [_pct(s_low), _pct(s_high)],
        "uninformative_tasks": sorted(group_tasks - view.informative_tasks),
    }


def compare_on_evidence(groups, comparisons: list[dict], view: EvidenceView) -> None:
    """Add `evidence` to each original-against-other comparison: tasks with evidence under
    each prompt set, McNemar on the discordant tasks, the rate difference with its interval."""
    by_label = {(g.model_label or g.model, g.temperature, g.label): g for g in groups}
    for comparison in comparisons:
        key = (comparison["model"], comparison["temperature"])
        base = by_label.get((*key, comparison["original"]))
        other = by_label.get((*key, comparison["other"]))
        if base is None or other is None:
            continue
        first_tiers, second_tiers = task_tiers(base, view), task_tiers(other, view)
        shared = sorted(set(first_tiers) & set(second_tiers))
        first = [first_tiers[t] == EVIDENCE for t in shared]
        second = [second_tiers[t] == EVIDENCE for t in shared]
        only_first = sum(a and not b for a, b in zip(first, second, strict=True))
        only_second = sum(b and not a for a, b in zip(first, second, strict=True))
        difference, low, high = bootstrap_difference(first, second)
        comparison["evidence"] = {
            "tasks": len(shared),
            "tasks_with_evidence_original": sum(first),
            "tasks_with_evidence_other": sum(second),
            "only_original": only_first,
            "only_other": only_second,
            "mcnemar_p": mcnemar_exact(only_first, only_second),
            "rate_difference": _pct(difference),
            "ci95": [_pct(low), _pct(high)],
        }
