"""How long a model's samples took on this store: seconds per sample over its finished
generation runs, the basis of the plan's estimate before a run starts. Read through its own
read-only connection, so that a plan printed before the store is opened (or created) never
creates or locks it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def seconds_per_sample(store: Path, model: str,
                       max_new_tokens: int | None) -> tuple[float, int] | None:  # fmt: skip
    """Seconds per stored sample of `model` over the store's finished generation runs (the
    ones with the same --max-new-tokens when there are any), and how many samples that rests
    on; None without history (no store, no finished run of the model, imported files only)."""
    if not Path(store).is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{Path(store).resolve()}?mode=ro", uri=True, timeout=1)
        try:
            rows = db.execute(
                "SELECT r.settings, r.ended_at - r.started_at, "
                "(SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id AND s.error IS NULL) "
                "FROM runs r WHERE r.model = ? AND r.ended_at IS NOT NULL",
                (model,),
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    runs = []
    for settings, seconds, count in rows:
        try:
            recorded = json.loads(settings)
        except (TypeError, ValueError):
            continue
        if not isinstance(recorded, dict) or "imported_from" in recorded or not count:
            continue
        runs.append((recorded.get("max_new_tokens"), float(seconds or 0), int(count)))
    same = [r for r in runs if r[0] == max_new_tokens]
    chosen = same or runs
    total = sum(c for _, _, c in chosen)
    if not total:
        return None
    return sum(s for _, s, _ in chosen) / total, total
