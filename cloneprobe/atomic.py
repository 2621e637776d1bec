"""Writing an output file whole or not at all: into a temporary file beside it, renamed over
the final name when complete. Ctrl-C or a failure part-way leaves no partial file under the
final name (and an existing file as it was).

Imports nothing of cloneprobe, so every stage may import it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_text_file(path: Path, errors: str = "strict") -> Iterator[TextIO]:
    """A text file open for writing whose content appears at `path` only when the block ends
    without an exception (`errors`: as for `open`)."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); give it the mode open() would have given
        os.chmod(temporary, 0o666 & ~_umask())
        with os.fdopen(handle, "w", encoding="utf-8", errors=errors) as out:
            yield out
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


def write_atomically(path: Path, text: str | Iterable[str], errors: str = "strict") -> None:
    """`text` (or its pieces) written whole to `path` (see `atomic_text_file`)."""
    with atomic_text_file(path, errors) as out:
        out.writelines([text] if isinstance(text, str) else text)
