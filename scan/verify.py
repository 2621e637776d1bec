"""Verifying a candidate: align the canonical with the document and name the clone type.

The canonical's tokens (blind-renamed, as the audit's detector renames) are aligned with the
region of the document where their n-grams cluster, by LCS (rapidfuzz). The matched span is
the document's tokens from the first to the last aligned one; the clone type follows the
audit's bands (cloneprobe.clones LADDER): Type-1 when the tokens are identical as written,
Type-2 when identical after renaming, Type-3 when both sides keep at least 70% of their tokens
in the LCS (NiCad's rule). Whether the document also carries the prompt's docstring or the
task's test code is measured separately, as evidence.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from rapidfuzz.distance import LCSseq

from ..clones.compare import is_near_miss, similarity_percent
from ..clones.types import CLONE_TYPES
from .tokens import WORD, Token, blind_texts, tokenize

ALIGN_NGRAM = 5
"""Tokens per n-gram used to find where in a document the canonical lies."""
MIN_BODY_TOKENS = 15
"""A canonical body shorter than this (blind tokens) is aligned only with its signature."""
EVIDENCE_NGRAM = 6
EVIDENCE_FRACTION = 0.5
"""Share of the docstring's (or the test code's) n-grams a document must hold to carry it."""


@dataclass(frozen=True)
class Alignment:
    start: int
    """First matched token's index in the document's tokens."""
    stop: int
    lcs: int
    canonical_size: int
    clone_type: str | None
    similarity: float
    signature: bool = True
    """Whether the aligned canonical included the signature (else the body alone)."""

    @property
    def span_size(self) -> int:
        return self.stop - self.start


class PreparedDocument:
    """A candidate document, tokenized on first use, with the lookups every task's check
    shares. A candidate that only the prompt's words made (and that does not hold them after
    all) is never tokenized."""

    def __init__(self, text: str, region: tuple[int, int] | None = None):
        self.base = region[0] if region else 0
        self.text = text[region[0] : region[1]] if region else text

    @cached_property
    def tokens(self) -> list[Token]:
        return tokenize(self.text)

    @cached_property
    def blind(self) -> list[str]:
        return blind_texts(self.tokens)

    @cached_property
    def _blind_numbers(self) -> tuple[dict[str, int], list[int]]:
        """A number for each distinct blind-renamed token (a few dozen: keywords, operators,
        the renamed name and literals), in order of first occurrence, and each token's number
        (one pass over the tokens makes both)."""
        vocabulary: dict[str, int] = {}
        number = vocabulary.setdefault
        return vocabulary, [number(text, len(vocabulary)) for text in self.blind]

    @property
    def blind_vocabulary(self) -> dict[str, int]:
        return self._blind_numbers[0]

    @cached_property
    def blind_keys(self) -> np.ndarray:
        """Each ALIGN_NGRAM-gram of blind tokens as one integer (its tokens' numbers as digits
        of GRAM_BASE), in order: exact, without a tuple or a dictionary entry per token."""
        return _gram_keys(np.array(self._blind_numbers[1], dtype=np.int64), ALIGN_NGRAM)

    def gram_positions(self, grams: set[tuple[str, ...]]) -> list[int]:
        """Every place where one of the blind ALIGN_NGRAM-grams starts, in order."""
        if len(self.blind_vocabulary) >= GRAM_BASE:  # too many distinct tokens for a key
            return grams_at(self.blind, grams, ALIGN_NGRAM)
        vocabulary = self.blind_vocabulary
        wanted = [[vocabulary[t] for t in gram] for gram in grams
                  if all(t in vocabulary for t in gram)]  # fmt: skip
        if not wanted:
            return []
        keys = _gram_keys(np.array(wanted, dtype=np.int64).T, ALIGN_NGRAM)
        return np.flatnonzero(np.isin(self.blind_keys, keys)).tolist()

    @cached_property
    def token_texts(self) -> list[str]:
        return [t.text for t in self.tokens]

    @cached_property
    def words(self) -> list[str]:
        """Lower-cased alphanumeric words (`tokens.words` without the places: those of the
        one or two words a span needs are found by `word_span`)."""
        return WORD.findall(self.text.lower())

    def word_span(self, first: int, last: int) -> tuple[int, int]:
        """Character span in the text from the first word's start to the last word's end."""
        found = WORD.finditer(self.text.lower())
        start = next(itertools.islice(found, first, None)).start()
        return start, next(itertools.islice(found, last - first - 1, None)).end()


GRAM_BASE = 1 << 12
"""Blind tokens of a document numbered below this make a 5-gram key of 60 bits."""


def _gram_keys(ids: np.ndarray, n: int) -> np.ndarray:
    """Keys of the n-grams of a sequence of token numbers (1-D: every window, in order), or
    of n-grams given as the n rows of a 2-D array (one column each)."""
    if ids.ndim == 2:
        keys = ids[0].copy()
        for row in ids[1:]:
            keys = keys * GRAM_BASE + row
        return keys
    count = len(ids) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.int64)
    keys = ids[:count].copy()
    for k in range(1, n):
        keys = keys * GRAM_BASE + ids[k : k + count]
    return keys


def grams_at(items: Sequence[str], grams: set[tuple[str, ...]], n: int) -> list[int]:
    """Every place i where items[i:i + n] is one of the n-grams, in order (the same as
    looking up every n-gram of the items, without making a tuple of each)."""
    firsts = {gram[0] for gram in grams}
    return [
        i for i, item in enumerate(items[: max(0, len(items) - n + 1)])
        if item in firsts and tuple(items[i : i + n]) in grams
    ]  # fmt: skip


def _ids(sequences: Sequence[Sequence[str]]) -> list[list[int]]:
    vocabulary: dict[str, int] = {}
    return [[vocabulary.setdefault(item, len(vocabulary)) for item in seq] for seq in sequences]


def _letters(ids: list[int]) -> str:
    """Token ids as the characters of a string: rapidfuzz compares strings without converting
    them on each call, and a string's slices and `find` are cheap."""
    return "".join(map(chr, ids))


