"""The evidence view as plain rows, shared by the terminal, Markdown and HTML reports.

Headline: tasks (and samples) whose verdict is evidence of memorization, over informative
tasks, with 95% intervals; beside it the tasks whose clones are only similar solutions. The
NiCad-style counts (Table VI) stay in their own table, unchanged.
"""

from __future__ import annotations

from cloneprobe.audit.audit_report import AuditReport

EVIDENCE_HEADER = ["model", "temperature", "prompts", "informative tasks",
                   "tasks with evidence [95% CI]", "samples with evidence [95% CI]",
                   "similar solutions only", "memorized (rare under convergence)"]  # fmt: skip
EVIDENCE_COMPARISON_HEADER = ["model", "temperature", "vs", "tasks", "evidence original",
                              "evidence other", "only original", "only other", "McNemar p",
                              "difference [95% CI]", "pass@1 original / other"]  # fmt: skip
EVIDENCE_TITLE = (
    "Evidence of memorization (headline: what convergence, chance and the prompt do not explain)"
)


def _interval(count: int, rate: float, ci: list[float]) -> str:
    return f"{count} ({rate:.1f}% [{ci[0]:.1f}, {ci[1]:.1f}])"


def display_evidence_rows(report: AuditReport) -> list[list[str]]:
    return [
        [g["label"], f"{g['temperature']:g}", g["prompt_set"], str(g["informative_tasks"]),
         _interval(g["tasks_with_evidence"], g["evidence_task_rate"], g["evidence_task_ci95"]),
         _interval(g["samples_with_evidence"], g["evidence_sample_rate"],
                   g["evidence_sample_ci95"]),
         str(g["tasks_similar_only"]), _memorized_cell(g)]
        for g in report.groups
        if "tasks_with_evidence" in g
    ]  # fmt: skip


def _memorized_cell(group: dict) -> str:
    if "tasks_memorized" not in group:
        return "-"
    missing = len(group.get("tasks_convergence_missing") or [])
    return f"{group['tasks_memorized']}" + (f" ({missing} unmeasured)" if missing else "")


def convergence_lines(report: AuditReport) -> list[str]:
    """Per group and task with evidence: the convergence figure, and for a memorized task the
    closest independent solutions (terminal and HTML)."""
    from cloneprobe.evidence.panel.convergence import closest_text

    lines = []
    for g in report.groups:
        for task, null in (g.get("convergence") or {}).items():
            state = ("MEMORIZED" if null["memorized"] else
                     "convergence not measured" if null["missing"] else
                     "convergent" if null["convergent"] else "not rare")  # fmt: skip
            lines.append(f"{g['label']} t={g['temperature']:g} {g['prompt_set']} {task}: "
                         f"{state}: {null['figure']}")  # fmt: skip
            if null["memorized"] or null["convergent"]:
                lines += ["    closest independent: " + c for c in closest_text(null)]
    return lines


def pair_convergence_lines(report: AuditReport, pair: dict) -> list[str]:
    """Beside a clone pair of a task with evidence: the rarity figure and the closest
    independent solutions of its task."""
    from cloneprobe.audit.verdict_summary import pair_null
    from cloneprobe.evidence.panel.convergence import closest_text

    null = pair_null(report, pair)
    if not null:
        return []
    if pair.get("tier") != "evidence":
        # the figure is the task's strongest evidence, not this pair: said so, so that a
        # "similar" pair is not followed by a "rare" that seems to be about it
        return [f"same-task convergence of the task's evidence (not this pair): "
                f"{null['figure']}"]  # fmt: skip
    return [f"same-task convergence: {null['figure']}"] + [
        "closest independent: " + c for c in closest_text(null)]  # fmt: skip


def convergence_rule_line(report: AuditReport) -> str:
    rule = (report.evidence_rule or {}).get("convergence")
    if not rule:
        return ""
    panel = rule.get("panel")
    shipped = ("no shipped panel for this benchmark" if panel is None else
               f"shipped panel stale: {panel['stale']}" if panel.get("stale") else
               f"shipped panel: {panel['models']} models of {len(panel['families'])} families "
               f"({', '.join(panel['families'])})")  # fmt: skip
    return (f"Memorized = clone evidence that no independent family reaches (within "
            f"{rule['margin']:g} structure or verbatim) and whose Benjamini-Hochberg q over the "
            f"group's tasks with evidence is <= {rule['alpha']:g} (false-discovery rate held "
            f"over the benchmark's tasks); {shipped}; --panel files: {rule['panel_files']} "
            "solutions; other models of the report count by family, the model's own "
            "disguised-prompt samples as samples.")  # fmt: skip


def display_evidence_comparison_rows(report: AuditReport) -> list[list[str]]:
    rows = []
    for c in report.comparisons:
        e = c.get("evidence")
        if not e:
            continue
        rows.append(
            [c["model"], f"{c['temperature']:g}", c["other"], str(e["tasks"]),
             str(e["tasks_with_evidence_original"]), str(e["tasks_with_evidence_other"]),
             str(e["only_original"]), str(e["only_other"]), f"{e['mcnemar_p']:.3g}",
             f"{e['rate_difference']:+.1f} pp [{e['ci95'][0]:+.1f}, {e['ci95'][1]:+.1f}]",
             _pass_cell(c.get("pass@1"))]
        )  # fmt: skip
    return rows


def _pass_cell(figure: dict | None) -> str:
    if not figure:
        return "-"
    return f"{figure['original']:.1f} / {figure['other']:.1f} ({figure['tasks']} tasks)"


def uninformative_line(report: AuditReport) -> str:
    tasks = report.uninformative_tasks or []
    if not tasks:
        return "Uninformative tasks (canonical mostly prompt code): none."
    named = ", ".join(f"{t['task_id']} ({t['prompt_share']:.0%} prompt code)" for t in tasks)
    return f"Uninformative tasks, left out of the evidence rates: {named}."


def chance_line(report: AuditReport) -> str:
    rule = report.evidence_rule or {}
    chance = rule.get("chance") or {}
    if not chance.get("comparisons"):
        return "Chance across tasks: not measured (a single task)."
    generic = ", ".join(chance.get("generic_tasks") or []) or "none"
    return (
        f"Chance across tasks: {chance['pairs']} of {chance['comparisons']} comparisons of other "
        f"tasks' answers with a canonical match it ({chance['rate']:.2f}%); generic canonicals "
        f"(over {100 * rule['chance_max']:.0f}%): {generic}. Reference solutions: "
        f"{rule.get('reference_solutions', 0)}."
    )


def pair_reason_line(pair: dict, standing: str | None = None) -> str:
    """One line: the pair's tier (for candidate evidence, its standing under the same-task
    convergence null: verdict_summary.pair_standing), strength and reasons."""
    if "tier" not in pair:
        return ""
    reasons = "; ".join(pair.get("reasons") or [])
    tier = pair["tier"]
    if standing == "memorized":
        tier = "evidence of memorization"
    elif standing:
        tier = f"candidate evidence, {standing} (not memorization)"
    return f"{tier} (strength {pair['strength']:.2f}): {reasons}"
