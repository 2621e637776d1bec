"""Checks on command-line values made before any work starts: finite numbers in range, and
output paths that can be written (so a long run never fails at its last step)."""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path

import click


class FiniteFloat(click.ParamType):
    """A float that is not NaN or infinite, within [low, high] (an open end with `*_open`)."""

    name = "float"

    def __init__(self, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False) -> None:  # fmt: skip
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def _range(self) -> str:
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        closed = not self.high_open and self.high is not None
        return f"{'(' if self.low_open else '['}{low}, {high}{']' if closed else ')'}"

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value) and self._inside(value):
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number; give a number in {self._range()}", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number; give a number in {self._range()}",
                      param, ctx)  # fmt: skip
        if not self._inside(number):
            self.fail(f"{value!r} is outside {self._range()}; give a number in that range",
                      param, ctx)  # fmt: skip
        return number

    def _inside(self, number: float) -> bool:
        if self.low is not None and (number <= self.low if self.low_open else number < self.low):
            return False
        return self.high is None or (number < self.high if self.high_open else number <= self.high)


TEMPERATURE = FiniteFloat(0, 2)
TOP_P = FiniteFloat(0, 1, low_open=True)
SECONDS = FiniteFloat(0, 86400, low_open=True)
"""Up to a day: longer is a mistake (and overflows the timers it sets)."""
EXEC_SECONDS = FiniteFloat(0.1, 86400)
THRESHOLD = FiniteFloat(0, 1, high_open=True)


def check_writable_folder(path: Path, option: str) -> None:
    """A report folder that exists as a folder (or can be made) and can be written."""
    from ..errors import UserError

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: is a file; give a folder for the report files")
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(
            f"{option} {path}: cannot write there ({existing} is not a writable folder); "
            "give a folder you can write"
        )


def special_file_kind(path: Path) -> str | None:
    """What an existing path is when it is neither a regular file nor a folder (a device, a
    FIFO, a socket): writing a file there would replace it, or block; None otherwise."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")  # fmt: skip


def check_writable_file(path: Path, option: str) -> None:
    """An output file whose folder exists and can be written (checked before the work); never
    a device or FIFO (the file written beside it would be renamed over it: `/dev/full` would
    become a file)."""
    from ..errors import UserError

    if path.is_dir():
        raise UserError(f"{option} {path}: is a folder; give a file path")
    kind = special_file_kind(path)
    if kind:
        raise UserError(f"{option} {path}: is {kind}, not a file; give the path of a regular "
                        "file to write")  # fmt: skip
    folder = path.parent
    if not folder.is_dir():
        raise UserError(f"{option} {path}: folder {folder} does not exist; create it first")
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK):
        raise UserError(f"{option} {path}: cannot write there; give a path you can write")


def same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output_file(path: Path, option: str) -> None:
    """An output file that may be written: never a store (writing would destroy it), never an
    input of the same command, never a folder; its folder must exist and be writable."""
    from ..errors import UserError

    check_writable_file(path, option)
    for source in command_inputs(option):
        if same_file(path, Path(source)):
            raise UserError(f"{option} {path}: is also this command's input; writing it would "
                            "destroy what is read, so give another file name")  # fmt: skip
    from ..generation.storefile import is_sqlite_file

    if is_sqlite_file(path):
        raise UserError(f"{option} {path}: is a sample store; writing there would destroy it, "
                        "so give another file name (e.g. samples.jsonl)")  # fmt: skip
    for suffix in SQLITE_SIDE_FILES:
        owner = path.with_name(path.name.removesuffix(suffix))
        if path.name.endswith(suffix) and is_sqlite_file(owner):
            raise UserError(f"{option} {path}: is the {suffix[1:]} file of the store {owner}; "
                            "writing there would damage it, so give another file name (e.g. "
                            "samples.jsonl)")  # fmt: skip


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def check_store_path(path: Path, option: str = "--store", inputs=()) -> None:
    """A store path that can be a store: not a folder, not a symlink that leads nowhere, not
    one of the command's input files."""
    from ..errors import UserError

    if path.is_symlink() and not path.exists():
        raise UserError(f"{option} {path}: is a symbolic link that leads nowhere (a loop or a "
                        "missing target); give the path of a store file")  # fmt: skip
    kind = special_file_kind(path)
    if kind:
        raise UserError(f"{option} {path}: is {kind}, not a store file; give the path of a "
                        "store file (a new path creates one)")  # fmt: skip
    for source in inputs:
        if same_file(path, Path(source)):
            raise UserError(f"{option} {path}: is also given as a sample file; give a store "
                            "path other than the inputs")  # fmt: skip


