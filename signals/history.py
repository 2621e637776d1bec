"""How long a model's signal scores took on this store, the basis of `signals`' plan estimate.

Scores are stored a chunk at a time (`flow.CHUNK` tasks of one signal and scorer, one
transaction, one `created_at`), so the time between two consecutive chunks of one model and
scorer is the time the later chunk took to compute; a gap over `RUN_GAP` seconds is another
run (or a pause) and is not counted. The first chunk of each run has no predecessor and is not
counted either (it also carries the model's loading time)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

RUN_GAP = 300.0
"""Seconds between two chunks beyond which the later one belongs to another run."""


def seconds_per_score(db: sqlite3.Connection, models: Sequence[str]) -> tuple[float, int] | None:
    """Seconds per stored score of `models` (over the chunks measured as above) and how many
    scores that rests on; None without such history."""
    if not models:
        return None
    marks = ", ".join("?" for _ in models)
    try:
        rows = db.execute(
            f"SELECT model, scorer, created_at, COUNT(*) FROM signal_scores WHERE model IN "
            f"({marks}) GROUP BY model, scorer, created_at ORDER BY model, scorer, created_at",
            list(models),
        ).fetchall()
    except sqlite3.Error:  # no signal_scores table yet
        return None
    seconds, scores = 0.0, 0
    previous: dict[tuple[str, str], float] = {}
    for model, scorer, created_at, count in rows:
        last = previous.get((model, scorer))
        if last is not None and 0 < created_at - last <= RUN_GAP:
            seconds += created_at - last
            scores += int(count)
        previous[(model, scorer)] = float(created_at)
    return (seconds / scores, scores) if scores else None
