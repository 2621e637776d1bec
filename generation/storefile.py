"""Opening a store file: what it must be, its schema version, migration, read-only access.

The `meta` table records `schema_version` and the `application`; a store from an older
cloneprobe is migrated in place when opened for writing, one from a newer one is refused, and a
SQLite file from another tool is never touched. `report` and `export` open a store read-only
(it may sit on a read-only filesystem).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .errors import GenerationError

APPLICATION = "cloneprobe"
SCHEMA_VERSION = 2
"""1: runs and samples (no meta table). 2: meta, run owners and heartbeats, sample claims,
per-sample token counts marked exact or estimated, the entry point a renamed prompt asked for,
and the repairs made to a sample (or why it could not be repaired)."""
SQLITE_HEADER = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """An existing regular file holding a SQLite database (a store, or another tool's)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as handle:
            return handle.read(16) == SQLITE_HEADER
    except OSError:
        return False

# claims is WITHOUT ROWID: one b-tree, its key (a rowid table keeps a second one for the key),
# so claiming a run's 3280 samples and releasing them at its end writes half as much; stores
# made before keep their rowid table, and the same SQL serves both
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    settings TEXT NOT NULL,
    versions TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    status TEXT NOT NULL DEFAULT 'running',
    pid INTEGER,
    pid_started TEXT,
    host TEXT,
    heartbeat_at REAL
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
    tokens_estimated INTEGER,
    entry_point TEXT,
    repairs TEXT,
    unrepairable TEXT,
    UNIQUE (model, settings_key, prompt_set, variant, task_id, temperature, sample_index)
);
CREATE INDEX IF NOT EXISTS samples_group
    ON samples (model, prompt_set, variant, temperature, task_id);
