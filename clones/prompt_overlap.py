"""Which parts of a canonical fragment the prompt already shows, and a match without them.

Code the prompt shows is no evidence of memorization: HumanEval/50's canonical `decode_shift`
is the prompt's own `encode_shift` with `+ 5` turned into `- 5`, so any sample that repeats the
prompt looks like a clone of it. `prompt_overlap` marks each compared item of a canonical
fragment (a token for the default profile, a line for nicad, renamed as the clone type renames)
that repeats the prompt's code: a token is shown when it lies in a run of `ngram` consecutive
tokens that also occurs in the prompt; a line is shown when it occurs in the prompt or at least
`SHOWN_LINE_SHARE` of its tokens are shown. `unshown_similarity` then says how much of the
canonical's *own* items a sample reproduces, in order. A canonical whose items are mostly shown
is uninformative (`PromptOverlap.informative`).

`shown_lines` is the line-grain test alone; the audit's evidence view uses it to set aside the
canonical lines that repeat the prompt (`cloneprobe/evidence/canonical_profile.py`).

The prompt is passed as one fragment of the whole prompt file
(`extractor.extract(SourceFile("prompt", text), "files")`, same layout as the canonical), so
its signatures, helper functions and module code all count as shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz.distance import LCSseq

from .fragment import Fragment
from .normalize import RenameMode, compared_items, compared_lines
from .profiles import Profile

NGRAM = 5
"""Tokens in a run that must occur in the prompt for its tokens to count as shown."""
SHOWN_LINE_SHARE = 0.7
"""A line whose shown tokens reach this share is shown (the Type-3 threshold's complement)."""
MAX_SHOWN_SHARE = 0.5
"""A canonical with more of its items shown than this is uninformative."""


@dataclass(frozen=True)
class PromptOverlap:
    """Per compared item of a canonical fragment: does the prompt already show it?"""

    items: tuple[str, ...]
    """The canonical's compared items (tokens or lines), renamed."""
    shown: tuple[bool, ...]

    @property
    def shown_share(self) -> float:
        return sum(self.shown) / len(self.shown) if self.shown else 0.0

    @property
    def own_items(self) -> tuple[str, ...]:
        """The items the prompt does not show, in order."""
        return tuple(item for item, shown in zip(self.items, self.shown, strict=True) if not shown)

    def informative(self, max_shown_share: float = MAX_SHOWN_SHARE) -> bool:
        """False when the canonical is mostly prompt code (or has no item of its own)."""
        return bool(self.own_items) and self.shown_share <= max_shown_share


def _shown_tokens(tokens: list[str], prompt_tokens: list[str], ngram: int) -> list[bool]:
    size = min(ngram, len(tokens))
    if size == 0:
        return []
    runs = {tuple(prompt_tokens[i : i + size]) for i in range(len(prompt_tokens) - size + 1)}
    shown = [False] * len(tokens)
    for start in range(len(tokens) - size + 1):
        if tuple(tokens[start : start + size]) in runs:
            shown[start : start + size] = [True] * size
    return shown


def shown_lines(
    canonical: Fragment,
    prompt: Fragment,
    rename: RenameMode,
    header: bool,
    ngram: int = NGRAM,
) -> list[bool]:
    """Per compared line of the canonical (`compared_lines` with `header`): does the prompt
    show it (the line itself, or `SHOWN_LINE_SHARE` of its tokens in shown runs)?"""
    lines = compared_lines(canonical, rename, header)
    prompt_lines = compared_lines(prompt, rename, True)
    token_shown = _shown_tokens(
        [token for line in lines for token in line],
        [token for line in prompt_lines for token in line],
        ngram,
    )
    known = {" ".join(line) for line in prompt_lines}
    shown, position = [], 0
    for line in lines:
        marks = token_shown[position : position + len(line)]
        position += len(line)
        text = " ".join(line)
        shown.append(text in known or (bool(marks) and sum(marks) >= SHOWN_LINE_SHARE * len(marks)))
    return shown


def prompt_overlap(
    canonical: Fragment,
    prompt: Fragment,
    profile: Profile,
    rename: RenameMode,
    ngram: int = NGRAM,
) -> PromptOverlap:
    """Mark the canonical's compared items (profile's grain and header rule) that the prompt
    already shows."""
    lines = compared_lines(canonical, rename, profile.compare_header)
    if profile.grain == "token":
        prompt_tokens = [t for line in compared_lines(prompt, rename, True) for t in line]
        tokens = [token for line in lines for token in line]
        return PromptOverlap(tuple(tokens), tuple(_shown_tokens(tokens, prompt_tokens, ngram)))
    shown = shown_lines(canonical, prompt, rename, profile.compare_header, ngram)
    return PromptOverlap(tuple(" ".join(line) for line in lines), tuple(shown))


def unshown_similarity(
    overlap: PromptOverlap, sample: Fragment, profile: Profile, rename: RenameMode
) -> int:
    """Percent of the canonical's own items (not shown by the prompt) that the sample
    reproduces in order (LCS over the profile's compared items); 0 when it has none."""
    own = overlap.own_items
    if not own:
        return 0
    items = compared_items(sample, rename, profile.grain, profile.compare_header)
    return round(100 * LCSseq.similarity(list(own), items) / len(own))
