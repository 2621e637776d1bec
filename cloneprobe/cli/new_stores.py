"""A refused command leaves no store behind.

Most bad values are refused before anything is created (click types, `checks`), but some
refusals come only once the store is open: a sample file that is not JSON, a file that does not
say its model, a model that does not load, a server that answers nothing. A store path that did
not exist when the command parsed its options is noted (`note_new_store`, called by the
`--store` type); when the command then ends in an error, that file is removed again if it holds
nothing: no sample, and no run of another process still writing it (`remove_empty_new_stores`).
Ctrl-C is not a refusal: what was stored is kept.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click

NEW_STORES = "cloneprobe.new_stores"
"""Key in the root context's `meta`: the store paths that did not exist at parse time."""
SIDE_FILES = ("-wal", "-shm", "-journal")


def note_new_store(ctx: click.Context | None, path: Path) -> None:
    """Remember `path` as created by this command if it does not exist yet."""
    if ctx is None or path.exists() or path.is_symlink():
        return
    ctx.find_root().meta.setdefault(NEW_STORES, set()).add(Path(os.path.abspath(path)))


def holds_nothing(path: Path) -> bool:
    """Whether a store file holds no sample and no live run of another process (a file that is
    not SQLite holds nothing only when it is empty)."""
    if path.stat().st_size == 0:
        return True
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=0.2)
    except sqlite3.Error:
        return False
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master "
                                               "WHERE type = 'table'")}  # fmt: skip
        if "samples" in tables and db.execute("SELECT 1 FROM samples LIMIT 1").fetchone():
            return False
        if "runs" in tables:
            others = db.execute("SELECT 1 FROM runs WHERE status = 'running' AND "
                                "(pid IS NULL OR pid != ?) LIMIT 1", (os.getpid(),)).fetchone()
            return others is None
        return True
    except sqlite3.Error:  # locked by a writer, or not a store: not ours to remove
        return False
    finally:
        db.close()


def remove_empty_new_stores(ctx: click.Context) -> list[Path]:
    """Remove the stores this command created and left empty; returns those removed."""
    removed = []
    for path in sorted(ctx.find_root().meta.get(NEW_STORES, ())):
        try:
            if not path.is_file() or path.is_symlink() or not holds_nothing(path):
                continue
            for side in SIDE_FILES:
                Path(f"{path}{side}").unlink(missing_ok=True)
            path.unlink()
            removed.append(path)
        except OSError:  # gone already, or not ours to remove: leave it
            continue
    return removed
