"""The clone types: the one registry every stage and report reads.

A clone type is NiCad's pair of settings (difference threshold, renaming) with the rank it
counts under in the reference study's Type-1/2/3 tables and the label it is printed with.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .errors import ConfigError
from .normalize import RenameMode


@dataclass(frozen=True)
class CloneType:
    """One clone-finding setting: NiCad's difference threshold and renaming."""

    name: str
    threshold: Fraction
    rename: RenameMode

    @property
    def exact(self) -> bool:
        return self.threshold == 0

    @property
    def rank(self) -> int:
        """1 (exact, no renaming), 2 (exact after renaming) or 3 (near-miss): the column of
        the Type-1/2/3 tables this type's pairs count in."""
        if not self.exact:
            return 3
        return 1 if self.rename == "none" else 2

    @property
    def label(self) -> str:
        return f"Type-{self.name}" if self.name in CLONE_TYPES else self.name


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
RANKS: tuple[int, ...] = (1, 2, 3)
"""The columns of the Type-1/2/3 tables (counts are cumulative: rank 1 counts in 2 and 3)."""


def get_clone_type(name: str) -> CloneType:
    try:
        return CLONE_TYPES[name]
    except KeyError:
        raise ConfigError(
            f"unknown clone type {name!r}: choose one of {', '.join(CLONE_TYPES)}"
        ) from None


def type_named(name: str) -> CloneType:
    """The type a stored name stands for: a registry name or a custom type's name."""
    return CLONE_TYPES[name] if name in CLONE_TYPES else parse_custom(name)


def rank_of(name: str | None) -> int | None:
    """The rank of a stored clone-type name (None for no clone)."""
    return None if name is None else type_named(name).rank


def custom_name(threshold: Fraction, rename: RenameMode) -> str:
    return f"custom(t={float(threshold):g},{rename})"


def parse_custom(name: str) -> CloneType:
    """The type a `custom(t=...,rename)` name stands for."""
    try:
        inner = name.removeprefix("custom(").removesuffix(")")
        threshold, rename = inner.removeprefix("t=").split(",")
        return clone_type(name, threshold, rename)  # type: ignore[arg-type]
    except (ValueError, ConfigError):
        raise ConfigError(f"unknown clone type {name!r}") from None


def choose_types(
    type_name: str | None, threshold: float | None, rename: RenameMode | None
) -> tuple[CloneType, ...]:
    """The types a run detects: the ladder by default; one registry type; or, where the
    threshold or renaming is overridden, one custom type named after its settings."""
    if type_name is None and threshold is None and rename is None:
        return LADDER
    base = get_clone_type(type_name or "3")
    if type_name is not None:
        changed = [f"--{flag} {value}" for flag, value, own in (
            ("threshold", threshold, base.threshold), ("rename", rename, base.rename))
            if value is not None and value != own]  # fmt: skip
        if changed:
            raise ConfigError(
                f"--type {type_name} means threshold {float(base.threshold):g} with {base.rename} "
                f"renaming, but {' and '.join(changed)} says otherwise; give --type alone, or "
                "--threshold/--rename without --type for a custom type"
            )
    chosen = clone_type(
        base.name,
        base.threshold if threshold is None else threshold,
        base.rename if rename is None else rename,
    )
    if (chosen.threshold, chosen.rename) != (base.threshold, base.rename):
        chosen = clone_type(custom_name(chosen.threshold, chosen.rename), chosen.threshold,
                            chosen.rename)  # fmt: skip
    return (chosen,)
