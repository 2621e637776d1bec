"""The one error a user can act on, shared by every stage and the command line.

Each stage raises its own subclass (`BenchmarkError`, `GenerationError`, `CloneDetectorError`,
`ScanError`, `SignalError`); commands and the pipeline raise `UserError` itself for what is
neither (an option, a config file, an output path). The message names the input, says what is
wrong and what to do; the command line prints it as one red line and exits with code 2.

Imports nothing, so every stage may import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


class UserError(Exception):
    """An input (option, file, store, server answer) that cannot be used as given; the message
    names it, says what is wrong and what to do."""

    store: Path | None = None
    """A store the error concerns: if the command made it and leaves it empty, it is removed,
    and `if_store_removed` (when given) is the message printed instead."""
    if_store_removed: str | None = None
