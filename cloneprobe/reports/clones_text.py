"""Terminal rendering of a CloneReport: settings, pairs table, and side-by-side evidence."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cloneprobe.reports.align import align_lines
from cloneprobe.reports.safe_text import terminal_text
from cloneprobe.reports.side_rows import side_by_side_table

from ..clones import ClonePair, CloneReport


def settings_line(report: CloneReport) -> str:
    """One line naming the profile and the settings that produced the report."""
    s = report.settings
    types = ", ".join(f"{t['name']} (t={t['threshold']:g}, {t['rename']})" for t in s["types"])
    floor = f", trivial under {s['min_tokens']} tokens" if s["min_tokens"] else ""
    return (
        f"profile {s['profile']} ({s['grain']} LCS), {s['granularity']}, "
        f"lines {s['min_lines']}..{s['max_lines']}{floor}; types {types}"
    )


def pairs_table(title: str, pairs: tuple[ClonePair, ...], class_of: dict[int, int]) -> Table:
    table = Table(title=title, title_justify="left")
    for column, justify in (("#", "right"), ("type", "left"), ("sim %", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("system A", overflow="fold")
    table.add_column("system B", overflow="fold")
    table.add_column("class", justify="right")
    for number, pair in enumerate(pairs, start=1):
        system_b = terminal_text(f"{pair.b.location} {pair.b.name}")
        if pair.a.has_errors or pair.b.has_errors:
            system_b.append(" (syntax errors)", style="yellow")
        table.add_row(
            str(number),
            pair.clone_type.name,
            str(pair.similarity),
            terminal_text(f"{pair.a.location} {pair.a.name}"),
            system_b,
            str(class_of.get(id(pair.a), "")),
        )
    return table


def side_by_side(pair: ClonePair, report: CloneReport, width: int) -> Table:
    """Compared lines aligned by their LCS, fitting `width`; every row of a line that differs
    is marked, and so is every row that goes on with the line above."""
    left, right = pair.compared(report.profile)
    return side_by_side_table(align_lines(left, right), ("system A", "system B"), width,
                              ("red", "red", "green"))  # fmt: skip


def print_clone_report(report: CloneReport, console: Console, explain: bool = False) -> None:
    title = Text("cloneprobe clones", style="bold").append(": " + settings_line(report))
    console.print(title, highlight=False, soft_wrap=True)
    for label, stats in (("A", report.system_a), ("B", report.system_b)):
        errors = f", {stats.with_errors} with syntax errors" if stats.with_errors else ""
        console.print(
            f"system {label}: {stats.files} files, {stats.fragments} fragments, "
            f"{stats.compared} within the size limits{errors}",
            highlight=False,
            soft_wrap=True,
        )
    class_of = {id(f): c.id for c in report.classes for f in c.fragments}
    clones, trivial = report.clone_pairs, report.trivial_pairs
    counts = ", ".join(
        f"Type-{name}: {sum(1 for p in clones if p.clone_type.name == name)}"
        for name in dict.fromkeys(t["name"] for t in report.settings["types"])
    )
    console.print(
        f"{len(clones)} clone pair(s) ({counts}) in {len(report.classes)} classes"
        + (f"; {len(trivial)} trivial (not counted)" if trivial else ""),
        highlight=False,
        soft_wrap=True,
    )
    if clones:
        console.print(pairs_table("Clone pairs", clones, class_of))
    if trivial:
        title = f"Trivial pairs (under {report.settings['min_tokens']} body tokens, not counted)"
        console.print(pairs_table(title, trivial, {}))
    if explain:
        for pair in (*clones, *trivial):
            kind = "trivial, " if pair.trivial else ""
            title = Text("\n").append(terminal_text(pair.a.location, "bold"))
            title.append(" ~ ").append(terminal_text(pair.b.location, "bold"))
            title.append(f": {kind}type {pair.clone_type.name}, {pair.similarity}% "
                         f"(renaming {pair.clone_type.rename})")  # fmt: skip
            console.print(title, highlight=False, soft_wrap=True)
            console.print(side_by_side(pair, report, console.width))
