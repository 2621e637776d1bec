"""The sample store: one SQLite file (WAL) of runs and samples.

A sample is identified by (model, settings key, prompt set, variant, task, temperature, index);
a plan asks for such identities and a run fills only the ones missing. Results are committed as
they arrive (a burst the backend hands over together in one transaction, `runner._Writer`), so
Ctrl-C loses at most the requests in flight, a crash or SIGKILL at most those and one burst held
(1000 samples or 1 s), and the unique key means nothing is ever stored twice. A failed sample
is stored with its error and is retried (replaced) by the next run. A run claims the samples it
will generate (rows in `claims`), so two commands running one plan at once never generate the
same sample; a run records its owner (pid, start time, host) and a heartbeat, so one killed
mid-way is recognised as interrupted and its claims are released. The tables and migrations
are in `storefile.py`.
"""

from __future__ import annotations

import json
import operator
import sqlite3
import time
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import GenerationError
from .liveness import Owner, is_alive
from .storefile import busy, open_for_writing, open_read_only

DEFAULT_STORE = "cloneprobe.sqlite"
"""The store a command uses when none is given (in the working directory)."""

SAMPLE_COLUMNS = (
    "run_id", "model", "settings_key", "prompt_set", "variant", "task_id", "temperature",
    "sample_index", "mode", "raw", "completion", "program", "form", "finish_reason",
    "prompt_tokens", "completion_tokens", "latency", "error", "created_at", "tokens_estimated",
    "entry_point", "repairs", "unrepairable",
)  # fmt: skip
HEARTBEAT_EVERY = 10.0
"""Seconds between heartbeats of a running run."""
CHECKPOINT_PAGES = 1000
"""SQLite's own threshold: once the WAL holds this many pages (4 KB each), the commit that
crossed it copies them into the store file (a checkpoint, with two fsyncs)."""
RUN_CHECKPOINT_PAGES = 16384
"""The threshold while a run of this store is open (64 MB of WAL): the default's 4 MB is
about 3,000 samples, so the copy and its fsyncs (10-40 ms) landed on the last commits of an
API run, after its last answer, where the run waits on them; the copy now happens at the
store's close or its next write after the run, or at the run's heartbeats (`beat`, every
HEARTBEAT_EVERY seconds from the second on). An application crash loses nothing either way
(the WAL is read back); a power loss may lose what was committed since the last copy
(synchronous=NORMAL): at most about HEARTBEAT_EVERY seconds of samples (or 64 MB, whichever
comes first), which the next run of the plan generates again."""


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
    tokens_estimated: bool | None = None
    """True when completion_tokens is this sample's share of its request's total (a server
    that reports usage per request only), False when it is the sample's own count."""

    @property
    def ok(self) -> bool:
        return self.error is None


