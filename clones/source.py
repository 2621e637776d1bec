"""Reading source files as models emit them: any encoding damage, CRLF, BOMs, empty files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import InputPathError
from .languages import LANGUAGES, LanguageSpec, get_language, language_for_path


@dataclass(frozen=True)
class SourceFile:
    """One file of a system: its display name and its text, newlines normalised to LF."""

    name: str
    text: str


def decode_source(data: bytes) -> str:
    """Text of `data`: UTF-8 with invalid bytes replaced, BOM dropped, CRLF and CR made LF."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return normalize_newlines(text)


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF (the parsers expect LF)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_source(path: Path, name: str | None = None) -> SourceFile:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputPathError(f"{path}: cannot read ({error.strerror}); check the path") from error
    return SourceFile(name or str(path), decode_source(data))


def detect_language(paths: list[Path]) -> LanguageSpec:
    """The language of the given files or folders, from file extensions."""
    counts: dict[str, int] = {}
    missing = [path for path in paths if not path.exists() and not path.is_symlink()]
    if missing:  # said before the language, which a missing path cannot tell
        raise InputPathError(f"{missing[0]}: no such file or folder; check the path")
    for path in paths:
        if path.is_file():
            spec = language_for_path(path)
            counts[spec.name] = counts.get(spec.name, 0) + 1
            continue
        for spec in LANGUAGES.values():
            found = sum(1 for ext in spec.extensions for _ in path.rglob(f"*{ext}"))
            if found:
                counts[spec.name] = counts.get(spec.name, 0) + found
    if not counts:
        shown = ", ".join(str(p) for p in paths)
        raise InputPathError(f"{shown}: no source file of a known language; pass --lang")
    return get_language(max(counts, key=lambda name: counts[name]))


def collect_sources(path: Path, spec: LanguageSpec) -> list[SourceFile]:
    """The files of one system: `path` itself, or every file of the language below the folder.

    Names are relative to the folder, so a report reads `task_12/sample_3.py:4-17`.
    """
    if not path.exists():
        if path.is_symlink():
            raise InputPathError(f"{path}: a symbolic link that leads nowhere (a loop or a "
                                 "missing target); give a source file or folder")  # fmt: skip
        raise InputPathError(f"{path}: no such file or folder; check the path")
    if not path.is_file() and not path.is_dir():
        raise InputPathError(f"{path}: is a FIFO, device or socket, not a source file or "
                             "folder; save the code to a file and give that")  # fmt: skip
    if path.is_file():
        return [read_source(path)]
    files = sorted(p for ext in spec.extensions for p in path.rglob(f"*{ext}") if p.is_file())
    if not files:
        raise InputPathError(
            f"{path}: the folder holds no {spec.name} file ({', '.join(spec.extensions)}); "
            "check the path or --lang"
        )
    return [read_source(p, str(p.relative_to(path))) for p in files]
