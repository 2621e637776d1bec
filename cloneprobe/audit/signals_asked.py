"""Which signals a run asked for, and why those it could not compute are not available.

The store keeps only available scores (`signals.store`), so a signal that was asked for but
is not available for any task (CDD with fewer than three samples and no greedy one, Min-K%++
on a server that gives only the chosen tokens' log-probs) would vanish from `report`, which
reads the store: its column and its reason would be missing where `audit --signals` showed
them. The names asked and those reasons are kept in the store's `meta` table under
`SIGNALS_ASKED` (per model: signal -> reason, or None when available), and `report` shows the
same columns and reasons.
"""

from __future__ import annotations

import json
import logging
import sqlite3

SIGNALS_ASKED = "signals_asked"
log = logging.getLogger(__name__)


def _read(db: sqlite3.Connection) -> dict[str, dict[str, str | None]]:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (SIGNALS_ASKED,)).fetchone()
    except sqlite3.Error:  # a store without the meta table (an old one)
        return {}
    try:
        value = json.loads(row[0]) if row else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def remember_signals_asked(db: sqlite3.Connection, section: dict) -> None:
    """Record the section's signal names per model with the reason of each signal no group
    has a value of (None for a signal available somewhere)."""
    asked = _read(db)
    for group in section.get("groups") or []:
        model = asked.setdefault(group["model"], {})
        for name in section["names"]:
            summary = group["signals"].get(name) or {}
            if summary.get("available"):
                model[name] = None
            elif name not in model or model[name] is not None:  # None: available elsewhere
                model[name] = summary.get("reason") or model.get(name) or "not available"
    try:
        with db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       (SIGNALS_ASKED, json.dumps(asked, sort_keys=True)))  # fmt: skip
    except sqlite3.Error as error:  # a note for `report`: never the end of the run
        log.warning("could not record the signals asked in the store (%s); `report` will "
                    "show only the signals with stored scores", error)


def signals_asked(db: sqlite3.Connection, models) -> dict[str, dict[str, str | None]]:
    """For each of `models`: the signals asked for it, with the reason of those not
    available."""
    asked = _read(db)
    return {m: asked[m] for m in models if isinstance(asked.get(m), dict)}


def with_asked_reasons(section: dict, asked: dict[str, dict[str, str | None]]) -> dict:
    """The section with the recorded reason of each signal no task of a group has a value of
    (instead of "not in the store", which would send the user to compute what cannot be)."""
    for group in section.get("groups") or []:
        reasons = asked.get(group["model"]) or {}
        for name, summary in group["signals"].items():
            if not summary.get("available") and reasons.get(name):
                summary["reason"] = reasons[name]
    return section