class SampleStore:
    """A SQLite sample store; open one per process (and per thread that writes). With
    `read_only`, nothing is written (`report`, `export`; the file may be on a read-only disk)."""

    def __init__(self, path: Path | str, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if read_only:
            self.db, self.version = open_read_only(self.path)
        else:
            self.db = open_for_writing(self.path)
            self.version = 2
            self._close_dead_runs()
        self._beats: dict[int, float] = {}
        self._open_runs: set[int] = set()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SampleStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, sql: str, params=()) -> sqlite3.Cursor:
        try:
            with self.db:
                return self.db.execute(sql, params)
        except sqlite3.OperationalError as error:
            if "locked" in str(error):
                raise busy(self.path) from None
            raise

    def start_run(self, model: str, settings: dict, versions: dict) -> int:
        owner = Owner.this_process()
        now = time.time()
        cursor = self._write(
            "INSERT INTO runs (model, settings, versions, started_at, pid, pid_started, host, "
            "heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (model, json.dumps(settings, sort_keys=True), json.dumps(versions), now,
             owner.pid, owner.started, owner.host, now),
        )  # fmt: skip
        run_id = int(cursor.lastrowid)  # type: ignore[arg-type]
        if not self._open_runs:
            self.db.execute(f"PRAGMA wal_autocheckpoint = {RUN_CHECKPOINT_PAGES}")
        self._open_runs.add(run_id)
        return run_id

    def beat(self, run_id: int) -> None:
        """Record that the run is alive (at most every HEARTBEAT_EVERY seconds); from its second
        heartbeat on, also copy the WAL into the store file, so that a power loss loses at most
        the samples of the last HEARTBEAT_EVERY seconds, not RUN_CHECKPOINT_PAGES of them."""
        now = time.time()
        last = self._beats.get(run_id)
        if last is None or now - last >= HEARTBEAT_EVERY:
            self._beats[run_id] = now
            self._write("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id))
            if last is not None:  # a run that has lasted HEARTBEAT_EVERY: not a short API run
                self.db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def end_run(self, run_id: int, status: str = "finished") -> None:
        with self.db:
            self.db.execute(
                "UPDATE runs SET ended_at = ?, status = ? WHERE id = ?",
                (time.time(), status, run_id),
            )
            self.db.execute("DELETE FROM claims WHERE run_id = ?", (run_id,))
        self._open_runs.discard(run_id)
        if not self._open_runs:  # after the commit above, so that it does not checkpoint
            self.db.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")

    def _owner_columns(self) -> str:
        if self.version >= 2:
            return "pid, pid_started, host, heartbeat_at"
        return "NULL, NULL, NULL, NULL"

    def _dead_running_runs(self) -> list[int]:
        now = time.time()
        rows = self.db.execute(
            f"SELECT id, {self._owner_columns()} FROM runs WHERE status = 'running'"
        ).fetchall()
        return [row[0] for row in rows if not is_alive(row[1], row[2], row[3], row[4], now)]

    def _close_dead_runs(self) -> None:
        """Mark runs whose process has gone (SIGKILL, a crash) as interrupted, and release
        their claims, so nothing stays 'running' for ever."""
        dead = self._dead_running_runs()
        if not dead:
            return
        marks = ", ".join("?" for _ in dead)
        with self.db:
            self.db.execute(
                f"UPDATE runs SET status = 'interrupted', ended_at = COALESCE(heartbeat_at, "
                f"started_at) WHERE id IN ({marks}) AND status = 'running'",
                dead,
            )
            self.db.execute(f"DELETE FROM claims WHERE run_id IN ({marks})", dead)

    def live_runs(self) -> list[tuple[int, str, int | None]]:
        """(id, model, pid) of the runs still writing the store (their process is alive)."""
        now = time.time()
        rows = self.db.execute(
            f"SELECT id, model, {self._owner_columns()} FROM runs WHERE status = 'running' "
            "ORDER BY id"
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows if is_alive(r[2], r[3], r[4], r[5], now)]

    def runs(self) -> list[dict]:
        dead = set(self._dead_running_runs())
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
                "status": "interrupted" if row[0] in dead else row[6],
            }
            for row in cursor
        ]

    def claim(self, run_id: int, model: str, settings_key: str,
              wanted: list[tuple[str, str, str, float, int]]) -> set[tuple]:  # fmt: skip
        """Claim for `run_id` those of `wanted` (prompt set, variant, task, temperature, index)
        that are neither stored without error nor claimed by a live run; returns those."""
        self._close_dead_runs()
        if not wanted:
            return set()
        try:
            with self.db:
                self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (prompt_set, variant, "
                                "task_id, temperature, sample_index)")  # fmt: skip
                self.db.execute("DELETE FROM temp.wanted")
                self.db.executemany("INSERT INTO temp.wanted VALUES (?, ?, ?, ?, ?)", wanted)
                before = self.db.total_changes
                self.db.execute(
                    "INSERT OR IGNORE INTO claims SELECT ?, ?, w.prompt_set, w.variant, "
                    "w.task_id, w.temperature, w.sample_index, ? FROM temp.wanted w "
                    "WHERE NOT EXISTS (SELECT 1 FROM samples s WHERE s.model = ? AND "
                    "s.settings_key = ? AND s.prompt_set = w.prompt_set AND s.variant = "
                    "w.variant AND s.task_id = w.task_id AND s.temperature = w.temperature AND "
                    "s.sample_index = w.sample_index AND s.error IS NULL)",
                    (model, settings_key, run_id, model, settings_key),
                )
                claimed = set(wanted)
                if self.db.total_changes - before == len(claimed):
                    # every one claimed (the usual case): not read back, which took 8 ms for
                    # 3280 samples before a run's first request
                    return claimed
                rows = self.db.execute(
                    "SELECT prompt_set, variant, task_id, temperature, sample_index FROM claims "
                    "WHERE run_id = ?", (run_id,),
                ).fetchall()  # fmt: skip
        except sqlite3.OperationalError as error:
            if "locked" in str(error):
                raise busy(self.path) from None
            raise
        return {(r[0], r[1], r[2], float(r[3]), int(r[4])) for r in rows}

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
        rows = [(*_sample_values(s), now) for s in samples]
        if not rows:
            return 0
        with self.db:
            cursor = self.db.executemany(_INSERT_SAMPLES, rows)
        return cursor.rowcount

    def first_different(self, samples: Iterable[StoredSample]) -> tuple[StoredSample, str] | None:
        """The first sample already stored (without error) under the same key but with a
        different raw text, with where the stored one came from; None when there is none."""
        query = (
            "SELECT s.raw, r.settings FROM samples s LEFT JOIN runs r ON r.id = s.run_id WHERE "
            + " AND ".join(f"s.{c} = ?" for c in UNIQUE_COLUMNS) + " AND s.error IS NULL"
        )
        for sample in samples:
            row = self.db.execute(query, [getattr(sample, c) for c in UNIQUE_COLUMNS]).fetchone()
            if row is not None and row[0] != sample.raw:
                try:
                    source = json.loads(row[1] or "{}").get("imported_from") or "a generate run"
                except ValueError:
                    source = "an earlier run"
                return sample, str(source)
        return None

    def imported_files(self) -> list[str]:
        """The files the store's samples were imported from, as each import named them."""
        found = []
        for (settings,) in self.db.execute("SELECT settings FROM runs"):
            try:
                recorded = json.loads(settings or "{}")
            except ValueError:
                continue
            if isinstance(recorded, dict) and isinstance(recorded.get("imported_from"), str):
                found.append(recorded["imported_from"])
        return list(dict.fromkeys(found))

    def samples(
        self,
        models: list[str] | None = None,
        prompt_sets: list[str] | None = None,
        include_errors: bool = False,
        light: bool = False,
    ) -> Iterator[StoredSample]:
        """Stored samples in (model, prompt set, variant, temperature, task, index) order,
        streamed; `light` leaves out the texts (raw, completion, program)."""
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
        if self.version < 2:  # read-only access to a store not migrated: columns it lacks
            for newer in ("tokens_estimated", "entry_point", "repairs", "unrepairable"):
                fields[fields.index(newer)] = "NULL"
        if light:
            fields = ["NULL" if f in ("raw", "completion", "program") else f for f in fields]
        query = f"SELECT {', '.join(fields)} FROM samples"
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY model, prompt_set, variant, temperature, task_id, sample_index"
        names = list(StoredSample.__dataclass_fields__)
        texts = [names.index(name) for name in _CHECKED_TEXTS]
        for row in self.db.execute(query, params):
            for index in texts:  # the texts code reads: a blob there fails deep in a parser
                if type(row[index]) is not str and row[index] is not None:
                    raise self._damaged_row(row)
            yield StoredSample(*row)

    def _damaged_row(self, row) -> GenerationError:
        """A row holding a value of the wrong type (a blob where text belongs: edited by hand
        or by another program), named instead of failing deep inside the detector."""
        fields = list(StoredSample.__dataclass_fields__)
        wrong = next(name for name, value in zip(fields, row, strict=True) if value is not None
                     and not isinstance(value, _COLUMN_KINDS[name]))  # fmt: skip
        value, kind = row[fields.index(wrong)], _COLUMN_KINDS[wrong]
        belongs = "number" if isinstance(kind, tuple) else kind.__name__
        return GenerationError(
            f"{self.path}: sample {row[fields.index('id')]} has a {type(value).__name__} value in "
            f"column {wrong}, where a {belongs} belongs, so the store is "
            "damaged (edited by hand or by another program); restore it from a copy or give "
            "another --store"
        )

    def count(self) -> tuple[int, int]:
        """(samples stored without error, samples stored with an error)."""
        row = self.db.execute(
            "SELECT SUM(error IS NULL), SUM(error IS NOT NULL) FROM samples"
        ).fetchone()
        return int(row[0] or 0), int(row[1] or 0)


