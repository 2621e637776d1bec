"""Plain rows shared by every format: one list of cells per group and per comparison."""

from __future__ import annotations

from cloneprobe.audit.aggregate import TYPES
from cloneprobe.audit.audit_report import AuditReport

GROUP_COLUMNS = [
    "model", "temperature", "prompt_set", "tasks", "samples",
    "tasks_type1", "tasks_type2", "tasks_type3",
    "tasks_type1_pct", "tasks_type2_pct", "tasks_type3_pct",
    "tasks_type1_exclusive", "tasks_type2_exclusive", "tasks_type3_exclusive",
    "samples_type1", "samples_type2", "samples_type3",
    "samples_type1_pct", "samples_type2_pct", "samples_type3_pct",
    "tasks_trivial_only", "settings_key",
]  # fmt: skip
COMPARISON_COLUMNS = [
    "model", "temperature", "original", "other", "type", "tasks", "cloned_original",
    "cloned_other", "only_original", "only_other", "mcnemar_p", "rate_difference_pp",
    "ci95_low", "ci95_high",
]  # fmt: skip


def group_rows(report: AuditReport) -> list[list]:
    rows = []
    for g in report.groups:
        rows.append(
            [g["model"], g["temperature"], g["prompt_set"], g["tasks"], g["samples"]]
            + [g["tasks_with_clone"][t] for t in TYPES]
            + [g["task_rate"][t] for t in TYPES]
            + [g["tasks_with_clone_exclusive"][t] for t in TYPES]
            + [g["samples_with_clone"][t] for t in TYPES]
            + [g["sample_rate"][t] for t in TYPES]
            + [g["tasks_trivial_only"], g["settings_key"]]
        )
    return rows


def comparison_rows(report: AuditReport) -> list[list]:
    rows = []
    for c in report.comparisons:
        for t, s in c["by_type"].items():
            rows.append(
                [c["model"], c["temperature"], c["original"], c["other"], t, c["tasks"],
                 s["tasks_cloned_original"], s["tasks_cloned_other"], s["only_original"],
                 s["only_other"], round(s["mcnemar_p"], 4), s["rate_difference"], *s["ci95"]]
            )  # fmt: skip
    return rows


def settings_line(report: AuditReport) -> str:
    s = report.settings
    types = ", ".join(f"{t['name']} (t={t['threshold']:g}, {t['rename']})" for t in s["types"])
    floor = f"; trivial under {s['min_tokens']} body tokens" if s.get("min_tokens") else ""
    scope = "every task's canonical" if s["cross_task"] else "its own task's canonical"
    subset = f"; {report.scope['note']}" if report.scope else ""
    return (
        f"profile {report.profile} ({s['grain']} LCS), min lines {s['min_lines']}, "
        f"max lines {s['max_lines']}{floor}; types {types}; each sample against {scope}"
        f"{subset}"
    )


LOCAL_BACKENDS = ("embedded", "hf", "control")


def runs_line(report: AuditReport) -> str:
    """How the report's samples were made: each model with its mode and, for a local model,
    the type it computed in (runs made before the type was recorded computed in float32)."""
    described: list[str] = []
    for run in report.settings.get("sampling", []):
        settings = run.get("settings") or {}
        dtype = settings.get("dtype")
        if dtype is None and settings.get("backend") in LOCAL_BACKENDS:
            dtype = "float32"
        parts = [f"{settings['mode']} mode" if settings.get("mode") else "", dtype or ""]
        text = run["model"] + (f" ({', '.join(p for p in parts if p)})" if any(parts) else "")
        if text not in described:
            described.append(text)
    return "Samples from " + "; ".join(described) + "." if described else ""


GROUP_HEADER = ["model", "temperature", "prompts", "tasks", "samples",
                *(f"tasks with Type-{t}" for t in TYPES), f"samples with T{'/T'.join(TYPES)}",
                "tasks with trivial clones only"]  # fmt: skip
COMPARISON_HEADER = ["model", "temperature", "vs", "type", "original", "other", "only original",
                     "only other", "McNemar p", "difference [95% CI]"]  # fmt: skip


