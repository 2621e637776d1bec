"""Evidence rates per group, with 95% intervals, and original against fixed on evidence.

Headline rates count evidence only, over informative tasks (uninformative tasks are left out
and named in the report): the task rate with a Wilson interval, the sample rate with a
bootstrap interval that resamples tasks. Everything comes from the per-task counts a group
keeps (`Group.evidence`: samples with evidence, with a similar solution, all), never from the
samples themselves.
"""

from __future__ import annotations

from cloneprobe.audit.stats import (
    bootstrap_difference,
    bootstrap_ratio,
    mcnemar_exact,
    wilson_interval,
)

from .tiers import EVIDENCE, SIMILAR


def _pct(value: float) -> float:
    return round(100 * value, 2)


def task_tiers(group) -> dict[str, str | None]:
    """Per informative task of the group: `evidence`, `similar` or None (no clone)."""
    return {
        task: EVIDENCE if evidence else SIMILAR if similar else None
        for task, (evidence, similar, _) in group.evidence.items()
    }


def peers(group, groups) -> dict[str, dict]:
    """Per task with evidence in `group`: its best evidence's verbatim similarity and how many
    answers of the same task in the report's other groups (other models, temperatures, prompt
    sets) reach it, from the groups' per-task similarity counts."""
    found = {}
    for task, best in sorted(group.evidence_verbatim.items()):
        others = [g.answers[task] for g in groups if g is not group and task in g.answers]
        found[task] = {
            "verbatim": best,
            "others_reaching": sum(n for c in others for v, n in c.items() if v >= best),
            "others": sum(sum(c.values()) for c in others),
        }
    return found


def group_evidence(group, uninformative: set[str], groups=(), view=None) -> dict:
    """The keys a group's summary gains; `uninformative`: the report's uninformative tasks;
    `groups`: every group of the report (for the peer counts and the convergence null);
    `view`: the evidence view (its panel, --panel files and families; None: none)."""
    tiers = task_tiers(group)
    tasks = len(tiers)
    with_evidence = sum(1 for t in tiers.values() if t == EVIDENCE)
    low, high = wilson_interval(with_evidence, tasks)
    clusters = [(evidence, total) for evidence, _, total in group.evidence.values()]
    rate, s_low, s_high = bootstrap_ratio(clusters)
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
        "uninformative_tasks": sorted(set(group.best) & uninformative),
        "evidence_peers": peers(group, groups),
        **convergence_keys(group, groups, view),
    }


def convergence_keys(group, groups, view) -> dict:
    """`convergence` per task with evidence, `tasks_memorized`, `tasks_convergence_missing`."""
    if view is None:
        return {}
    found = view.convergence(group, groups)
    return {
        "convergence": found,
        "tasks_memorized": sum(1 for n in found.values() if n["memorized"]),
        "tasks_convergence_missing": sorted(t for t, n in found.items() if n["missing"]),
    }


def compare_on_evidence(groups, comparisons: list[dict]) -> None:
    """Add `evidence` to each original-against-other comparison: tasks with evidence under
    each prompt set, McNemar on the discordant tasks, the rate difference with its interval."""
    by_label = {(g.model_label or g.model, g.temperature, g.label): g for g in groups}
    for comparison in comparisons:
        key = (comparison["model"], comparison["temperature"])
        base = by_label.get((*key, comparison["original"]))
        other = by_label.get((*key, comparison["other"]))
        if base is None or other is None:
            continue
        first_tiers, second_tiers = task_tiers(base), task_tiers(other)
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
