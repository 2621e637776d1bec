"""The report as rich terminal tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..align import align_lines
from .tables import settings_line


def print_report(report: dict, console: Console, evidence: bool = False) -> None:
    console.print(f"[bold]cloneprobe audit[/bold]: {settings_line(report)}", highlight=False,
                  soft_wrap=True)  # fmt: skip
    table = Table(title="Tasks with a clone of the canonical solution (cumulative)",
                  title_justify="left")  # fmt: skip
    for column in ("model", "temp", "prompts", "tasks", "samples", "Type-1", "Type-2",
                   "Type-3", "samples T1/T2/T3", "trivial only"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("model", "prompts") else "right")
    for g in report["groups"]:
        cells = [f"{g['tasks_with_clone'][t]} ({g['task_rate'][t]:.1f}%)" for t in ("1", "2", "3")]
        samples = "/".join(str(g["samples_with_clone"][t]) for t in ("1", "2", "3"))
        table.add_row(g["model"], f"{g['temperature']:g}", g["prompt_set"], str(g["tasks"]),
                      str(g["samples"]), *cells, samples, str(g["tasks_trivial_only"]))  # fmt: skip
    console.print(table)
    if report["comparisons"]:
        comparison = Table(title="Original against other prompts (tasks with a clone)",
                           title_justify="left")  # fmt: skip
        for column in ("model", "temp", "vs", "type", "original", "other", "only orig.",
                       "only other", "McNemar p", "difference [95% CI]"):  # fmt: skip
            comparison.add_column(column, justify="left" if column in ("model", "vs") else "right")
        for c in report["comparisons"]:
            for t, s in c["by_type"].items():
                comparison.add_row(
                    c["model"], f"{c['temperature']:g}", c["other"], t,
                    str(s["tasks_cloned_original"]), str(s["tasks_cloned_other"]),
                    str(s["only_original"]), str(s["only_other"]), f"{s['mcnemar_p']:.3g}",
                    f"{s['rate_difference']:+.1f} pp [{s['ci95'][0]:+.1f}, {s['ci95'][1]:+.1f}]",
                )  # fmt: skip
        console.print(comparison)
    pairs = report["evidence"]
    console.print(f"{len(pairs)} clone pair(s) as evidence"
                  + ("" if evidence else " (--evidence prints them side by side)"),
                  highlight=False)  # fmt: skip
    if evidence:
        for pair in pairs:
            console.print(
                f"\n[bold]{pair['model']} t={pair['temperature']:g} {pair['prompt_set']} "
                f"{pair['task_id']} sample {pair['sample']}[/bold]: type {pair['type']}, "
                f"{pair['similarity']}% vs canonical of {pair['canonical_task']}",
                highlight=False, soft_wrap=True,
            )  # fmt: skip
            side = Table(show_header=True)
            side.add_column("canonical", overflow="fold")
            side.add_column("sample", overflow="fold")
            left, right = pair["compared"]["canonical"], pair["compared"]["sample"]
            for same, a, b in align_lines(left, right):
                side.add_row(a, b, style=None if same else "yellow")
            console.print(side)
