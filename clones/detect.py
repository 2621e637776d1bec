"""Cross-clone detection between two systems: extract, filter by size, compare, classify."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

from .collector import collector_paused
from .compare import exact_matches, near_miss_matches, similarity_percent
from .errors import ConfigError
from .extract import FragmentExtractor, Granularity
from .fragment import CLOSING_BRACE, Fragment, Line, is_compared
from .languages import LanguageSpec, get_language
from .normalize import BLIND, RenameMode, compared_items
from .profiles import DEFAULT, Profile
from .report import ClonePair, CloneReport, SystemStats
from .source import SourceFile, collect_sources, detect_language
from .types import LADDER, CloneType

_TEXT = itemgetter(1)
"""A token's text."""

System = Path | str | Sequence[SourceFile]
"""A system: a file, a folder, or source files already in memory."""


@dataclass(frozen=True)
class DetectorConfig:
    """Everything that decides a detection run's verdicts; `None` sizes take the profile's."""

    profile: Profile = DEFAULT
    types: tuple[CloneType, ...] = LADDER
    """Clone types to run, most specific first; a pair is labelled with the first that finds it."""
    granularity: Granularity = "functions"
    language: str | None = None
    min_lines: int | None = None
    max_lines: int | None = None
    min_tokens: int | None = None
    prune_embedded: bool = field(default=True)
    """Drop a pair whose fragments lie inside the fragments of another pair (NiCad does)."""

    def __post_init__(self) -> None:
        if not self.types:
            raise ConfigError("no clone type to run: give at least one --type")
        if self.min_size < 0 or self.max_size < max(self.min_size, 1):
            raise ConfigError(
                f"--min-lines {self.min_size} --max-lines {self.max_size}: no fragment size "
                "fits between them; give a --min-lines of at least 0 and at most --max-lines"
            )
        if self.token_floor < 0:
            raise ConfigError(f"--min-tokens {self.token_floor}: must be 0 or more")

    @property
    def min_size(self) -> int:
        return self.profile.min_lines if self.min_lines is None else self.min_lines

    @property
    def max_size(self) -> int:
        return self.profile.max_lines if self.max_lines is None else self.max_lines

    @property
    def token_floor(self) -> int:
        return self.profile.min_tokens if self.min_tokens is None else self.min_tokens

    def settings(self) -> dict[str, Any]:
        """The resolved settings, as every report prints them."""
        return {
            "profile": self.profile.name,
            "grain": self.profile.grain,
            "granularity": self.granularity,
            "types": [
                {"name": t.name, "threshold": float(t.threshold), "rename": t.rename}
                for t in self.types
            ],
            "min_lines": self.min_size,
            "max_lines": self.max_size,
            "min_tokens": self.token_floor,
            "compare_header": self.profile.compare_header,
            "one_liners": self.profile.one_liners,
            "layout": self.profile.layout,
        }

    def keeps(self, fragment: Fragment) -> bool:
        """Size limits (pretty-printed lines) and NiCad's one-liner rule."""
        if fragment.one_liner and not self.profile.one_liners:
            return False
        return self.min_size <= fragment.size <= self.max_size


def load_system(system: System, spec: LanguageSpec) -> list[SourceFile]:
    if isinstance(system, (str, Path)):
        return collect_sources(Path(system), spec)
    return list(system)


def resolve_language(config: DetectorConfig, systems: Sequence[System]) -> LanguageSpec:
    if config.language:
        return get_language(config.language)
    paths = [Path(s) for s in systems if isinstance(s, (str, Path))]
    if len(paths) < len(systems):
        return get_language("python")
    return detect_language(paths)