def _densest_region(hits: list[int], width: int) -> tuple[int, int]:
    """The [first, last] hit positions of the window of `width` tokens holding most hits."""
    best = (0, 0)
    best_count = 0
    left = 0
    for right, position in enumerate(hits):
        while position - hits[left] > width:
            left += 1
        if right - left + 1 > best_count:
            best_count = right - left + 1
            best = (hits[left], position)
    return best


def align(canonical: Sequence[Token], document: PreparedDocument) -> Alignment | None:
    """Best place of the canonical in the document, or None when nothing lines up."""
    size = len(canonical)
    if size < ALIGN_NGRAM or not document.tokens:
        return None
    canon_blind = [t.blind for t in canonical]
    n = ALIGN_NGRAM
    grams = {tuple(canon_blind[i : i + n]) for i in range(size - n + 1)}
    hits = document.gram_positions(grams)
    if not hits:
        return None
    first, last = _densest_region(hits, int(size * 1.5) + n)
    slack = size // 3 + 2 * n  # an edit can hide up to n - 1 tokens from the n-grams
    total = len(document.tokens)
    # the hits' own stretch (a copy lies exactly there) and, with slack around it, edits near
    # the ends that no n-gram covers; the better of the two
    found = []
    for low, high in ((first, min(total, last + n)),
                      (max(0, first - slack), min(total, last + n + slack))):  # fmt: skip
        canon_ids, region_ids = _ids([canon_blind, document.blind[low:high]])
        tightest = _tightest_span(_letters(canon_ids), _letters(region_ids))
        if tightest is None:
            continue
        first_matched, stop_matched, lcs = tightest
        start, stop = low + first_matched, low + stop_matched
        found.append(Alignment(
            start, stop, lcs, size, _clone_type(canonical, document.tokens[start:stop], lcs),
            similarity_percent(lcs, size, stop - start) / 100,
        ))  # fmt: skip
    return min(found, key=_best_first) if found else None


def _best_first(alignment: Alignment):
    return (TYPE_RANK[alignment.clone_type], -alignment.similarity, alignment.span_size)


TYPE_RANK = {"1": 0, "2": 1, "3": 2, None: 3}
"""Clone types, closest first."""


def _equal_blocks(a: str, b: str) -> list:
    return [op for op in LCSseq.opcodes(a, b) if op.tag == "equal"]


def _tightest_span(canon: str, region: str) -> tuple[int, int, int] | None:
    """(start, stop, lcs) of the shortest stretch of the region holding a longest common
    subsequence with the canonical, among: the stretches between the first and last matched
    tokens of an LCS traceback of the sequences and of the reversed ones (which place ties
    leftmost and rightmost, mostly), and the leftmost and rightmost stretches that hold a
    whole LCS and no shorter stretch inside them does. A traceback alone can reach far out:
    a canonical ending in a name matches any later name, and both tracebacks of a copy of
    HumanEval/137 with a line added, followed by other code, spanned 127 tokens for its 81."""
    forward = _equal_blocks(canon, region)
    if not forward:
        return None
    lcs = sum(op.src_end - op.src_start for op in forward)
    if lcs == len(canon) and (start := region.find(canon)) >= 0:
        return start, start + lcs, lcs  # an unbroken copy of the whole canonical
    backward = _equal_blocks(canon[::-1], region[::-1])
    size = len(region)
    ends = {forward[-1].dest_end, size - backward[0].dest_start}
    starts = {forward[0].dest_start, size - backward[-1].dest_end}
    best = (forward[0].dest_start, forward[-1].dest_end)
    for start in starts:
        for stop in ends:
            shorter = start < stop and stop - start < best[1] - best[0]
            if shorter and LCSseq.similarity(canon, region[start:stop]) == lcs:
                best = (start, stop)
    # the leftmost minimal stretch: the earliest stop, then the latest start before it
    stop = _bisect(lambda s: LCSseq.similarity(canon, region[:s]) == lcs, lcs, min(ends))
    start = _bisect(lambda s: LCSseq.similarity(canon, region[s:stop]) < lcs, 1, stop - lcs + 1)
    leftmost = (start - 1, stop)
    # the rightmost: the latest start, then the earliest stop after it
    start = _bisect(lambda s: LCSseq.similarity(canon, region[s:]) < lcs, max(starts) + 1,
                    size - lcs + 1) - 1  # fmt: skip
    stop = _bisect(lambda s: LCSseq.similarity(canon, region[start:s]) == lcs, start + lcs, size)
    for candidate in (leftmost, (start, stop)):
        if candidate[1] - candidate[0] < best[1] - best[0]:
            best = candidate
    return best[0], best[1], lcs


