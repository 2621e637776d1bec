"""The sample store: one SQLite file (WAL) of runs and samples.

A sample is identified by (model, settings key, prompt set, variant, task, temperature, index);
a plan asks for such identities and a run fills only the ones missing. Each result is committed
as it arrives, so a crash, SIGKILL or Ctrl-C loses at most the requests in flight, and the
unique key means nothing is ever stored twice. A failed sample is stored with its error and is
retried (replaced) by the next run.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import GenerationError

DEFAULT_STORE = "cloneprobe.sqlite"
"""The store a command uses when none is given (in the working directory)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    settings TEXT NOT NULL,
    versions TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL DEFAULT 'running'
);
CREATE TABLE IF NOT EXISTS samples (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    model TEXT NOT NULL,
    settings_key TEXT NOT NULL,
    prompt_set TEXT NOT NULL,
    variant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    temperature REAL NOT NULL,
    sample_index INTEGER NOT NULL,
    mode TEXT,
    raw TEXT,
    completion TEXT,
    program TEXT,
    form TEXT,
    finish_reason TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency REAL,
    error TEXT,
    created_at REAL NOT NULL,
    entry_point TEXT,
    repairs TEXT,
    unrepairable TEXT,
    UNIQUE (model, settings_key, prompt_set, variant, task_id, temperature, sample_index)
);
CREATE INDEX IF NOT EXISTS samples_group
    ON samples (model, prompt_set, variant, temperature, task_id);
"""

SAMPLE_COLUMNS = (
    "run_id", "model", "settings_key", "prompt_set", "variant", "task_id", "temperature",
    "sample_index", "mode", "raw", "completion", "program", "form", "finish_reason",
    "prompt_tokens", "completion_tokens", "latency", "error", "created_at",
    "entry_point", "repairs", "unrepairable",
)  # fmt: skip
ADDED_COLUMNS = ("entry_point", "repairs", "unrepairable")
"""Columns newer than the first stores: added (as TEXT) when an older store is opened."""


@dataclass(frozen=True)
class StoredSample:
    model: str
    settings_key: str
    prompt_set: str
    variant: str
    task_id: str
    temperature: float
    sample_index: int
    mode: str | None = None
    raw: str | None = None
    completion: str | None = None
    program: str | None = None
    form: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency: float | None = None
    error: str | None = None
    run_id: int | None = None
    entry_point: str | None = None
    """The function the prompt asked for when its variant renames the task's entry point."""
    repairs: str | None = None
    """What was done to the output to make it the program the model meant (`; `-separated)."""
    unrepairable: str | None = None
    """Why the program cannot run as the model meant it (it is stored and fails its tests)."""
    id: int | None = None
    """The row id, set on samples read back from the store."""

    @property
    def ok(self) -> bool:
        return self.error is None


class SampleStore:
    """A SQLite sample store; open one per process (and per thread that writes)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise GenerationError(f"{self.path}: is a folder; give a file path for the store")
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            self._add_missing_columns()
        except sqlite3.DatabaseError as error:
            raise GenerationError(
                f"{self.path}: not a cloneprobe store ({error}); give a new or existing store path"
            ) from error

    def _add_missing_columns(self) -> None:
        present = {row[1] for row in self.db.execute("PRAGMA table_info(samples)")}
        with self.db:
            for column in ADDED_COLUMNS:
                if column not in present:
                    self.db.execute(f"ALTER TABLE samples ADD COLUMN {column} TEXT")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SampleStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start_run(self, model: str, settings: dict, versions: dict) -> int:
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (model, settings, versions, started_at) VALUES (?, ?, ?, ?)",
                (model, json.dumps(settings, sort_keys=True), json.dumps(versions), time.time()),
            )
        return int(cursor.lastrowid)  # type: ignore[arg-type]

    def end_run(self, run_id: int, status: str = "finished") -> None:
        with self.db:
            self.db.execute(
                "UPDATE runs SET ended_at = ?, status = ? WHERE id = ?",
                (time.time(), status, run_id),
            )

    def runs(self) -> list[dict]:
        cursor = self.db.execute(
            "SELECT id, model, settings, versions, started_at, ended_at, status "
            "FROM runs ORDER BY id"
        )
        return [
            {
                "id": row[0],
                "model": row[1],
                "settings": json.loads(row[2]),
                "versions": json.loads(row[3]),
                "started_at": row[4],
                "ended_at": row[5],
                "status": row[6],
            }
            for row in cursor
        ]

    def done_keys(self, model: str, settings_key: str) -> set[tuple[str, str, str, float, int]]:
        """(prompt set, variant, task, temperature, index) of the samples already stored
        without error for this model and settings."""
        cursor = self.db.execute(
            "SELECT prompt_set, variant, task_id, temperature, sample_index FROM samples "
            "WHERE model = ? AND settings_key = ? AND error IS NULL",
            (model, settings_key),
        )
        return {(r[0], r[1], r[2], float(r[3]), int(r[4])) for r in cursor}

    def add(self, samples: Iterable[StoredSample]) -> int:
        """Store samples in one transaction; a stored sample is replaced only if it had failed
        (so a retry fills it) and never duplicated. Returns how many rows were written."""
        now = time.time()
        rows = [
            tuple(now if c == "created_at" else getattr(s, c) for c in SAMPLE_COLUMNS)
            for s in samples
        ]
        placeholders = ", ".join("?" for _ in SAMPLE_COLUMNS)
        updates = ", ".join(
            f"{c} = excluded.{c}" for c in SAMPLE_COLUMNS if c not in UNIQUE_COLUMNS
        )
        with self.db:
            cursor = self.db.executemany(
                f"INSERT INTO samples ({', '.join(SAMPLE_COLUMNS)}) VALUES ({placeholders}) "
                f"ON CONFLICT ({', '.join(UNIQUE_COLUMNS)}) DO UPDATE SET {updates} "
                "WHERE samples.error IS NOT NULL",
                rows,
            )
        return cursor.rowcount

    def samples(
        self,
        models: list[str] | None = None,
        prompt_sets: list[str] | None = None,
        include_errors: bool = False,
    ) -> Iterator[StoredSample]:
        where, params = [], []
        if models:
            where.append(f"model IN ({', '.join('?' for _ in models)})")
            params += models
        if prompt_sets:
            where.append(f"prompt_set IN ({', '.join('?' for _ in prompt_sets)})")
            params += prompt_sets
        if not include_errors:
            where.append("error IS NULL")
        fields = [f for f in StoredSample.__dataclass_fields__]
        query = f"SELECT {', '.join(fields)} FROM samples"
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY model, prompt_set, variant, temperature, task_id, sample_index"
        for row in self.db.execute(query, params):
            yield StoredSample(*row)

    def count(self) -> tuple[int, int]:
        """(samples stored without error, samples stored with an error)."""
        row = self.db.execute(
            "SELECT SUM(error IS NULL), SUM(error IS NOT NULL) FROM samples"
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)


UNIQUE_COLUMNS = (
    "model", "settings_key", "prompt_set", "variant", "task_id", "temperature", "sample_index",
)  # fmt: skip
