"""Errors for generation input (model specs, settings, sample files, the store)."""

from __future__ import annotations

from ..errors import UserError


class GenerationError(UserError):
    """A model spec, setting, sample file or store that cannot be used as given."""
