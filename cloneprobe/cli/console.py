"""Consoles for user-facing output, and progress bars (tables stay whole when piped)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from cloneprobe.audit.audit_report import AuditReport
from cloneprobe.reports.safe_text import terminal_text

PIPED_WIDTH = 80


def piped_width() -> int:
    """The width of output that is not a terminal: `COLUMNS` when it is set, else 80 (what a
    terminal shows, so that piped output still fits one; `COLUMNS=200` widens it)."""
    import os

    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdecimal() and int(value) >= 20 else PIPED_WIDTH


HEADER_WORD = 12
"""Header words up to this long ("temperature", "convergence)") stay whole: a table whose
columns cannot all keep them is split into several rather than break a word ("temper/ature")."""


def _longest_word(cell) -> int:
    text = cell.plain if hasattr(cell, "plain") else cell if isinstance(cell, str) else ""
    return max((len(word) for word in text.split()), default=0)


def fit_table(table, console: Console) -> None:
    """Fit a table into the console's width without cutting a cell ("embe…", "[+0.…"):
    columns narrow where they have room to spare, so a number or word stays whole (and, when
    there is room, a header word too); only when even that cannot fit does a long word fold
    onto the next line. Nested tables fold their cells."""
    from rich.table import Table

    if not isinstance(table, Table):
        return
    for column in table.columns:
        if column.overflow == "ellipsis":
            column.overflow = "fold"
        for cell in column._cells:
            if isinstance(cell, Table):
                fit_table(cell, console)
    columns = table.columns
    if not columns or any(c.width is not None for c in columns):
        return
    pads = [table._get_padding_width(c._index) for c in columns]
    available = console.width - table._extra_width
    natural = [table._measure_column(console, console.options, c).maximum for c in columns]
    if sum(natural) <= available:
        return
    tiers = [_cells_need(table, console, header)[0] for header in (99, HEADER_WORD, 5, 0)]
    need = next((n for n in tiers if sum(n) <= available), None)
    if need is None:
        return  # too many columns for the width: split by `fitted`, or rich folds
    widths = [max(w, n) for w, n in zip(natural, need, strict=True)]
    while sum(widths) > available:
        index = max(range(len(widths)), key=lambda i: widths[i] - need[i])
        widths[index] -= 1
    for column, width, pad in zip(columns, widths, pads, strict=True):
        column.width = max(1, width - pad)




def _cells_need(table, console: Console, header: int = 0) -> tuple[list[int], int]:
    """Per column the width its longest cell word needs (and its header words, up to
    `header` characters), with padding; and the width the columns may take."""
    pads = [table._get_padding_width(c._index) for c in table.columns]
    need = [max([min(_longest_word(c.header), header), *(_longest_word(x) for x in c._cells)])
            + p for c, p in zip(table.columns, pads, strict=True)]  # fmt: skip
    return need, console.width - table._extra_width


def split_columns(table, console: Console) -> list:
    """A table too wide for the console even with every word whole, as several tables: the
    leading key columns (left-aligned, up to four: model, temperature, prompts, clone type:
    what tells one row from another) repeated in each, the other columns shared out in order
    so that each table fits."""
    from rich.table import Table

    columns = table.columns
    keys = 0
    while keys < min(4, len(columns) - 1) and columns[keys].justify in ("left", "default"):
        keys += 1
    need, available = _cells_need(table, console, HEADER_WORD)
    border = 1  # a column's share of the borders (need holds its padding)
    key_width = sum(need[:keys]) + border * keys + 1
    parts: list[list[int]] = [[]]
    used = key_width
    for index in range(keys, len(columns)):
        width = need[index] + border
        if parts[-1] and used + width > available + table._extra_width:
            parts.append([])
            used = key_width
        parts[-1].append(index)
        used += width
    if len(parts) == 1:
        return [table]
    tables = []
    rows = len(columns[0]._cells)
    for number, part in enumerate(parts, 1):
        title = table.title if number == 1 else f"{table.title or ''} ({number}/{len(parts)})"
        piece = Table(title=title, title_justify=table.title_justify, box=table.box,
                      show_header=table.show_header)  # fmt: skip
        chosen = list(range(keys)) + part
        for index in chosen:
            column = columns[index]
            piece.add_column(column.header, justify=column.justify, overflow="fold")
        for row in range(rows):
            piece.add_row(*(columns[index]._cells[row] for index in chosen))
        tables.append(piece)
    return tables


def fitted(renderable, console: Console) -> list:
    """The renderable as one or more renderables that fit the console (tables only change)."""
    from rich.table import Table

    if not isinstance(renderable, Table) or not renderable.columns:
        return [renderable]
    need, available = _cells_need(renderable, console, HEADER_WORD)
    pieces = split_columns(renderable, console) if sum(need) > available else [renderable]
    for piece in pieces:
        fit_table(piece, console)
    return pieces


class FittingConsole(Console):
    """A console whose tables fit its width by narrowing and wrapping, never by cutting."""

    def print(self, *objects, **kwargs) -> None:
        kwargs["soft_wrap"] = False  # lines wrap at the width (COLUMNS when piped)
        if len(objects) == 1 and not isinstance(objects[0], str):
            pieces = fitted(objects[0], self)
            for piece in pieces[:-1]:
                super().print(piece, **kwargs)
            objects = (pieces[-1],)
        for renderable in objects:
            fit_table(renderable, self)
        super().print(*objects, **kwargs)


def output_console() -> Console:
    """stdout; when it is not a terminal, `COLUMNS` wide (else 80)."""
    console = FittingConsole()
    return console if console.is_terminal else FittingConsole(width=piped_width())


def error_console() -> Console:
    """stderr, for progress, warnings and errors."""
    console = FittingConsole(stderr=True)
    return console if console.is_terminal else FittingConsole(stderr=True, width=piped_width())


class RateColumn(ProgressColumn):
    """Items this run made per second of its elapsed time (the `made` field, if set)."""

    def render(self, task) -> Text:
        made, elapsed = task.fields.get("made", 0), task.elapsed or 0
        return Text(f"{made / elapsed:.2f} samples/s" if made and elapsed else "- samples/s")


class FailuresColumn(ProgressColumn):
    def render(self, task) -> Text:
        failed = task.fields.get("failed", 0)
        return Text(f"{failed} failed", style="red" if failed else "dim")


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        FailuresColumn(),
        console=console,
    )


class _BarTask:
    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar, self.task = bar, task

    def advance(self, count: int = 1) -> None:
        task = self.bar.tasks[self.task]
        if task.total is not None and task.completed + count > task.total:
            self.bar.update(self.task, total=task.completed + count)
        self.bar.advance(self.task, count)

    def update(self, completed: int, failed: int = 0, made: int = 0) -> None:
        total = max(self.bar.tasks[self.task].total or 0, completed)  # more than counted
        if not made:  # what the store already held: no speed, so no false ETA, from it
            self.bar.reset(self.task, total=total, completed=completed, failed=failed, made=0)
            return
        self.bar.update(self.task, total=total)
        self.bar.update(self.task, completed=completed, failed=failed, made=made)


class _Plans:
    def plan(self, lines: list[str]) -> None:
        """What the work about to start will do (samples, models, store, estimate)."""
        from .plan import print_plan

        print_plan(self.console, "plan", lines)  # type: ignore[attr-defined]


class BarReporter(_Plans):
    """The pipeline's `Reporter` drawn as rich progress bars on `console` (stderr)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    @contextmanager
    def task(self, description: str, total: int, completed: int = 0) -> Iterator[_BarTask]:
        with progress_bar(self.console) as bar:
            task = bar.add_task(description, total=total, completed=completed, failed=0)
            yield _BarTask(bar, task)

    @contextmanager
    def status(self, text: str) -> Iterator[None]:
        with self.console.status(text):
            yield

    def warn(self, text: str) -> None:
        self.console.print(Text("warning: ", style="yellow").append(terminal_text(text)),
                           highlight=False, soft_wrap=True)  # fmt: skip