class CheckedPath(click.Path):
    """A path that is not empty (`--report ''` would mean the current folder in silence)."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} is an empty path; give a path", param, ctx)
        kind = special_file_kind(Path(value)) if isinstance(value, (str, Path)) else None
        if kind:  # reading would block (a FIFO) or never end (/dev/zero); writing replaces it
            self.fail(f"{value} is {kind}, not a file or folder; give the path of a regular "
                      "file", param, ctx)  # fmt: skip
        return super().convert(value, param, ctx)


class FilePath(CheckedPath):
    """A file to write: a trailing slash names a folder, which the file cannot be (and
    `newdir/` must not quietly make a file named `newdir`)."""

    def __init__(self, *args, example: str = "out.jsonl", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.example = example

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.endswith(("/", os.sep)) and len(value) > 1:
            self.fail(f"{value!r} ends with a slash, so it names a folder; give a file path, "
                      f"e.g. {value}{self.example}", param, ctx)  # fmt: skip
        return super().convert(value, param, ctx)


class StoreFilePath(FilePath):
    """A store's path; one that does not exist yet is noted, so that a refused command removes
    the empty store it made (`remove_empty_new_stores`)."""

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        note_new_store(ctx, Path(path))
        return path


def StorePath(*args, **kwargs) -> FilePath:
    """A store's path (a file: `cloneprobe.sqlite` in the example of the error)."""
    return StoreFilePath(*args, example="cloneprobe.sqlite", **kwargs)


def check_outputs(options: dict) -> None:
    """Every output path the options name, before any work is done: a report folder that can
    be written and whose files would write over none of the command's inputs (a sample file
    named report.json, a store, the config) and that is not the store itself."""
    from ..errors import UserError

    given = [*(options.get("inputs") or ()), *(options.get("sample_files") or ())]
    samples = [Path(p) for p in given if os.path.isfile(p)]
    for panel in options.get("panel_files") or ():
        if any(same_file(Path(panel), sample) for sample in samples):
            raise UserError(f"--panel {panel}: is also a sample file of this command; its "
                            "samples would vouch for themselves as another solver, so give "
                            "--panel the files of other models")  # fmt: skip
    if options.get("report_dir") is None:
        return
    folder = Path(options["report_dir"])
    if folder.is_symlink() and not folder.exists():
        raise UserError(f"--report {folder}: is a symbolic link that leads nowhere; give a "
                        "folder for the report files (a new path makes one)")  # fmt: skip
    store = options.get("store_path")
    if store is not None and _same_path(folder, Path(store)):
        raise UserError(f"--report {folder}: is also the --store; give a folder of its own for "
                        "the report files, e.g. --report report")  # fmt: skip
    check_writable_folder(folder, "--report")
    from ..reports.files import REPORT_FILES

    for name in sorted(REPORT_FILES):
        if (folder / name).is_dir():
            raise UserError(f"--report {folder}: holds a folder named {name}, where the report "
                            f"writes its file {name}; move that folder, or give another folder "
                            "for the report")  # fmt: skip
    sources = [*command_inputs("--report"), *([Path(store)] if store is not None else [])]
    for source in sources:
        for name in sorted(REPORT_FILES):
            if _same_path(folder / name, Path(source)):
                raise UserError(
                    f"--report {folder}: writing {name} there would write over {source}, which "
                    "this command reads or writes; give another folder for the report"
                )