def _column_kinds() -> dict[str, type | tuple[type, ...]]:
    """What each column of a stored sample must hold (NULL aside), read from StoredSample's
    fields: SQLite gives a float column's whole numbers back as int, and a bool as 0 or 1."""
    widened: dict[type, type | tuple[type, ...]] = {float: (int, float), bool: int}
    kinds = {}
    for name, hint in typing.get_type_hints(StoredSample).items():
        kind = next(a for a in typing.get_args(hint) or (hint,) if a is not type(None))
        kinds[name] = widened.get(kind, kind)
    return kinds


_COLUMN_KINDS = _column_kinds()
_CHECKED_TEXTS = ("model", "prompt_set", "variant", "task_id", "raw", "completion", "program")
"""Columns checked on every row read (the others are named when a checked one is wrong)."""

UNIQUE_COLUMNS = (
    "model", "settings_key", "prompt_set", "variant", "task_id", "temperature", "sample_index",
)  # fmt: skip
_GIVEN = tuple(c for c in SAMPLE_COLUMNS if c != "created_at")
_sample_values = operator.attrgetter(*_GIVEN)
"""A sample's values of the columns it gives (all but created_at), in one call."""
_INSERT_SAMPLES = (
    f"INSERT INTO samples ({', '.join(_GIVEN)}, created_at) "
    f"VALUES ({', '.join('?' for _ in SAMPLE_COLUMNS)}) "
    f"ON CONFLICT ({', '.join(UNIQUE_COLUMNS)}) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SAMPLE_COLUMNS if c not in UNIQUE_COLUMNS)
    + " WHERE samples.error IS NOT NULL"
)