def clock(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class _LineTask:
    """Progress as plain lines: at the start, every `every` seconds (also while nothing
    finishes, e.g. a local model's batch), and at the end."""

    def __init__(self, console: Console, description: str, total: int, completed: int,
                 every: float, planned: float | None = None) -> None:  # fmt: skip
        self.console, self.description, self.total = console, description, total
        self.planned = planned
        """The plan's estimate in seconds, the ETA until this run has a measured rate."""
        self.completed, self.failed, self.made, self.every = completed, 0, 0, every
        self.initial = completed
        self.started = self.last = time.monotonic()
        self.say("started")
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True)
        self.ticker.start()

    def _tick(self) -> None:
        while not self.stopped.wait(max(self.every, 0.05)):
            self._maybe_say()

    def stop(self) -> None:
        self.stopped.set()
        self.ticker.join()

    def say(self, state: str) -> None:
        elapsed = time.monotonic() - self.started
        self.total = max(self.total, self.completed)  # more than counted at the start
        made = self.made or max(self.completed - self.initial, 0)
        rate = f", {made / elapsed:.3g}/s" if made and elapsed > 0 else ""
        left = self.total - self.completed
        if state in ("started", "finished") or not left:
            eta = ""
        elif made and elapsed > 0:
            eta = f", ETA {clock(left * elapsed / made)}"
        elif self.planned is not None and elapsed < self.planned:  # nothing back yet
            eta = f", ETA about {clock(self.planned - elapsed)} by the plan's estimate"
        elif self.planned is not None:
            eta = (f", past the plan's estimate of {clock(self.planned)} (a busy machine?); "
                   "the ETA follows the first finish")  # fmt: skip
        else:
            eta = ", ETA unknown until the first finish"
        failed = f", {self.failed} failed" if self.failed else ""
        self.console.print(
            terminal_text(f"{self.description}: {self.completed}/{self.total} {state} "
                          f"({clock(elapsed)}{rate}{eta}{failed})"),
            highlight=False, soft_wrap=True,
        )  # fmt: skip
        self.last = time.monotonic()

    def _maybe_say(self) -> None:
        if time.monotonic() - self.last >= self.every:
            self.say("done so far")

    def advance(self, count: int = 1) -> None:
        self.completed += count
        self.made += count
        self._maybe_say()

    def update(self, completed: int, failed: int = 0, made: int = 0) -> None:
        self.completed, self.failed, self.made = completed, failed, made
        self._maybe_say()