def find_clones(
    system_a: System, system_b: System, config: DetectorConfig | None = None
) -> CloneReport:
    """Every clone pair with one fragment in system A and one in system B."""
    config = config or DetectorConfig()
    spec = resolve_language(config, [system_a, system_b])
    extractor = FragmentExtractor(spec, config.profile.layout)
    files_a, files_b = load_system(system_a, spec), load_system(system_b, spec)
    fragments_a = [f for s in files_a for f in extractor.extract(s, config.granularity)]
    fragments_b = [f for s in files_b for f in extractor.extract(s, config.granularity)]
    return compare_systems(fragments_a, fragments_b, config, len(files_a), len(files_b))


@collector_paused
def compare_systems(
    fragments_a: Sequence[Fragment],
    fragments_b: Sequence[Fragment],
    config: DetectorConfig,
    files_a: int | None = None,
    files_b: int | None = None,
) -> CloneReport:
    """Cross-clone comparison of already extracted fragments (printed in the profile's layout:
    `FragmentExtractor(spec, config.profile.layout)`)."""
    _check_layout(config.profile, fragments_a, fragments_b)
    kept_a = [f for f in fragments_a if config.keeps(f)]
    kept_b = [f for f in fragments_b if config.keeps(f)]
    encoder = _Encoder(config.profile)
    found: dict[tuple[int, int], tuple[CloneType, int]] = {}
    for ctype in config.types:
        for i, j, similarity in _matches(encoder, kept_a, kept_b, ctype):
            found.setdefault((i, j), (ctype, similarity))
    if config.prune_embedded:
        found = _prune_embedded(found, kept_a, kept_b)
    floor = config.token_floor
    pairs = tuple(
        ClonePair(
            a=kept_a[i],
            b=kept_b[j],
            clone_type=ctype,
            similarity=similarity,
            trivial=floor > 0
            and min(encoder.token_count(kept_a[i]), encoder.token_count(kept_b[j])) < floor,
        )
        for (i, j), (ctype, similarity) in sorted(
            found.items(), key=lambda item: _pair_order(kept_a, kept_b, *item[0])
        )
    )
    return CloneReport(
        profile=config.profile,
        settings=config.settings(),
        system_a=_stats(fragments_a, kept_a, files_a),
        system_b=_stats(fragments_b, kept_b, files_b),
        pairs=pairs,
    )


def _check_layout(
    profile: Profile, fragments_a: Sequence[Fragment], fragments_b: Sequence[Fragment]
) -> None:
    for fragment in (*fragments_a, *fragments_b):
        if fragment.layout != profile.layout:
            raise ConfigError(
                f"{fragment.location}: extracted in the {fragment.layout!r} layout, but the "
                f"{profile.name} profile compares the {profile.layout!r} layout; extract with "
                f"FragmentExtractor(spec, profile.layout)"
            )


