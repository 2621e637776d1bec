"""The fragment record: a function (or whole file) pretty-printed to one statement per line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .languages.base import TokenKind

Token = tuple[TokenKind, str]
"""One source token: its kind (for renaming) and its text."""
Line = tuple[Token, ...]
"""One pretty-printed line: the tokens of one statement or compound-statement header (the
`statements` layout), or of one source line as NiCad's grammar keeps it (the `source` layout)."""

CLOSING_BRACE: Line = (("other", "}"),)

Layout = Literal["statements", "source"]
"""How a fragment is cut into lines. `statements`: one statement or compound-statement header
per line, whatever the source layout (the default profile). `source`: as NiCad's grammar prints
it, line breaks kept where the source has them (the nicad profile; a language without source
rules prints statements)."""
LAYOUTS: tuple[Layout, ...] = ("statements", "source")


@dataclass(frozen=True, eq=False)
class Fragment:
    """A potential clone: where it is in its file and its pretty-printed lines.

    Compared by identity: two fragments are the same only if they are the same object.
    """

    file: str
    start_line: int
    end_line: int
    name: str
    lines: tuple[Line, ...]
    body_start: int
    """Index of the first body line; `lines[:body_start]` is the signature (header)."""
    has_errors: bool = False
    """The parser had to recover from a syntax error inside this fragment."""
    one_liner: bool = False
    """The body stands on the header's line (`def f(x): return x`); NiCad never extracts these."""
    layout: Layout = "statements"
    """The layout `lines` were printed in; a profile compares fragments of its own layout."""

    @property
    def size(self) -> int:
        """Pretty-printed lines, closing-brace lines included (NiCad's minsize/maxsize measure)."""
        return len(self.lines)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.start_line}-{self.end_line}"


def is_compared(line: Line) -> bool:
    """A line that is only a closing brace counts for size but is not compared."""
    return line != CLOSING_BRACE


def render_line(line: Line) -> str:
    """The line as NiCad prints it: tokens separated by single spaces."""
    return " ".join(text for _, text in line)
