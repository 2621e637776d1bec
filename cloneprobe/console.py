"""Consoles for user-facing output: tables stay whole when output is piped to a file."""

from __future__ import annotations

from rich.console import Console

PIPED_WIDTH = 200


def output_console() -> Console:
    """stdout; when it is not a terminal, wide enough that tables are not folded."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)


def error_console() -> Console:
    """stderr, for progress, warnings and errors."""
    console = Console(stderr=True)
    return console if console.is_terminal else Console(stderr=True, width=PIPED_WIDTH)
