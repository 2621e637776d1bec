"""A finished positive control read back from its folder (control.json), for a report's
control section (`cloneprobe report --control DIR`)."""

from __future__ import annotations

import json
from pathlib import Path

from cloneprobe.errors import UserError


def load_control(folder: Path, option: str = "--control") -> dict:
    """A finished control's control.json (an error naming the folder, and the `option` that
    gave it, when it holds none)."""
    given = f"{option} {folder}".strip()
    path = folder / "control.json"
    try:
        control = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # JSON nested too deep: Recursion
        raise UserError(
            f"{given}: cannot read {path} ({error}); give the --output folder of a "
            "finished `cloneprobe control`"
        ) from error
    if not isinstance(control, dict) or not {"settings", "split", "models"} <= set(control):
        raise UserError(
            f"{given}: {path} is not a control's report (settings, split and models "
            "expected); give the --output folder of a finished `cloneprobe control`"
        )
    return control
