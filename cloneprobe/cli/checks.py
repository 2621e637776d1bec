"""Checks on command-line values made before any work starts: finite numbers in range, and
output paths that can be written (so a long run never fails at its last step)."""

from __future__ import annotations

import math
import os
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
        return f"{'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"

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
SECONDS = FiniteFloat(0, None, low_open=True)
EXEC_SECONDS = FiniteFloat(0.1, None)
THRESHOLD = FiniteFloat(0, 1, high_open=True)


def check_writable_folder(path: Path, option: str) -> None:
    """A report folder that exists as a folder (or can be made) and can be written."""
    from ..generation import GenerationError

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if path.exists() and not path.is_dir():
        raise GenerationError(f"{option} {path}: is a file; give a folder for the report files")
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise GenerationError(
            f"{option} {path}: cannot write there ({existing} is not a writable folder); "
            "give a folder you can write"
        )


def check_writable_file(path: Path, option: str) -> None:
    """An output file whose folder exists and can be written (checked before the work)."""
    from ..generation import GenerationError

    if path.is_dir():
        raise GenerationError(f"{option} {path}: is a folder; give a file path")
    folder = path.parent
    if not folder.is_dir():
        raise GenerationError(f"{option} {path}: folder {folder} does not exist; create it first")
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK):
        raise GenerationError(f"{option} {path}: cannot write there; give a path you can write")


def check_outputs(options: dict) -> None:
    """Every output path the options name, before any work is done."""
    if options.get("report_dir") is not None:
        check_writable_folder(Path(options["report_dir"]), "--report")


def read_api_key_file(path: Path | None) -> str | None:
    """The API key in a file (first line, whitespace stripped); never from the command line."""
    from ..generation import GenerationError

    if path is None:
        return None
    try:
        key = path.read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise GenerationError(
            f"--api-key-file {path}: cannot read it ({error}); give a readable text file "
            "holding the key"
        ) from None
    if not key or not key[0].strip():
        raise GenerationError(f"--api-key-file {path}: the file is empty; put the key in it")
    return key[0].strip()
