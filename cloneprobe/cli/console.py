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

PIPED_WIDTH = 200


def output_console() -> Console:
    """stdout; when it is not a terminal, wide enough that tables are not folded."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)


def error_console() -> Console:
    """stderr, for progress, warnings and errors."""
    console = Console(stderr=True)
    return console if console.is_terminal else Console(stderr=True, width=PIPED_WIDTH)


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
        self.bar.advance(self.task, count)

    def update(self, completed: int, failed: int = 0, made: int = 0) -> None:
        self.bar.update(self.task, completed=completed, failed=failed, made=made)


class BarReporter:
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


class _LineTask:
    """Progress as plain lines: at the start, every `every` seconds (also while nothing
    finishes, e.g. a local model's batch), and at the end."""

    def __init__(self, console: Console, description: str, total: int, completed: int,
                 every: float) -> None:  # fmt: skip
        self.console, self.description, self.total = console, description, total
        self.completed, self.failed, self.made, self.every = completed, 0, 0, every
        self.started = self.last = time.monotonic()
        self.say("started")
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, daemon=True)
        self.ticker.start()

    def _tick(self) -> None:
        while not self.stopped.wait(self.every):
            self._maybe_say()

    def stop(self) -> None:
        self.stopped.set()
        self.ticker.join()

    def say(self, state: str) -> None:
        elapsed = time.monotonic() - self.started
        made = self.made or max(self.completed, 0)
        rate = f", {made / elapsed:.3g}/s" if made and elapsed > 0 else ""
        failed = f", {self.failed} failed" if self.failed else ""
        self.console.print(
            terminal_text(f"{self.description}: {self.completed}/{self.total} {state} "
                          f"({elapsed:.0f} s{rate}{failed})"),
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


class LineReporter:
    """The pipeline's `Reporter` for output that is not a terminal (piped to a file or a log):
    plain, rate-limited lines on stderr instead of bars that would print nothing."""

    def __init__(self, console: Console, every: float = 10.0) -> None:
        self.console, self.every = console, every

    @contextmanager
    def task(self, description: str, total: int, completed: int = 0) -> Iterator[_LineTask]:
        line = _LineTask(self.console, description, total, completed, self.every)
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
        if report.contamination is not None:
            output_console().print(contamination_table(report.contamination))
    if options.get("report_dir"):
        paths = write_reports(report, options["report_dir"])
        error_console().print(
            terminal_text("report written: " + ", ".join(str(p) for p in paths)),
            highlight=False, soft_wrap=True,
        )  # fmt: skip


def generation_table(summaries):
    """Per model: samples planned, already stored, generated, failed, tokens, time."""
    from rich.table import Table

    table = Table(title="Generation", title_justify="left")
    for column in ("model", "planned", "already stored", "generated", "failed", "tokens", "time"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for s in summaries:
        table.add_row(
            terminal_text(s.model), str(s.planned), str(s.already_stored), str(s.generated),
            str(s.failed), f"{s.prompt_tokens}+{s.completion_tokens}", f"{s.seconds:.1f} s",
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