class LineReporter(_Plans):
    """The pipeline's `Reporter` for output that is not a terminal (piped to a file or a log):
    plain, rate-limited lines on stderr instead of bars that would print nothing."""

    def __init__(self, console: Console, every: float = 10.0) -> None:
        self.console, self.every = console, every
        self.planned: dict[str, float] = {}
        """Per task description (a model's label): the plan's estimate in seconds."""

    @contextmanager
    def task(self, description: str, total: int, completed: int = 0) -> Iterator[_LineTask]:
        line = _LineTask(self.console, description, total, completed, self.every,
                         self.planned.get(description))  # fmt: skip
        try:
            yield line
        finally:
            line.stop()
        line.say("finished")

    @contextmanager
    def status(self, text: str) -> Iterator[None]:
        self.console.print(terminal_text(text), highlight=False, soft_wrap=True)
        yield

    def warn(self, text: str) -> None:
        self.console.print(terminal_text("warning: " + text), highlight=False, soft_wrap=True)


def progress_reporter():
    """Bars on a terminal, plain lines when stderr is piped."""
    console = error_console()
    return BarReporter(console) if console.is_terminal else LineReporter(console)


def print_signal_sections(report: AuditReport, options: dict) -> None:
    """The signals and per-task verdicts the report holds (`audit --signals`, or stored ones
    that `report` reads back), as tables after the clone tables; nothing under --json."""
    if report.signals and not options.get("as_json"):
        from ..reports.signals_text import print_signal_groups, print_verdicts

        print_signal_groups(report, output_console())
        print_verdicts(report, output_console())