def _bisect(holds, low: int, high: int) -> int:
    """The least value in [low, high] for which `holds` (false, then true from some value
    on) is true; high when none before it is."""
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _clone_type(canonical: Sequence[Token], span: Sequence[Token], lcs: int) -> str | None:
    n1, n2 = len(canonical), len(span)
    if lcs == n1 == n2:
        if [t.text for t in canonical] == [t.text for t in span]:
            return "1"
        return "2"
    if is_near_miss(lcs, n1, n2, CLONE_TYPES["3"].threshold):
        return "3"
    return None


def best_alignment(
    fragment: Sequence[Token], body: Sequence[Token], document: PreparedDocument
) -> Alignment | None:
    """The better of the whole fragment (signature and body) and, when the body alone is long
    enough to be told apart from common code, the body alone (a document may hold the
    canonical body under another signature)."""
    candidates = [fragment, body] if len(body) >= MIN_BODY_TOKENS else [fragment]
    found = [
        replace(a, signature=c is fragment)
        for c in candidates
        if (a := align(c, document)) is not None
    ]
    if not found:
        return None
    return min(found, key=lambda a: (TYPE_RANK[a.clone_type], -a.similarity, -a.canonical_size))


LITERAL_KINDS = ("int", "float", "string")


def literal_agreement(canonical: Sequence[Token], span: Sequence[Token]) -> float:
    """Share of the canonical's literals (as written, in order) that the span keeps: renaming
    a copy keeps its numbers and strings, while code that merely has the same shape (a
    comprehension over other values) does not. 1.0 when the canonical has no literal."""
    mine = [t.text for t in canonical if t.kind in LITERAL_KINDS]
    if not mine:
        return 1.0
    theirs = [t.text for t in span if t.kind in LITERAL_KINDS]
    ids_mine, ids_theirs = _ids([mine, theirs])
    return LCSseq.similarity(ids_mine, ids_theirs) / len(mine)


BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def _kept_names(tokens: Sequence[Token]) -> list[str]:
    """Builtins and attribute names, which a renamed copy keeps and blind renaming hides."""
    return [
        t.text for i, t in enumerate(tokens)
        if t.kind == "name" and (t.text in BUILTIN_NAMES or (i and tokens[i - 1].text == "."))
    ]  # fmt: skip


def name_agreement(canonical: Sequence[Token], span: Sequence[Token]) -> float:
    """Share of the canonical's builtins and attribute names (in order) the span keeps; 1.0
    when it has none."""
    mine = _kept_names(canonical)
    if not mine:
        return 1.0
    ids_mine, ids_theirs = _ids([mine, _kept_names(span)])
    return LCSseq.similarity(ids_mine, ids_theirs) / len(mine)


def shared_fraction(grams: set[tuple[str, ...]], items: Sequence[str]) -> float:
    """Share of the n-grams found among the n-grams of the items (0 when there are none)."""
    if not grams:
        return 0.0
    n = len(next(iter(grams)))
    found = {tuple(items[i : i + n]) for i in grams_at(items, grams, n)}
    return len(found) / len(grams)


def ngram_set(items: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(items[i : i + n]) for i in range(len(items) - n + 1)}


def prose_match(
    docstring_grams: set[tuple[str, ...]], document: PreparedDocument
) -> tuple[float, tuple[int, int] | None]:
    """(share of the docstring's word n-grams in the document, character span of the densest
    run of those found)."""
    if not docstring_grams:
        return 0.0, None
    found_words = document.words
    positions = grams_at(found_words, docstring_grams, EVIDENCE_NGRAM)
    if not positions:
        return 0.0, None
    found = {tuple(found_words[i : i + EVIDENCE_NGRAM]) for i in positions}
    first, last = _densest_region(positions, 4 * len(docstring_grams) + EVIDENCE_NGRAM)
    start, stop = document.word_span(first, last + EVIDENCE_NGRAM - 1)
    return len(found) / len(docstring_grams), (document.base + start, document.base + stop)
