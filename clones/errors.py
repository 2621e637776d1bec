"""Errors the clone detector raises; each message says which input, what is wrong, what to do."""

from __future__ import annotations

from ..errors import UserError


class CloneDetectorError(UserError):
    """Base class: a problem with the detector's input or settings that the user can fix."""


class UnknownLanguageError(CloneDetectorError):
    """A language name or file extension that no language module handles."""


class InputPathError(CloneDetectorError):
    """A path that does not exist, cannot be read, or holds no source file of the language."""


class ConfigError(CloneDetectorError):
    """A detector setting outside its allowed range or an unknown profile or clone type."""
