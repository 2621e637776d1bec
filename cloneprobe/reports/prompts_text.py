"""Terminal rendering of prompt sets: the sets and variants, the fixed set's issue kinds, and a
prompt's diff against the original with each change's reason."""

from __future__ import annotations

import difflib
from collections import Counter

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..benchmarks import ISSUE_KINDS, PromptSet
from ..benchmarks.prompts import fixed_records


def issue_summary() -> tuple[Counter, Counter]:
    """Tasks per issue kind found, and tasks per issue kind changed, in the fixed set."""
    found, changed = Counter(), Counter()
    for record in fixed_records():
        found.update(record["found"])
        changed.update({change["kind"] for change in record["changes"]})
    return found, changed


def sets_table(sets: list[PromptSet]) -> Table:
    table = Table(title="Prompt sets", title_justify="left")
    for column in ("set", "source", "variant", "tasks"):
        table.add_column(column, justify="right" if column == "tasks" else "left")
    for prompt_set in sets:
        for variant, count in prompt_set.variants().items():
            table.add_row(prompt_set.name, prompt_set.source, variant, str(count))
    return table


def issues_table() -> Table:
    found, changed = issue_summary()
    table = Table(title="Fixed set: tasks per issue kind", title_justify="left")
    table.add_column("issue kind")
    table.add_column("found", justify="right")
    table.add_column("changed", justify="right")
    for kind, label in ISSUE_KINDS.items():
        table.add_row(label, str(found.get(kind, 0)), str(changed.get(kind, 0)))
    return table


CONTINUED = "\u21aa "
"""After a diff line's marker, where the line goes on from the row above (it was wider than
the console)."""


def diff_rows(line: str, width: int) -> list[str]:
    """A unified-diff line as rows of at most `width` characters, cut between words where it
    can be: every row after the first starts with the line's own marker (`-`, `+` or a space)
    and CONTINUED, so a wrapped removed or added line still reads as removed or added, and as
    one line, with or without colour."""
    return continued_rows(line, width, line[:1] + CONTINUED)


def continued_rows(line: str, width: int, lead: str = CONTINUED) -> list[str]:
    """`line` as rows of at most `width` characters, cut between words where it can; every
    row after the first starts with `lead` (CONTINUED by default), so a reader sees where a
    line goes on and that it is one line (the marker the evidence tables and --diff use)."""
    if len(line) <= width or width <= len(lead) + 8:
        return [line]
    rows, rest = [], line
    while len(rest) > width:
        cut = rest.rfind(" ", len(lead) + 1 if rows else 2, width + 1)
        cut = cut if cut > (len(lead) if rows else 1) else width
        rows.append(rest[:cut].rstrip())
        rest = lead + rest[cut:].lstrip(" ")
    return [*rows, rest]


def print_prompt(console: Console, text: str) -> None:
    """A prompt, highlighted, its lines wider than the console cut into rows marked with
    CONTINUED (never wrapped by the console without a mark, never cropped)."""
    from rich.syntax import Syntax

    rows = [row for line in text.expandtabs().splitlines()
            for row in continued_rows(line, console.width)]  # fmt: skip
    if text.endswith("\n"):
        rows.append("")  # a blank row before the next variant
    console.print(Syntax("\n".join(rows), "python", theme="ansi_dark", word_wrap=False,
                         background_color="default"))  # fmt: skip


def print_diff(console: Console, task_id: str, original: str, other: str, label: str) -> None:
    console.print(f"[bold]{task_id}[/bold]: original -> {label}", highlight=False)
    diff = difflib.unified_diff(
        original.splitlines(), other.splitlines(), "original", label, lineterm="", n=2
    )
    shown = False
    for line in diff:
        shown = True
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan"
        for row in diff_rows(line.expandtabs(), console.width):
            console.print(Text(row, style=style if line[:1] in "+-@" else ""), soft_wrap=True)
    if not shown:
        console.print("(identical)")