CREATE TABLE IF NOT EXISTS claims (
    model TEXT NOT NULL,
    settings_key TEXT NOT NULL,
    prompt_set TEXT NOT NULL,
    variant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    temperature REAL NOT NULL,
    sample_index INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    PRIMARY KEY (model, settings_key, prompt_set, variant, task_id, temperature, sample_index)
) WITHOUT ROWID;
"""

MIGRATIONS_FROM_1 = (
    "ALTER TABLE runs ADD COLUMN pid INTEGER",
    "ALTER TABLE runs ADD COLUMN pid_started TEXT",
    "ALTER TABLE runs ADD COLUMN host TEXT",
    "ALTER TABLE runs ADD COLUMN heartbeat_at REAL",
    "ALTER TABLE samples ADD COLUMN tokens_estimated INTEGER",
    "ALTER TABLE samples ADD COLUMN entry_point TEXT",
    "ALTER TABLE samples ADD COLUMN repairs TEXT",
    "ALTER TABLE samples ADD COLUMN unrepairable TEXT",
    # a version-1 run still 'running' has no owner to check: it was interrupted
    "UPDATE runs SET status = 'interrupted', ended_at = started_at WHERE status = 'running'",
)


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise GenerationError(f"{path}: is a folder; give a file path for the store")
    if path.exists() and path.stat().st_size:
        try:
            with path.open("rb") as handle:
                header = handle.read(16)
        except OSError as error:
            raise GenerationError(f"{path}: cannot read the store ({error.strerror})") from None
        if header != SQLITE_HEADER:
            raise GenerationError(
                f"{path}: not a SQLite file, so not a cloneprobe store; give a store path "
                "(a new path creates one)"
            )


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def store_version(db: sqlite3.Connection, path: Path) -> int | None:
    """The store's schema version; None for an empty file. Refuses another tool's database
    and a newer schema."""
    tables = _tables(db)
    if not tables:
        return None
    if "meta" in tables:
        rows = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if rows.get("application") != APPLICATION:
            raise _foreign(path, tables)
        try:
            version = int(rows.get("schema_version", "0"))
        except (TypeError, ValueError):
            raise GenerationError(
                f"{path}: the store's schema_version {rows.get('schema_version')!r} is not a "
                "number, so the store is damaged; restore it from a copy or give another --store"
            ) from None
        if version < 1:
            raise GenerationError(
                f"{path}: the store's schema_version {rows.get('schema_version')!r} is below 1, "
                "so the store is damaged; restore it from a copy or give another --store"
            )
        if version > SCHEMA_VERSION:
            raise GenerationError(
                f"{path}: made by a newer cloneprobe (store schema {version}; this version "
                f"reads up to {SCHEMA_VERSION}); upgrade cloneprobe to use it"
            )
        if version == SCHEMA_VERSION:
            _check_columns(db, path, tables)
        return version
    if {"runs", "samples"} <= tables:
        return 1
    raise _foreign(path, tables)


def _check_columns(db: sqlite3.Connection, path: Path, tables: set[str]) -> None:
    """Every table and column of this schema is there (a store edited by hand, or by another
    program, is named as damaged instead of failing later on a missing column)."""
    for statement in SCHEMA.split(";"):
        words = statement.split()
        if words[:2] != ["CREATE", "TABLE"]:
            continue
        table = words[5]
        wanted = [line.split()[0] for line in statement.split("\n")[1:]
                  if line.strip() and line.split()[0].islower()]  # fmt: skip
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [name for name in wanted if name not in have] if table in tables else ["*"]
        if missing:
            what = f"table {table}" if missing == ["*"] else (
                f"column(s) {', '.join(missing)} of table {table}")
            raise GenerationError(
                f"{path}: the store lacks {what}, so it is damaged (edited by hand or by "
                "another program); restore it from a copy or give another --store"
            )


def _foreign(path: Path, tables: set[str]) -> GenerationError:
    names = ", ".join(sorted(tables)[:5])
    return GenerationError(
        f"{path}: a SQLite database from another tool (tables {names}), not a cloneprobe "
        "store; give another --store path"
    )


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Open (creating or migrating) a store for writing."""
    _check_file(path)
    if not path.parent.is_dir():
        raise GenerationError(
            f"{path}: the folder {path.parent} does not exist; create it or give another --store"
        )
    try:
        db = sqlite3.connect(path, timeout=30)
        version = store_version(db, path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if version != SCHEMA_VERSION:
            _create_or_migrate(db, path)
    except sqlite3.OperationalError as error:
        if "readonly" in str(error) or "read-only" in str(error):
            raise GenerationError(
                f"{path}: the store is read-only; `report` and `export` read it, or copy it "
                "somewhere writable to add to it"
            ) from None
        if "locked" in str(error):
            raise busy(path) from None
        if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise GenerationError(
                f"{path}: the store or its folder is read-only ({error}); `report` and `export` "
                "read it there, or copy it somewhere writable to add to it"
            ) from None
        raise GenerationError(f"{path}: cannot open the store ({error}); check the path, or "
                              "give another --store") from None  # fmt: skip
    except sqlite3.DatabaseError as error:
        raise GenerationError(
            f"{path}: not a cloneprobe store ({error}); give a new or existing store path"
        ) from None
    return db


def _create_or_migrate(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables, or migrate a version-1 store, in one transaction."""
    isolation = db.isolation_level
    db.isolation_level = None  # explicit BEGIN/COMMIT
    db.execute("BEGIN IMMEDIATE")
    try:
        if store_version(db, path) == 1:  # asked again under the lock: another may have done it
            for statement in MIGRATIONS_FROM_1:
                db.execute(statement)
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))],
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.isolation_level = isolation


def busy(path: Path) -> GenerationError:
    return GenerationError(
        f"{path}: the store is busy (another cloneprobe command is writing it); wait for it "
        "to finish, or use another --store"
    )


def open_read_only(path: Path) -> tuple[sqlite3.Connection, int]:
    """Open an existing store without writing to it (also on a read-only filesystem)."""
    if not path.exists():
        raise GenerationError(f"{path}: no such store; run `cloneprobe audit` or give --store")
    _check_file(path)
    if not path.stat().st_size:
        raise GenerationError(f"{path}: an empty file, not a store; give a store with samples")
    uri = path.resolve().as_uri()
    error: sqlite3.Error | None = None
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            db = sqlite3.connect(uri + query, uri=True, timeout=30)
            version = store_version(db, path)
            return db, version or SCHEMA_VERSION
        except GenerationError:
            raise
        except sqlite3.DatabaseError as failure:  # WAL on a read-only folder: immutable
            if "locked" in str(failure):  # a writer holds it: never read it as immutable
                raise busy(path) from None
            error = failure
    raise GenerationError(f"{path}: cannot read the store ({error}); check the path") from None
