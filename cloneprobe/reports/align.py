"""Aligning two sides' lines by their LCS, for side-by-side evidence: the compared lines as
they are, the code as written by its shape (`shape_of`: names and literals blinded), so that a
renamed line sits beside the line it renames."""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from rapidfuzz.distance import LCSseq

_TOKEN = re.compile(
    r"""(#.*"""  # a comment, outside any string
    r"""|[rRbBuUfF]{0,2}"(?:[^"\\]|\\.)*"|[rRbBuUfF]{0,2}'(?:[^'\\]|\\.)*'"""  # strings
    r"""|[A-Za-z_]\w*|\d[\w.]*(?:[eE][+-]?\d+)?|\S)"""
)


def shape_of(line: str) -> str:
    """A line of code with every name `x`, number `1` and string `"x"` (keywords kept), for
    aligning a line with its renamed copy; a comment is dropped."""
    shape = []
    for token in _TOKEN.findall(line):
        if token[0] == "#":
            break
        if token[-1] in "\"'":
            shape.append('"x"')
        elif token[0].isdigit():
            shape.append("1")
        elif token[0].isalpha() or token[0] == "_":
            shape.append(token if keyword.iskeyword(token) else "x")
        else:
            shape.append(token)
    return " ".join(shape)


def align_lines(
    left: list[str], right: list[str], key: Callable[[str], str] | None = None
) -> list[tuple[bool, str, str]]:
    """Rows of (same, left line, right line); runs of differing lines are paired up in order,
    with "" where one side has fewer. With `key`, lines are aligned by their keys, and `same`
    says whether the lines themselves are equal."""
    keys_left = [key(a) for a in left] if key else left
    keys_right = [key(b) for b in right] if key else right
    rows: list[tuple[bool, str, str]] = []
    pending_a: list[int] = []
    pending_b: list[int] = []

    def flush() -> None:
        for k in range(max(len(pending_a), len(pending_b))):
            a = left[pending_a[k]] if k < len(pending_a) else ""
            b = right[pending_b[k]] if k < len(pending_b) else ""
            rows.append((False, a, b))
        pending_a.clear()
        pending_b.clear()

    for tag, a0, a1, b0, b1 in LCSseq.opcodes(keys_left, keys_right).as_list():
        if tag != "equal":
            pending_a.extend(range(a0, a1))
            pending_b.extend(range(b0, b1))
            continue
        flush()
        rows += [(left[i] == right[j], left[i], right[j])
                 for i, j in zip(range(a0, a1), range(b0, b1), strict=True)]  # fmt: skip
    flush()
    return rows
