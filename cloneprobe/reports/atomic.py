"""Writing a file whole: under a temporary name beside it, then renamed over it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write `text` (or its pieces) to a temporary file beside `path`, then rename it over
    `path`: a reader never sees half a report, and a failed write leaves the old file."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="replace") as out:
            out.writelines([text] if isinstance(text, str) else text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