def emit_report(report: AuditReport, options: dict) -> None:
    """The audit report as JSON on stdout (--json) or tables, and the --report files. The
    report is complete (the pipeline built it); this only renders it."""
    import click

    from ..reports import write_reports
    from ..reports.text import print_report

    for reason, count in report.skipped.items():
        error_console().print(
            Text("warning: ", style="yellow").append(terminal_text(
                f"{count} samples left out of the report: {reason}")),
            highlight=False, soft_wrap=True,
        )  # fmt: skip
    if options.get("as_json"):
        for chunk in report.json_chunks():
            click.echo(chunk, nl=False)
    else:
        print_report(report, output_console(), evidence=options.get("evidence", False))
        if report.file_verdicts:
            from cloneprobe.audit.file_verdicts import file_verdicts_lines

            for line in file_verdicts_lines(report.file_verdicts):
                output_console().print(terminal_text(line), highlight=False)
        if report.contamination is not None:
            output_console().print(contamination_table(report.contamination))
    if options.get("report_dir"):
        paths = write_reports(report, options["report_dir"])
        error_console().print(
            terminal_text("report written: " + ", ".join(str(p) for p in paths)),
            highlight=False, soft_wrap=True,
        )  # fmt: skip


TOKENS_HEADER = "tokens (prompt + completion)"
"""The Generation table's token column: the two counts its cells add (words no longer than
`HEADER_WORD`, so the header stays whole at 80 columns)."""


def generation_table(summaries):
    """Per model: samples planned, already stored, generated, failed, tokens (of the prompts
    and of the completions, as the backend counted them), time."""
    from rich.table import Table

    table = Table(title="Generation", title_justify="left")
    for column in ("model", "planned", "already stored", "generated", "failed",
                   TOKENS_HEADER, "time"):  # fmt: skip
        table.add_column(column, justify="left" if column == "model" else "right")
    for s in summaries:
        table.add_row(
            terminal_text(s.model), str(s.planned), str(s.already_stored), str(s.generated),
            str(s.failed), f"{s.prompt_tokens} + {s.completion_tokens}", f"{s.seconds:.1f} s",
        )  # fmt: skip
    return table


def report_sections(options: dict):
    """The sections a command's options ask the report to take from outside the store."""
    from ..pipeline import ReportSections

    return ReportSections(options.get("contamination_dir"))


def contamination_table(split: dict):
    """Found in the corpus against not found: tasks, pass@1, clone rate, difference, p."""
    from rich.table import Table

    title = (f"Contamination split ({split['scan']}: {len(split['found_tasks'])} tasks found in "
             "the corpus)")
    table = Table(title=terminal_text(title), title_justify="left")
    for column in ("model", "T", "prompts", "tasks found/not", "pass@1 found/not",
                   "p", "clone rate found/not", "p"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("model", "prompts") else "right")

    def pair(row: dict, key: str, scale: float = 1) -> str:
        a, b = row["found"].get(key), row["not_found"].get(key)
        show = lambda v: "-" if v is None else f"{v * scale:.1f}"  # noqa: E731
        return f"{show(a)} / {show(b)}"

    for row in split["groups"]:
        table.add_row(*map(terminal_text, (
            row["model"], str(row["temperature"]), row["prompt_set"],
            f"{row['found']['tasks']} / {row['not_found']['tasks']}", pair(row, "pass@1"),
            str(row.get("pass@1_p_value", "-")), pair(row, "clone_rate", 100),
            str(row.get("clone_rate_p_value", "-")),
        )))  # fmt: skip
    return table
