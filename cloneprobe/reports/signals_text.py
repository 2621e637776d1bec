"""The signals of a report as rich terminal tables: per group, and per task."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.evidence.verdict import calibration_line
from cloneprobe.reports.safe_text import terminal_text
from cloneprobe.signals.registry import short_name

from .task_rows import VERDICT_HEADER, VERDICT_TITLE, verdict_group_rows
from .text import print_table


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def print_signal_groups(report: AuditReport, console: Console) -> None:
    """Per model x temperature x prompt set: each signal's median over tasks (n/a: why)."""
    section = report.signals
    if not section:
        return
    names = section["names"]
    table = Table(title="Memorization signals, median over tasks "
                  "(ppl: lower is more memorized; the others: higher)",
                  title_justify="left")  # fmt: skip
    for column in ("model", "T", "prompts", "tasks", *(short_name(n) for n in names)):
        # T is a key like model and prompts: left, so a split table repeats it in every piece
        table.add_column(column, justify="left" if column in ("model", "T", "prompts")
                         else "right")  # fmt: skip
    reasons: dict[str, str] = {}
    for group in section["groups"]:
        cells = []
        for name in names:
            summary = group["signals"].get(name, {})
            cells.append(_number(summary.get("median")))
            if summary.get("reason"):
                reasons.setdefault(name, summary["reason"])
        tasks = max((s.get("tasks", 0) for s in group["signals"].values()), default=0)
        table.add_row(*map(terminal_text, (group["model"], f"{group['temperature']:g}",
                                           group["prompt_set"], str(tasks), *cells)))
    console.print(table)
    for name, reason in reasons.items():
        console.print(terminal_text(f"{name} n/a: {reason}", "dim"), highlight=False,
                      soft_wrap=True)


def print_signal_tasks(report: AuditReport, console: Console) -> None:
    """One row per task: its best clone type and every signal's score."""
    section = report.signals
    if not section:
        return
    names = section["names"]
    table = Table(title="Per task: clone evidence and signals", title_justify="left")
    for column in ("model", "T", "prompts", "task", "clone", *(short_name(n) for n in names),
                   "verdict"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("model", "T", "prompts", "task",
                                                              "verdict") else "right")  # fmt: skip
    for entry in report.tasks or []:
        clones = entry.get("clones") or {}
        best = clones.get("best_type")
        tier = f" {clones['tier']}" if clones.get("tier") else ""
        cells = [_number(entry["signals"][n]["value"]) for n in names]
        clone = (f"Type-{best}" if best else "-") + tier
        table.add_row(*map(terminal_text, [
            entry["model"], f"{entry['temperature']:g}", entry["prompt_set"], entry["task_id"],
            clone, *cells, entry.get("verdict", "-")]))  # fmt: skip
    console.print(table)


def print_verdicts(report: AuditReport, console: Console) -> None:
    """Per group: how many tasks got each verdict, then the rule and its error rates."""
    rows = verdict_group_rows(report)
    if not rows:
        return
    print_table(console, VERDICT_TITLE, VERDICT_HEADER, rows)
    console.print(terminal_text(calibration_line()), highlight=False, soft_wrap=True)
