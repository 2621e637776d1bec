"""Aligning two sides' compared lines by their LCS, for side-by-side evidence."""

from __future__ import annotations

from rapidfuzz.distance import LCSseq


def align_lines(left: list[str], right: list[str]) -> list[tuple[bool, str, str]]:
    """Rows of (same, left line, right line); runs of differing lines are paired up in order,
    with "" where one side has fewer."""
    rows: list[tuple[bool, str, str]] = []
    pending_a: list[str] = []
    pending_b: list[str] = []

    def flush() -> None:
        for k in range(max(len(pending_a), len(pending_b))):
            a = pending_a[k] if k < len(pending_a) else ""
            b = pending_b[k] if k < len(pending_b) else ""
            rows.append((False, a, b))
        pending_a.clear()
        pending_b.clear()

    for tag, a0, a1, b0, b1 in LCSseq.opcodes(left, right).as_list():
        if tag != "equal":
            pending_a.extend(left[a0:a1])
            pending_b.extend(right[b0:b1])
            continue
        flush()
        rows += [(True, a, b) for a, b in zip(left[a0:a1], right[b0:b1], strict=True)]
    flush()
    return rows
