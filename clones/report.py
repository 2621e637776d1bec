"""What a detection run returns: clone pairs, clone classes, and the settings that made them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .classes import CloneClass, clone_classes
from .fragment import Fragment
from .normalize import compared_lines
from .profiles import Profile
from .types import CloneType


@dataclass(frozen=True)
class ClonePair:
    """A fragment of system A and one of system B that are clones."""

    a: Fragment
    b: Fragment
    clone_type: CloneType
    """The most specific configured type that finds the pair."""
    similarity: int
    """Percent of the larger fragment's compared items in the LCS (100 for exact clones)."""
    trivial: bool = False
    """A fragment is under the profile's token floor: too short to show memorization."""

    def compared(self, profile: Profile) -> tuple[list[str], list[str]]:
        """The renamed lines each side was compared on (for --explain)."""
        mode, header = self.clone_type.rename, profile.compare_header
        return (
            [" ".join(t) for t in compared_lines(self.a, mode, header)],
            [" ".join(t) for t in compared_lines(self.b, mode, header)],
        )


@dataclass(frozen=True)
class SystemStats:
    files: int
    fragments: int
    """Fragments extracted."""
    compared: int
    """Fragments left after the size limits."""
    with_errors: int
    """Compared fragments in which the parser recovered from a syntax error."""


@dataclass(frozen=True)
class CloneReport:
    profile: Profile
    settings: dict[str, Any]
    system_a: SystemStats
    system_b: SystemStats
    pairs: tuple[ClonePair, ...]

    @cached_property
    def classes(self) -> tuple[CloneClass, ...]:
        """The clone classes of the non-trivial pairs, formed the first time they are asked
        for (the audit never asks: it reads pairs, and a graph library is slow to import)."""
        type_order = [t["name"] for t in self.settings["types"]]
        return clone_classes(self.clone_pairs, type_order)

    @property
    def clone_pairs(self) -> tuple[ClonePair, ...]:
        """Pairs that count as clones (trivial ones excluded)."""
        return tuple(p for p in self.pairs if not p.trivial)

    @property
    def trivial_pairs(self) -> tuple[ClonePair, ...]:
        return tuple(p for p in self.pairs if p.trivial)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        """Machine-readable form (the `--json` output)."""

        def fragment(f: Fragment) -> dict[str, Any]:
            return {
                "file": f.file,
                "name": f.name,
                "start_line": f.start_line,
                "end_line": f.end_line,
                "lines": f.size,
                "has_errors": f.has_errors,
            }

        def pair(p: ClonePair) -> dict[str, Any]:
            out = {
                "a": fragment(p.a),
                "b": fragment(p.b),
                "type": p.clone_type.name,
                "similarity": p.similarity,
                "trivial": p.trivial,
            }
            if explain:
                out["a"]["compared"], out["b"]["compared"] = p.compared(self.profile)
            return out

        return {
            "profile": self.profile.name,
            "settings": self.settings,
            "systems": {
                name: vars(stats) for name, stats in (("a", self.system_a), ("b", self.system_b))
            },
            "pairs": [pair(p) for p in self.pairs],
            "classes": [
                {
                    "id": c.id,
                    "type": c.clone_type,
                    "pairs": c.pairs,
                    "fragments": [fragment(f) for f in c.fragments],
                }
                for c in self.classes
            ],
        }
