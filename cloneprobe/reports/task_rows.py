"""The per-task view as plain rows, shared by the terminal, Markdown and HTML reports: one row
per model x temperature x prompt set x task (pass@1, clone evidence, every signal, the
relative views, the combined verdict), and the verdicts counted per group."""

from __future__ import annotations

from collections import Counter

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.verdict_summary import task_entries
from cloneprobe.benchmarks.selection import task_order
from cloneprobe.evidence.verdict import VERDICTS
from cloneprobe.signals.registry import short_name

VIEWS = {"fixed": "vs fixed", "reference": "vs ref"}
VERDICT_HEADER = ["model", "temperature", "prompts", "tasks", *VERDICTS]
VERDICT_TITLE = "Per-task memorization verdict (counts of tasks)"
COLUMN_TITLES = {
    "verdict": "the task's verdict (hover over one for its meaning)",
    "T": "sampling temperature",
    "pass@1": "share of the task's executed samples that pass its tests",
    "clone": "the strongest evidence tier of the task's samples and their closest clone type",
    "why (verdict)": "what the verdict rests on",
    "why (clone)": "why the strongest clone is or is not evidence",
}
"""What each per-task column counts, shown on hover over its heading."""


def number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def signal_names(report: AuditReport) -> list[str]:
    return list((report.signals or {}).get("names") or [])


def relative_columns(report: AuditReport) -> list[tuple[str, str]]:
    """(view, signal) of every relative score some task has, in a stable order."""
    seen: dict[tuple[str, str], None] = {}
    for entry in report.tasks or []:
        for view in VIEWS:
            for name, value in ((entry.get("relative") or {}).get(view) or {}).items():
                if value is not None:
                    seen[(view, name)] = None
    order = signal_names(report)
    return sorted(seen, key=lambda k: (list(VIEWS).index(k[0]),
                                       order.index(k[1]) if k[1] in order else 99))  # fmt: skip


def task_header(report: AuditReport) -> list[str]:
    """The verdict first (what the row concludes), then what it rests on."""
    names = signal_names(report)
    return ["verdict", "model", "T", "prompts", "task", "pass@1", "clone",
            *(short_name(n) for n in names),
            *(f"{short_name(n)} {VIEWS[v]}" for v, n in relative_columns(report)),
            "why (verdict)", "why (clone)"]  # fmt: skip


def clone_cell(clones: dict | None) -> str:
    if not clones:
        return "-"
    best = clones.get("best_type")
    kind = f"Type-{best}" if best else ("trivial only" if clones.get("trivial_only") else "none")
    return f"{clones['tier']} ({kind})" if clones.get("tier") else kind


def task_rows(report: AuditReport) -> list[list[str]]:
    names = signal_names(report)
    columns = relative_columns(report)
    rows = []
    for entry in sorted(task_entries(report), key=reading_order):
        clones = entry.get("clones") or {}
        passed = entry.get("pass@1")
        rows.append(
            [entry.get("verdict", "-"), entry["model"], f"{entry['temperature']:g}",
             entry["prompt_set"], entry["task_id"],
             "-" if passed is None else f"{passed:.2f}", clone_cell(clones),
             *(number(entry["signals"].get(n, {}).get("value")) for n in names),
             *(number(((entry.get("relative") or {}).get(v) or {}).get(n)) for v, n in columns),
             "; ".join(entry.get("verdict_reasons") or []), "; ".join(clones.get("reasons") or [])]
        )  # fmt: skip
    return rows


def reading_order(entry) -> tuple:
    """The strongest claims first: by verdict, then model, temperature, prompts, task number."""
    verdict = entry.get("verdict")
    rank = VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)
    strength = -((entry.get("clones") or {}).get("strength") or 0.0)
    return (rank, strength, entry["model"], entry["temperature"],
            entry["prompt_set"] != "original", entry["prompt_set"], task_order(entry["task_id"]))


def verdict_group_rows(report: AuditReport) -> list[list[str]]:
    """Per model x temperature x prompt set: how many tasks got each verdict."""
    counts: dict[tuple, Counter] = {}
    for entry in task_entries(report):
        if "verdict" not in entry:
            continue
        key = (entry["model"], f"{entry['temperature']:g}", entry["prompt_set"])
        counts.setdefault(key, Counter())[entry["verdict"]] += 1
    return [[*key, str(sum(c.values())), *(str(c[v]) for v in VERDICTS)]
            for key, c in counts.items()]  # fmt: skip
