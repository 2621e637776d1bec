"""Prompt edits with provenance: every change a fixed prompt makes, where, why and of what kind.

An edit replaces lines `start..end` (1-based, inclusive) of a prompt with new text. A fixed
prompt is the original with its edits replayed in order (each against the text the previous
ones left), so it differs from the original exactly where its provenance says.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .errors import BenchmarkError

ISSUE_KINDS: dict[str, str] = {
    "function_name": "function name mismatching intent",
    "spelling_grammar": "spelling and grammar",
    "unclear_description": "unclear description",
    "partial_sentence": "partial sentence",
    "incorrect_example": "incorrect input/output example",
    "docstring_formatting": "docstring formatting",
    "no_docstring": "not using a docstring",
    "inconsistent_style": "inconsistent style",
    "interrogation": "interrogation questions",
    "url": "URLs",
}
"""The issue kinds of the reference study (Siddiq et al., SCAM 2024)."""


@dataclass(frozen=True)
class PromptEdit:
    """Lines start..end of the original prompt become `after` (which may span other lines)."""

    kind: str
    start: int
    end: int
    before: str
    after: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PromptEdit:
        return cls(**{k: data[k] for k in ("kind", "start", "end", "before", "after", "why")})


def check_kind(kind: str, where: str) -> None:
    if kind not in ISSUE_KINDS:
        raise BenchmarkError(
            f"{where}: unknown issue kind {kind!r}; use one of {', '.join(ISSUE_KINDS)}"
        )


def edit_for_substring(
    text: str, old: str, new: str, kind: str, why: str, where: str
) -> PromptEdit:
    """The line edit that replaces the one occurrence of `old` in `text` by `new`."""
    check_kind(kind, where)
    count = text.count(old) if old else 0
    if count != 1:
        raise BenchmarkError(
            f"{where}: the text to replace must occur exactly once in the prompt, "
            f"found {count} times: {old!r}"
        )
    offset = text.index(old)
    start = text.count("\n", 0, offset)
    end = text.count("\n", 0, offset + len(old) - 1)
    lines = text.splitlines(keepends=True)
    before = "".join(lines[start : end + 1])
    local = offset - sum(len(line) for line in lines[:start])
    after = before[:local] + new + before[local + len(old) :]
    return PromptEdit(kind, start + 1, end + 1, before, after, why)


def apply_edit(text: str, edit: PromptEdit, where: str) -> str:
    """`text` with one edit applied; the edit's `before` must match the lines it names."""
    lines = text.splitlines(keepends=True)
    current = "".join(lines[edit.start - 1 : edit.end])
    if current != edit.before:
        raise BenchmarkError(
            f"{where}: lines {edit.start}-{edit.end} are {current!r} but the {edit.kind} edit "
            f"expects {edit.before!r}; the prompt changed, rebuild the fixed prompts"
        )
    lines[edit.start - 1 : edit.end] = [edit.after]
    return "".join(lines)


def apply_edits(original: str, edits: list[PromptEdit], where: str) -> str:
    """Replay edits in order, each against the text the previous ones left."""
    text = original
    for edit in edits:
        text = apply_edit(text, edit, where)
    return text
