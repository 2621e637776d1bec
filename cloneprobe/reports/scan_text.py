"""What `cloneprobe scan` shows: a live progress line, and the scan's summary as tables."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

PIPED_SECONDS = 10.0


def progress_line(totals: dict) -> Text:
    seconds = totals.get("seconds") or 0
    megabytes = totals["characters"] / 1e6
    rate = f"{megabytes / seconds:.1f} MB/s" if seconds > 0 else "- MB/s"
    cpu = totals.get("cpu_seconds") or 0
    per_core = f"{megabytes / cpu:.1f} MB/s per busy core" if cpu > 0 else ""
    done, ranks = totals["ranks_done"], totals["ranks"]
    left = ranks - done
    if not left:
        eta = ""
    elif done and seconds > 0:  # ranks are equal shares of the corpus
        eta = f", ETA {seconds * left / done:.0f} s"
    else:
        eta = ", ETA after the first rank"
    return Text(
        f"scanning: ranks {done}/{ranks}, "
        f"{totals['documents']:,} documents, {megabytes:,.1f} MB, {rate} {per_core}, "
        f"{totals['matches']} matches, {seconds:.0f} s{eta}"
    )


@contextmanager
def progress_printer(console: Console) -> Iterator:
    """A callback that redraws one progress line on the console (stderr); when stderr is not
    a terminal, one line every PIPED_SECONDS and the last one."""
    if not console.is_terminal:
        last = [0.0]
        final: list = [None]

        def log(totals: dict) -> None:
            final[0] = totals
            if totals.get("seconds", 0) - last[0] >= PIPED_SECONDS:
                last[0] = totals["seconds"]
                console.print(progress_line(totals), highlight=False, soft_wrap=True)

        yield log
        if final[0] is not None:
            console.print(progress_line(final[0]), highlight=False, soft_wrap=True)
        return
    with Live(Text("scanning: starting workers"), console=console, transient=False,
              auto_refresh=False) as live:  # fmt: skip

        def show(totals: dict) -> None:
            live.update(progress_line(totals), refresh=True)

        yield show


def print_summary(summary: dict, console: Console) -> None:
    t = summary["throughput"]
    console.print(
        f"{summary['documents']:,} documents, {summary['characters'] / 1e6:,.1f} MB, "
        f"{summary['ranks']} ranks; {t['mb_per_second'] or 0:.1f} MB/s this run, "
        f"{t['mb_per_cpu_second'] or 0:.1f} MB per CPU-second", highlight=False
    )  # fmt: skip
    matches = Table(title="Matches", title_justify="left")
    for column in ("task", "document", "lines", "type", "similarity", "matched", "evidence"):
        matches.add_column(column)
    for m in summary["matches"]:
        matches.add_row(
            m["task_id"], m["document"], f"{m['lines'][0]}-{m['lines'][1]}",
            m["clone_type"] or "-", f"{m['similarity']:.2f}", m["matched"], m["evidence"],
        )  # fmt: skip
    if summary["matches"]:
        console.print(matches)
    else:
        console.print("no matches", highlight=False)
    if summary["generic"]:
        generic = Table(title="Too short or generic to be evidence", title_justify="left")
        for column in ("task", "reason", "documents matched"):
            generic.add_column(column)
        for g in summary["generic"]:
            generic.add_row(g["task_id"], g["reason"], str(g["documents"]))
        console.print(generic)
    found = summary["found"]
    console.print(
        f"found in the corpus: {len(found)} of {len(found) + len(summary['not_found'])} tasks"
        + (f" ({', '.join(found)})" if found else ""), highlight=False
    )  # fmt: skip
