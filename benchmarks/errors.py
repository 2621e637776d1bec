"""Errors for benchmark and prompt-set input; each names the file and says what to do."""

from __future__ import annotations

from ..errors import UserError


class BenchmarkError(UserError):
    """A benchmark, prompt set or fix file that cannot be used as given."""