def _same_path(a: Path, b: Path) -> bool:
    """Whether two paths name one place (neither needs to exist yet)."""
    return same_file(a, b) or os.path.abspath(a) == os.path.abspath(b)


INPUTS = "cloneprobe.inputs"
"""Key in the root context's `meta`: files read that are no parameter (the --config file)."""


def note_input(ctx: click.Context, path: Path) -> None:
    """Remember a file the command reads that its parameters do not show (the --config)."""
    ctx.find_root().meta.setdefault(INPUTS, []).append(Path(path))


def command_inputs(output_option: str) -> list[Path]:
    """The files the running command reads: every existing file its parameters name (sample
    files, the store, the benchmark, the config, ...) except the output option's own value."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return []
    found = list(ctx.find_root().meta.get(INPUTS, ()))
    for param in ctx.command.params:
        if output_option in param.opts or output_option in getattr(param, "old", ()):
            continue
        value = ctx.params.get(param.name)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, Path)) and str(item) and os.path.isfile(item):
                found.append(Path(item))
    return found


def check_not_being_written(store, path: Path) -> None:
    """A store another command is still writing gives a report of a moment, not of the run:
    refused, naming the run."""
    from ..errors import UserError

    live = store.live_runs()
    if live:
        run_id, model, pid = live[0]
        raise UserError(
            f"{path}: run {run_id} ({model}, process {pid}) is still writing this store, so a "
            "report now would miss what it has not written yet; wait for it to finish (or stop "
            "it) and run this again"
        )


def read_api_key_file(path: Path | None) -> str | None:
    """The API key in a file (first line, whitespace stripped); never from the command line."""
    from ..errors import UserError

    if path is None:
        return None
    try:
        key = path.read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(
            f"--api-key-file {path}: cannot read it ({error}); give a readable text file "
            "holding the key"
        ) from None
    if not key or not key[0].strip():
        raise UserError(f"--api-key-file {path}: the file is empty; put the key in it")
    lines = [line for line in key if line.strip()]
    if len(lines) > 1:
        raise UserError(f"--api-key-file {path}: holds {len(lines)} lines, so which is the key "
                        "is unclear; put only the key in it")  # fmt: skip
    return key[0].strip()


# --- a refused command leaves no store behind --------------------------------------------------

# A refused command leaves no store behind.
#
# Most bad values are refused before anything is created (click types, `checks`), but some
# refusals come only once the store is open: a sample file that is not JSON, a file that does not
# say its model, a model that does not load, a server that answers nothing. A store path that did
# not exist when the command parsed its options is noted (`note_new_store`, called by the
# `--store` type); when the command then ends in an error, that file is removed again if it holds
# nothing: no sample, and no run of another process still writing it (`remove_empty_new_stores`).
# Ctrl-C is not a refusal: what was stored is kept.

NEW_STORES = "cloneprobe.new_stores"
"""Key in the root context's `meta`: the store paths that did not exist at parse time."""


def note_new_store(ctx: click.Context | None, path: Path) -> None:
    """Remember `path` as created by this command if it does not exist yet."""
    if ctx is None or path.exists() or path.is_symlink():
        return
    ctx.find_root().meta.setdefault(NEW_STORES, set()).add(Path(os.path.abspath(path)))


def holds_nothing(path: Path) -> bool:
    """Whether a store file holds no sample (a failed request's record is none: a server that
    cannot be reached leaves only those) and no live run of another process (a file that is
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
        if "samples" in tables and db.execute("SELECT 1 FROM samples WHERE error IS NULL "
                                              "LIMIT 1").fetchone():  # fmt: skip
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
            for side in SQLITE_SIDE_FILES:
                Path(f"{path}{side}").unlink(missing_ok=True)
            path.unlink()
            removed.append(path)
        except OSError:  # gone already, or not ours to remove: leave it
            continue
    return removed
