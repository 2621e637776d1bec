"""The report as rich terminal tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.audit.verdict_summary import pair_standing
from cloneprobe.reports.align import align_lines, shape_of
from cloneprobe.reports.safe_text import terminal_text
from cloneprobe.reports.side_rows import side_by_side_table

from . import evidence_tables as ev
from .summary_lines import summary_lines
from .tables import (
    COMPARISON_HEADER,
    CORRECTNESS_HEADER,
    CORRECTNESS_TITLE,
    GROUP_HEADER,
    display_comparison_rows,
    display_correctness_rows,
    display_group_rows,
    isolation_line,
    pair_count_line,
    repair_line,
    runs_line,
    settings_line,
)


def print_report(report: AuditReport, console: Console, evidence: bool = False) -> None:
    line = Text("cloneprobe audit", style="bold")
    line.append(": ").append(terminal_text(settings_line(report)))
    console.print(line, highlight=False, soft_wrap=True)
    if runs_line(report):
        console.print(terminal_text(runs_line(report)), highlight=False, soft_wrap=True)
    for number, sentence in enumerate(summary_lines(report)):
        console.print(terminal_text(("" if number else "\n") + ("  " if number else "")
                                    + sentence, "" if number else "bold"),
                      highlight=False, soft_wrap=True)  # fmt: skip
    print_table(console, ev.EVIDENCE_TITLE, ev.EVIDENCE_HEADER, ev.display_evidence_rows(report))
    console.print(terminal_text(ev.uninformative_line(report)), highlight=False, soft_wrap=True)
    console.print(terminal_text(ev.chance_line(report)), highlight=False, soft_wrap=True)
    if ev.convergence_rule_line(report):
        console.print(terminal_text(ev.convergence_rule_line(report)), highlight=False,
                      soft_wrap=True)  # fmt: skip
    for line in ev.convergence_lines(report):
        console.print(terminal_text(line), highlight=False, soft_wrap=True)
    table = Table(title="Tasks with a clone of the canonical solution (cumulative)",
                  title_justify="left")  # fmt: skip
    for number, column in enumerate(GROUP_HEADER):
        table.add_column(column, justify="left" if number < 3 else "right")
    for row in display_group_rows(report):
        table.add_row(*map(terminal_text, row))
    console.print(table)
    comparisons = display_comparison_rows(report)
    if comparisons:
        comparison = Table(title="Original against other prompts (tasks with a clone)",
                           title_justify="left")  # fmt: skip
        for number, column in enumerate(COMPARISON_HEADER):  # keys: model, T, vs, type
            comparison.add_column(column, justify="left" if number < 4 else "right")
        for row in comparisons:
            comparison.add_row(*map(terminal_text, row))
        console.print(comparison)
    print_table(console, "Original against other prompts, on evidence",
                ev.EVIDENCE_COMPARISON_HEADER,
                ev.display_evidence_comparison_rows(report))  # fmt: skip
    correctness = display_correctness_rows(report)
    if correctness:
        print_table(console, CORRECTNESS_TITLE, CORRECTNESS_HEADER, correctness)
        console.print(isolation_line(report), highlight=False, markup=False)
        if repair_line(report):
            console.print(repair_line(report), highlight=False, markup=False)
    pairs = report.evidence
    total = report.evidence_total
    shown = "" if total == len(pairs) else f" ({len(pairs)} shown, at most " \
        f"{report.evidence_per_task} per group and task)"
    console.print(f"{pair_count_line(report)}{shown}"
                  + ("" if evidence else " (--evidence prints them side by side)"),
                  highlight=False)  # fmt: skip
    if evidence:
        for pair in pairs:
            title = Text("\n")
            title.append(terminal_text(
                f"{pair['model']} t={pair['temperature']:g} {pair['prompt_set']} "
                f"{pair['task_id']} sample {pair['sample']}", "bold"))
            title.append(terminal_text(
                f": type {pair['type']}, {pair['similarity']}% vs canonical of "
                f"{pair['canonical_task']}"))
            console.print(title, highlight=False, soft_wrap=True)  # fmt: skip
            reason = ev.pair_reason_line(pair, pair_standing(report, pair))
            if reason:
                console.print(terminal_text(reason), highlight=False, soft_wrap=True)
                for line in ev.pair_convergence_lines(report, pair):
                    console.print(terminal_text(line), highlight=False, soft_wrap=True)
            code = pair.get("code")  # the code as written (a report before it: compared lines)
            shown = "" if code else " (as compared)"
            left, right = (code or pair["compared"])["canonical"], (code or pair["compared"])[
                "sample"]
            aligned = align_lines(left, right, shape_of if code else None)
            console.print(side_by_side_table(aligned, (f"canonical{shown}", f"sample{shown}"),
                                             console.width, ("yellow",) * 3))  # fmt: skip


def print_table(console: Console, title: str, header: list[str], rows: list[list[str]]) -> None:
    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for number, column in enumerate(header):
        table.add_column(column, justify="left" if number < 3 else "right")
    for row in rows:
        table.add_row(*map(terminal_text, row))
    console.print(table)
