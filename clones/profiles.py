"""The two detector profiles (`nicad` and `default`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import ConfigError
from .normalize import Grain

if TYPE_CHECKING:  # the CLI imports profiles at start-up; fragment stays unimported
    from .fragment import Layout


@dataclass(frozen=True)
class Profile:
    """How fragments are sized and compared."""

    name: str
    grain: Grain
    """`line`: LCS over pretty-printed lines (NiCad); `token`: LCS over tokens."""
    min_lines: int
    """Fragments with fewer pretty-printed lines are dropped."""
    max_lines: int
    """Fragments with more pretty-printed lines are dropped."""
    min_tokens: int
    """Pairs where a fragment compares fewer tokens than this are reported as trivial (0: off)."""
    compare_header: bool
    """Compare the signature line too (NiCad), or only the body."""
    one_liners: bool
    """Extract functions whose body stands on the `def` line (NiCad does not)."""
    layout: Layout
    """`source`: lines as NiCad's grammar prints them (breaks kept where the source has
    them); `statements`: one statement per line, whatever the layout."""
    summary: str


NICAD = Profile(
    name="nicad",
    grain="line",
    min_lines=10,
    max_lines=2500,
    min_tokens=0,
    compare_header=True,
    one_liners=False,
    layout="source",
    summary="NiCad's semantics: LCS over pretty-printed lines, sizes in lines (10..2500)",
)
DEFAULT = Profile(
    name="default",
    grain="token",
    min_lines=2,
    max_lines=2500,
    min_tokens=12,
    compare_header=False,
    one_liners=True,
    layout="statements",
    summary=(
        "LCS over body tokens, signature not compared, any function with a body; "
        "pairs under 12 body tokens reported apart as trivial"
    ),
)
PROFILES: dict[str, Profile] = {p.name: p for p in (DEFAULT, NICAD)}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(
            f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}"
        ) from None
