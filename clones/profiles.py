"""Clone types and the two detector profiles (`nicad` and `default`)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .errors import ConfigError
from .fragment import Layout
from .normalize import Grain, RenameMode


@dataclass(frozen=True)
class CloneType:
    """One clone-finding setting: NiCad's difference threshold and renaming."""

    name: str
    threshold: Fraction
    rename: RenameMode

    @property
    def exact(self) -> bool:
        return self.threshold == 0


def clone_type(name: str, threshold: float | str | Fraction, rename: RenameMode) -> CloneType:
    value = Fraction(str(threshold)) if not isinstance(threshold, Fraction) else threshold
    if not 0 <= value < 1:
        raise ConfigError(f"threshold {threshold}: must be at least 0 and below 1 (0.3 is Type-3)")
    return CloneType(name, value, rename)


CLONE_TYPES: dict[str, CloneType] = {
    "1": clone_type("1", 0, "none"),
    "2": clone_type("2", 0, "blind"),
    "2c": clone_type("2c", 0, "consistent"),
    "3": clone_type("3", "0.3", "blind"),
    "3-2c": clone_type("3-2c", "0.3", "consistent"),
}
LADDER: tuple[CloneType, ...] = (CLONE_TYPES["1"], CLONE_TYPES["2"], CLONE_TYPES["3"])
"""The paper's Type-1/2/3 runs; a pair is labelled with the first (most specific) that finds it."""


def get_clone_type(name: str) -> CloneType:
    try:
        return CLONE_TYPES[name]
    except KeyError:
        raise ConfigError(
            f"unknown clone type {name!r}: choose one of {', '.join(CLONE_TYPES)}"
        ) from None


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
