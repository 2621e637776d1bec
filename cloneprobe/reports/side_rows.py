"""Two sides' aligned lines as terminal table rows: each line cut to the width its column has
(rich would wrap it, and the wrapped part would read as a line of its own), every row of a
line marked: `≠` where the two sides' lines differ, `↪` where a row goes on with the line
above. The marks carry the meaning without colour (piped output), the colours with it."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from cloneprobe.reports.safe_text import printable

DIFFERENT, CONTINUED = "≠", "↪"
MARK_WIDTH = 2
"""The marker column: the difference mark, then the continuation mark."""
FRAME = 3 * 2 + 4
"""A three-column table's padding (one space each side of a cell) and its four borders."""


def cut_rows(text: str, width: int) -> list[str]:
    """`text` in pieces of at most `width` characters, each cut after its last space when that
    leaves something before it (else at `width`); the pieces joined give `text` back."""
    pieces = []
    while len(text) > width:
        cut = text.rfind(" ", 0, width) + 1
        cut = cut if text[:cut].strip() else width
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text]


def code_width(console_width: int) -> int:
    """Each code column's width when a marker column and two code columns share the console."""
    return max(8, (console_width - MARK_WIDTH - FRAME) // 2)


def side_by_side_table(
    aligned: list[tuple[bool, str, str]],
    headers: tuple[str, str],
    console_width: int,
    styles: tuple[str, str, str] = ("", "", ""),
) -> Table:
    """The aligned lines (same, left, right) as a table of a marker column and two code
    columns fitting `console_width`; `styles`: the marker's, left's and right's style on rows
    of lines that differ."""
    width = code_width(console_width)
    table = Table(show_header=True)
    table.add_column("", width=MARK_WIDTH, no_wrap=True)
    for header in headers:
        table.add_column(header, width=width, overflow="fold")
    for same, left, right in aligned:
        lefts, rights = cut_rows(printable(left), width), cut_rows(printable(right), width)
        for row in range(max(len(lefts), len(rights))):
            mark = (" " if same else DIFFERENT) + (CONTINUED if row else " ")
            cells = (mark, lefts[row] if row < len(lefts) else "",
                     rights[row] if row < len(rights) else "")  # fmt: skip
            table.add_row(*(Text(cell, "" if same else style)
                            for cell, style in zip(cells, styles, strict=True)))  # fmt: skip
    return table