class _Encoder:
    """Interns compared items to integers, once per fragment and renaming mode (fragments are
    known by their lines tuple and body start: the extractor gives every copy of a program
    text the same lines, so a repeated program is encoded once).

    Without consistent renaming (which numbers names per fragment) a line's items do not
    depend on its fragment, so each distinct line gets a slot once (one hash of its tokens,
    whatever the number of modes), each slot is renamed and interned once per mode, and a
    fragment's sequence is its slots' items in order (the same sequence `compared_items`
    gives). Fragments with the same slots share their sequences. A fragment with a string
    spanning rows (`str_row` lines) is renamed by folding those rows into the line the string
    starts on, as `compared_lines` does; consistent renaming takes the slower path through
    `compared_items`."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.vocabulary: dict[str, int] = {}
        self.cache: dict[tuple[int, int, RenameMode], tuple[int, ...]] = {}
        self.slot_of: dict[Line, int] = {}
        self.slot_lines: list[Line] = []
        self.str_row_slots: set[int] = set()
        self.slot_items: dict[RenameMode, list[tuple[int, ...]]] = {}
        self.slots_of: dict[tuple[int, int], tuple[int, ...]] = {}
        self.by_slots: dict[tuple[tuple[int, ...], RenameMode], tuple[int, ...]] = {}
        self.uniques: dict[tuple[int, RenameMode], tuple[list, list]] = {}

    def sequence(self, fragment: Fragment, mode: RenameMode) -> tuple[int, ...]:
        key = (id(fragment.lines), fragment.body_start, mode)
        seq = self.cache.get(key)
        if seq is None:
            if mode != "consistent":
                seq = self.slots_sequence(self.slots(fragment), mode)
            else:
                vocabulary = self.vocabulary
                profile = self.profile
                items = compared_items(fragment, mode, profile.grain, profile.compare_header)
                seq = tuple(vocabulary.setdefault(item, len(vocabulary)) for item in items)
            self.cache[key] = seq
        return seq

    def slots(self, fragment: Fragment) -> tuple[int, ...]:
        """The slots of the fragment's compared lines (the signature's only if the profile
        compares it)."""
        key = (id(fragment.lines), fragment.body_start)
        try:
            return self.slots_of[key]
        except KeyError:
            pass
        lines = fragment.lines
        if not self.profile.compare_header:
            lines = lines[fragment.body_start :]
        slot_of, slot_lines = self.slot_of, self.slot_lines
        known = len(slot_lines)
        add = slot_of.setdefault
        slots = tuple([add(line, len(slot_of)) for line in lines])
        if len(slot_of) > known:  # new lines, numbered in order of first appearance
            for line, slot in zip(lines, slots, strict=True):
                if slot == len(slot_lines):
                    if line[0][0] == "str_row":
                        self.str_row_slots.add(slot)
                    slot_lines.append(line)
        self.slots_of[key] = slots
        return slots

    def slots_sequence(self, slots: tuple[int, ...], mode: RenameMode) -> tuple[int, ...]:
        """The sequence of a fragment with these slots, in `mode` (not consistent)."""
        seq = self.by_slots.get((slots, mode))
        if seq is None:
            if mode != "none" and not self.str_row_slots.isdisjoint(slots):
                seq = self.folded_sequence(slots, mode)
            else:
                items = self.slot_items.setdefault(mode, [])
                if len(items) < len(self.slot_lines):
                    items += self.lines_ids(self.slot_lines[len(items) :], mode)
                seq = tuple(chain.from_iterable(map(items.__getitem__, slots)))
            self.by_slots[(slots, mode)] = seq
        return seq

    def folded_sequence(self, slots: tuple[int, ...], mode: RenameMode) -> tuple[int, ...]:
        """The sequence of a fragment with a multi-row string, in a renaming mode (not none,
        not consistent): `compared_lines`'s folding of each `str_row` line's tokens after its
        first into the compared line before it, on lines renamed one by one."""
        compared: list[list[str]] = []
        for slot in slots:
            line = self.slot_lines[slot]
            if not is_compared(line):
                continue
            tokens = [BLIND.get(kind, text) for kind, text in line]
            if line[0][0] == "str_row":
                if compared:
                    compared[-1].extend(tokens[1:])
                    continue
                tokens = tokens[1:]
            compared.append(tokens)
        vocabulary = self.vocabulary
        if self.profile.grain == "line":
            items = [" ".join(tokens) for tokens in compared]
        else:
            items = [token for tokens in compared for token in tokens]
        return tuple(vocabulary.setdefault(item, len(vocabulary)) for item in items)

    def unique(
        self, fragments: list[Fragment], mode: RenameMode
    ) -> tuple[list[tuple[int, ...]], list[list[int]]]:
        """`_unique` of the fragments' sequences in `mode`, once per list and mode (Type-2 and
        Type-3 both compare blind-renamed sequences)."""
        key = (id(fragments), mode)
        found = self.uniques.get(key)
        if found is None:
            found = self.uniques[key] = _unique(self.sequence(f, mode) for f in fragments)
        return found

    def lines_ids(self, lines: list[Line], mode: RenameMode) -> list[tuple[int, ...]]:
        """Each line's compared items as ids: none for a closing brace, else its text (line
        grain) or its tokens (token grain), renamed (`none` or `blind`). Texts are taken and
        renamed by map over the line's kinds and texts (a comprehension unpacking each token
        costs twice as much)."""
        vocabulary = self.vocabulary
        add = vocabulary.setdefault
        by_line = self.profile.grain == "line"
        blind = mode == "blind"
        out: list[tuple[int, ...]] = []
        for line in lines:
            if not line:  # never printed; the plain way's empty text, kept exact
                texts: Iterable[str] = ()
            elif line == CLOSING_BRACE:
                out.append(())
                continue
            elif blind:
                texts = map(BLIND.get, *zip(*line, strict=True))
            else:
                texts = map(_TEXT, line)
            if by_line:
                out.append((add(" ".join(texts), len(vocabulary)),))
            else:
                out.append(tuple([add(text, len(vocabulary)) for text in texts]))
        return out

    def token_count(self, fragment: Fragment) -> int:
        if self.profile.grain == "token":
            return len(self.sequence(fragment, "none"))
        return len(compared_items(fragment, "none", "token", self.profile.compare_header))


def _matches(
    encoder: _Encoder, kept_a: list[Fragment], kept_b: list[Fragment], ctype: CloneType
) -> list[tuple[int, int, int]]:
    """(i, j, similarity) for fragment pairs that are clones of type `ctype`."""
    unique_a, members_a = encoder.unique(kept_a, ctype.rename)
    unique_b, members_b = encoder.unique(kept_b, ctype.rename)
    if ctype.exact:
        hits = [(i, j, 100) for i, j, _ in exact_matches(unique_a, unique_b)]
    else:
        hits = [
            (i, j, similarity_percent(lcs, len(unique_a[i]), len(unique_b[j])))
            for i, j, lcs in near_miss_matches(unique_a, unique_b, ctype.threshold)
        ]
    return [(a, b, sim) for i, j, sim in hits for a in members_a[i] for b in members_b[j]]


def _unique(sequences) -> tuple[list[tuple[int, ...]], list[list[int]]]:
    """Distinct non-empty sequences and, for each, the indices of the fragments that have it."""
    index: dict[tuple[int, ...], int] = {}
    unique: list[tuple[int, ...]] = []
    members: list[list[int]] = []
    for position, seq in enumerate(sequences):
        if not seq:
            continue
        slot = index.get(seq)
        if slot is None:
            slot = index[seq] = len(unique)
            unique.append(seq)
            members.append([])
        members[slot].append(position)
    return unique, members


def _contains(outer: Fragment, inner: Fragment) -> bool:
    return (
        outer is not inner
        and outer.file == inner.file
        and outer.start_line <= inner.start_line
        and inner.end_line <= outer.end_line
    )


def _prune_embedded(
    found: dict[tuple[int, int], tuple[CloneType, int]],
    kept_a: list[Fragment],
    kept_b: list[Fragment],
) -> dict[tuple[int, int], tuple[CloneType, int]]:
    """NiCad drops a pair when another pair's fragments contain both of its fragments."""
    by_files: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, j in found:
        by_files.setdefault((kept_a[i].file, kept_b[j].file), []).append((i, j))
    pruned = dict(found)
    for group in by_files.values():
        if len(group) < 2:
            continue
        for i, j in group:
            if any(
                _contains(kept_a[oi], kept_a[i]) and _contains(kept_b[oj], kept_b[j])
                for oi, oj in group
            ):
                del pruned[(i, j)]
    return pruned


def _pair_order(kept_a: list[Fragment], kept_b: list[Fragment], i: int, j: int):
    a, b = kept_a[i], kept_b[j]
    return (a.file, a.start_line, b.file, b.start_line)


def _stats(all_fragments: Sequence[Fragment], kept: list[Fragment], files: int | None):
    return SystemStats(
        files=files if files is not None else len({f.file for f in all_fragments}),
        fragments=len(all_fragments),
        compared=len(kept),
        with_errors=sum(1 for f in kept if f.has_errors),
    )
