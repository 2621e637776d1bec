"""Reading cached results that are still valid: a cache row counts only while the inputs that
decided it (its inputs key: content hashes of the program, the tests, the canonical ...) are
the sample's current ones. Used for pass/fail results here and for clone verdicts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator


def rows_with_current_inputs(
    db: sqlite3.Connection, query: str, keys: dict[int, str], params: tuple = ()
) -> Iterator[tuple]:
    """Rows of a cache table for these sample ids whose last column (the inputs key) is the
    sample's current one (sample id -> key). `query` selects `sample_id` first, the inputs key
    last, and ends with `sample_id IN ({ids})`; ids go in batches under SQLite's limit."""
    ids = list(keys)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ", ".join("?" for _ in part)
        for row in db.execute(query.format(ids=marks), [*params, *part]):
            if row[-1] == keys[row[0]]:
                yield row
