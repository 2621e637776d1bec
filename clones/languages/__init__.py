"""Language registry: one module per language, looked up by name or file extension."""

from __future__ import annotations

from pathlib import Path

from ..errors import UnknownLanguageError
from .base import LanguageSpec
from .java import JAVA
from .python import PYTHON

LANGUAGES: dict[str, LanguageSpec] = {spec.name: spec for spec in (PYTHON, JAVA)}


def get_language(name: str) -> LanguageSpec:
    """The language called `name` (case-insensitive); raises UnknownLanguageError otherwise."""
    spec = LANGUAGES.get(name.lower())
    if spec is None:
        known = ", ".join(sorted(LANGUAGES))
        raise UnknownLanguageError(f"unknown language {name!r}: choose one of {known}")
    return spec


def language_for_path(path: Path) -> LanguageSpec:
    """The language whose extension `path` has; raises UnknownLanguageError otherwise."""
    for spec in LANGUAGES.values():
        if path.suffix.lower() in spec.extensions:
            return spec
    known = ", ".join(ext for spec in LANGUAGES.values() for ext in spec.extensions)
    raise UnknownLanguageError(
        f"{path}: no language handles the extension {path.suffix or '(none)'!r} "
        f"(known: {known}); pass --lang to choose one"
    )


__all__ = ["LANGUAGES", "LanguageSpec", "get_language", "language_for_path"]