def pair_count_line(report: AuditReport) -> str:
    """How many clone pairs, in how many tasks, and how many of them are evidence (a clone
    pair is not by itself evidence of memorization)."""
    from cloneprobe.audit.verdict_summary import pair_counts

    counts = pair_counts(report)
    if not report.has_evidence_view:
        return f"{counts.pairs} clone pair(s) in {counts.tasks} task(s)"
    return (f"{counts.pairs} clone pair(s) in {counts.tasks} task(s); {counts.evidence_pairs} "
            f"of them, in {counts.evidence_tasks} task(s), are candidate evidence; memorized "
            f"(rare under convergence): {counts.memorized_tasks} task(s)")


def display_group_rows(report: AuditReport) -> list[list[str]]:
    """Group rows as people read them: counts with task rates, sample counts per type."""
    return [
        [g["label"], f"{g['temperature']:g}", g["prompt_set"], str(g["tasks"]), str(g["samples"])]
        + [f"{g['tasks_with_clone'][t]} ({g['task_rate'][t]:.1f}%)" for t in TYPES]
        + ["/".join(str(g["samples_with_clone"][t]) for t in TYPES), str(g["tasks_trivial_only"])]
        for g in report.groups
    ]


def display_comparison_rows(report: AuditReport) -> list[list[str]]:
    return [
        [c["model"], f"{c['temperature']:g}", c["other"], t, str(s["tasks_cloned_original"]),
         str(s["tasks_cloned_other"]), str(s["only_original"]), str(s["only_other"]),
         f"{s['mcnemar_p']:.3g}",
         f"{s['rate_difference']:+.1f} pp [{s['ci95'][0]:+.1f}, {s['ci95'][1]:+.1f}]"]
        for c in report.comparisons
        for t, s in c["by_type"].items()
    ]  # fmt: skip


CORRECTNESS_HEADER = ["model", "temperature", "prompts", "samples passed/run", "pass@1", "pass@3",
                      "pass@10", "pass@1 no clone", "pass@1 with clone", "pass@1 w/o T1",
                      "w/o T1-2", "w/o T1-3 (drop)"]  # fmt: skip


CORRECTNESS_TITLE = "pass@k (percent) beside memorization"


def isolation_line(report: AuditReport) -> str:
    """Which isolation the executed samples ran under, for the line below the pass@k table."""
    isolation = report.settings.get("execution", {}).get("isolation", {})
    ran = ", ".join(f"{name} ({count} samples)" for name, count in sorted(isolation.items()))
    return f"sandbox isolation: {ran}" if ran else ""


def repair_line(report: AuditReport) -> str:
    """How many of the passes are of programs cloneprobe repaired, below the pass@k table."""
    parts, as_written = [], []
    for g in report.groups:
        c = g.get("correctness") or {}
        name = f"{g['label']} t={g['temperature']:g} {g['prompt_set']}"
        if g.get("as_written"):
            as_written.append(name)
        if c.get("passed_after_repair"):
            parts.append(f"{name}: {c['passed_after_repair']} of {c['passed']}")
    lines = []
    if as_written:
        lines.append("scored as written, no repair (--as-written): " + "; ".join(as_written))
    if parts:
        lines.append("passes that depend on a repair (the output as written does not parse or "
                     "lacks the prompt's helpers): " + "; ".join(parts) + "; --as-written "
                     "scores files exactly as given")  # fmt: skip
    return "\n".join(lines)


def display_correctness_rows(report: AuditReport) -> list[list[str]]:
    """pass@k beside memorization, for the groups whose samples were executed."""

    def pct(value) -> str:
        return "-" if value is None else f"{value:.1f}"

    rows = []
    for g in report.groups:
        c = g.get("correctness")
        if not c:
            continue
        d = c["decontaminated"]
        rows.append(
            [g["label"], f"{g['temperature']:g}", g["prompt_set"], f"{c['passed']}/{c['samples']}",
             pct(c.get("pass@1")), pct(c.get("pass@3")), pct(c.get("pass@10")),
             pct(c["without_clone"].get("pass@1")), pct(c["with_clone"].get("pass@1")),
             pct(d["1"]["pass@1"]), pct(d["2"]["pass@1"]),
             f"{pct(d['3']['pass@1'])} ({pct(d['3']['drop'])})"]
        )  # fmt: skip
    return rows
