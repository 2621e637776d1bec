"""Results that depend only on their inputs' content, kept on disk between runs.

Each entry is a JSON file named by a hash of everything its value depends on (the inputs'
text, the settings, and the code and parser that compute it: `code_fingerprint`), so a change
to any of them gives a new name and an old entry is never read for new inputs. Entries are
written whole or not at all (`atomic.write_atomically`); a file that cannot be read or parsed,
or does not have the shape its reader expects, is a miss, computed again and written over.
JSON only: nothing read from the folder is ever executed.

Where: `$CLONEPROBE_CACHE_DIR`, else `$XDG_CACHE_HOME/cloneprobe`, else `~/.cache/cloneprobe`.
Off: `CLONEPROBE_NO_CACHE=1` (every value is computed, nothing read or written). Clearing is
deleting the folder; each kind keeps its `KEEP_PER_KIND` most recently used entries. Imports
nothing of cloneprobe but `atomic`, so every stage may use it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from .atomic import write_atomically

FOLDER_VARIABLE = "CLONEPROBE_CACHE_DIR"
OFF_VARIABLE = "CLONEPROBE_NO_CACHE"
PARSER_PACKAGES = ("tree_sitter", "tree_sitter_python", "tree_sitter_java")
"""Installed packages whose files decide parsing (their names, sizes and times are keyed)."""

KEEP_PER_KIND = 64
"""Entries kept of each kind; writing one more drops the least recently used (at most about
10 MB of canonical fragments, 0.3 MB of chance rates)."""

log = logging.getLogger(__name__)
T = TypeVar("T")


def cache_folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder entries live in, or None when the cache is off (or there is no home)."""
    if environ.get(OFF_VARIABLE, "").strip() not in ("", "0"):
        return None
    if environ.get(FOLDER_VARIABLE):
        return Path(environ[FOLDER_VARIABLE])
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative path is to be ignored
        return Path(xdg) / "cloneprobe"
    try:
        return Path.home() / ".cache" / "cloneprobe"
    except (RuntimeError, KeyError):
        return None


def content_key(*parts: str) -> str:
    """A hash naming the parts in order (as a JSON list: none can run into the next)."""
    return hashlib.sha256(json.dumps(parts).encode("ascii")).hexdigest()[:32]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of this package's Python source (every module, the stage folders included), the
    Python version and the installed parser packages' files: any change to the code that
    computes a cached value gives new keys. A few milliseconds, once per process."""
    digest = hashlib.sha256(f"{sys.version_info[:2]}\0".encode())
    digest.update(source_fingerprint(Path(__file__).resolve().parent).encode() + b"\0")
    for name in PARSER_PACKAGES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            for entry in sorted(os.scandir(location), key=lambda e: e.name):
                if entry.is_file():
                    status = entry.stat()
                    digest.update(f"{name}/{entry.name}:{status.st_size}:"
                                  f"{status.st_mtime_ns}\0".encode())  # fmt: skip
    return digest.hexdigest()[:32]


def source_fingerprint(package: Path) -> str:
    """A hash of every `.py` file under `package` (symlinked folders followed), by path and
    content."""
    digest = hashlib.sha256()
    for folder, subfolders, files in sorted(os.walk(package, followlinks=True)):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(folder, name)
                digest.update(str(path.relative_to(package)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class ContentCache:
    """JSON values under `folder/<kind>/<key>.json`; `folder` None: off (every read misses,
    writes do nothing)."""

    def __init__(self, folder: Path | None, keep: int = KEEP_PER_KIND) -> None:
        self.folder, self.keep = folder, keep

    @classmethod
    def from_environment(cls) -> ContentCache:
        return cls(cache_folder())

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def path(self, kind: str, key: str) -> Path | None:
        return None if self.folder is None else self.folder / kind / f"{key}.json"

    def read(self, kind: str, key: str, decode: Callable[[Any], T]) -> T | None:
        """`decode(value)` of the stored entry, or None: no entry, or one that cannot be read,
        parsed or decoded (`decode` raising KeyError, TypeError, ValueError or IndexError)."""
        path = self.path(kind, key)
        if path is None:
            return None
        try:
            value = decode(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError,
                AttributeError) as error:  # fmt: skip
            log.debug("cache entry %s unusable (%s); computing it again", path, error)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be dropped (`drop_oldest`)
        return value

    def write(self, kind: str, key: str, value: Any) -> None:
        """Keep `value` (JSON) under the key; a folder that cannot be written is passed over."""
        path = self.path(kind, key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, json.dumps(value, separators=(",", ":")))
            drop_oldest(path.parent, self.keep)
        except OSError as error:
            log.debug("cache entry %s not written (%s)", path, error)

    def get(self, kind: str, key: str, compute: Callable[[], T],
            encode: Callable[[T], Any], decode: Callable[[Any], T]) -> T:  # fmt: skip
        """The stored value, or `compute()` written for the next run."""
        found = self.read(kind, key, decode)
        if found is not None:
            return found
        value = compute()
        self.write(kind, key, encode(value))
        return value


def drop_oldest(folder: Path, keep: int,
                counted: Callable[[os.DirEntry], bool] = lambda e: e.name.endswith(".json"),
                ) -> None:  # fmt: skip
    """Delete all but the `keep` most recently used entries of `folder` (read or written)
    that `counted` selects (JSON files; a folder entry is deleted with what it holds)."""
    found = []
    for entry in os.scandir(folder):
        if counted(entry):
            try:
                found.append((entry.stat().st_mtime_ns, entry.path))
            except OSError:  # deleted meanwhile by another run
                continue
    for _, path in sorted(found)[: max(0, len(found) - keep)]:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            Path(path).unlink(missing_ok=True)
