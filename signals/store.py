"""Signal scores kept beside the samples and verdicts, in the same SQLite file.

One row per (model, scorer, prompt set, variant, task, samples key, signal, settings key):
the scorer is the log-prob scorer's identity ("samples" for signals read from samples), the
samples key says which samples a sample-based score read (empty for likelihood scores, which
read none), and the settings key is a digest of the signal's settings and of the texts it
read, so a changed prompt, canonical or set of samples is scored again and nothing stale is
reused. Only available scores are kept: "not available" is decided afresh each time, so a
run with a capable scorer fills what an earlier one could not.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

from .base import SignalScore

SCHEMA = """
CREATE TABLE IF NOT EXISTS signal_scores (
    model TEXT NOT NULL,
    scorer TEXT NOT NULL,
    prompt_set TEXT NOT NULL,
    variant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    samples_key TEXT NOT NULL,
    signal TEXT NOT NULL,
    settings_key TEXT NOT NULL,
    value REAL NOT NULL,
    detail TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (model, scorer, prompt_set, variant, task_id, samples_key, signal, settings_key)
);
"""


def settings_key(settings: dict, *texts: str) -> str:
    """A short digest of a signal's settings and the texts a score read."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for text in texts:
        digest.update(b"\x00" + text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class ScoreKey:
    model: str
    scorer: str
    prompt_set: str
    variant: str
    task_id: str
    samples_key: str
    signal: str
    settings_key: str

    def row(self) -> tuple:
        return (self.model, self.scorer, self.prompt_set, self.variant, self.task_id,
                self.samples_key, self.signal, self.settings_key)  # fmt: skip


class SignalStore:
    """The `signal_scores` table of a sample store's SQLite connection."""

    def __init__(self, db: sqlite3.Connection, create: bool = True) -> None:
        """`create`: make the table when the store lacks it (False for a read-only store)."""
        self.db = db
        if create:
            self.db.executescript(SCHEMA)

    def get(self, keys: Iterable[ScoreKey]) -> dict[ScoreKey, SignalScore]:
        """The stored scores among `keys`."""
        found: dict[ScoreKey, SignalScore] = {}
        for key in keys:
            row = self.db.execute(
                "SELECT value, detail FROM signal_scores WHERE model = ? AND scorer = ? AND "
                "prompt_set = ? AND variant = ? AND task_id = ? AND samples_key = ? AND "
                "signal = ? AND settings_key = ?",
                key.row(),
            ).fetchone()
            if row is not None:
                found[key] = SignalScore(key.signal, float(row[0]), None, json.loads(row[1]))
        return found

    def add(self, scores: Iterable[tuple[ScoreKey, SignalScore]]) -> int:
        """Store the available scores (one transaction); returns how many."""
        now = time.time()
        rows = [
            (*key.row(), score.value, json.dumps(score.detail, sort_keys=True), now)
            for key, score in scores
            if score.value is not None
        ]
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO signal_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM signal_scores").fetchone()[0])
