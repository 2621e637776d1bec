"""The report's answer in plain sentences, shared by the terminal, Markdown and HTML: one
sentence for the whole report, one per model x temperature x prompt set."""

from __future__ import annotations

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.stats import wilson_interval
from cloneprobe.audit.verdict_summary import GroupVerdicts, group_verdicts, task_entries
from cloneprobe.evidence.verdict import MEMORIZED, SUSPECTED

SHOWN_TASKS = 5
"""Memorized tasks named in a group's sentence (the strongest first)."""


def shorten(text: str, limit: int = 140) -> str:
    """`text` cut at a word before `limit` characters (with an ellipsis when cut)."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def group_sentence(group: GroupVerdicts) -> str:
    """One line: how many of the group's tasks got each verdict, memorized ones named."""
    c = group.counts
    named = ", ".join(group.memorized[:SHOWN_TASKS]) + (
        ", ..." if len(group.memorized) > SHOWN_TASKS else "")  # fmt: skip
    low, high = wilson_interval(c[MEMORIZED], group.tasks)
    memorized = (f"{c[MEMORIZED]} of {group.tasks} tasks memorized (95% CI "
                 f"{100 * low:.0f}-{100 * high:.0f}% of such tasks)"
                 + (f": {named}" if named else ""))  # fmt: skip
    return (f"{group.model} at temperature {group.temperature:g}, {group.prompt_set} prompts: "
            f"{memorized}, {c[SUSPECTED]} suspected, {c['no evidence']} with no evidence, "
            f"{c['uninformative']} uninformative.")  # fmt: skip


def answer(groups: list[GroupVerdicts]) -> str:
    """The question the report answers, answered in one sentence."""
    memorized = [g for g in groups if g.counts[MEMORIZED]]
    suspected = [g for g in groups if g.counts[SUSPECTED]]
    models = sorted({g.model for g in groups})
    if memorized:
        per_model = []
        for model in sorted({g.model for g in memorized}):
            tasks = {t for g in memorized if g.model == model for t in g.memorized}
            per_model.append(f"{model} for {len(tasks)} task(s)")
        return ("Evidence of memorization: " + ", ".join(per_model) + " reproduced the canonical "
                "solution more closely than other solvers, chance and the prompt explain "
                "(each temperature and prompt set counted below).")  # fmt: skip
    if suspected:
        return ("No clone evidence of memorization, but some tasks are suspected: the model "
                "finds their canonical solution likelier than a reference model does.")
    return (f"No evidence of memorization: no task's samples from {', '.join(models)} copy its "
            "canonical solution beyond what other solvers, chance and the prompt explain.")


def summary_lines(report: AuditReport) -> list[str]:
    """The answer, then one sentence per group (empty when nothing was judged)."""
    groups = group_verdicts(task_entries(report))
    return [answer(groups), *(group_sentence(g) for g in groups)] if groups else []
