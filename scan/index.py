"""The n-gram index of a benchmark: what the scan looks for in every document.

Per task it holds the hashes of the token n-grams of the canonical fragment (signature and
canonical body, comments and docstring removed: what the audit compares), and the hashes of
the word n-grams of the prompt's docstring. A bitmap over every hash's spread top bits lets the
scan drop almost all n-grams of a document with one vectorized lookup; the few survivors are
checked exactly against sorted (hash, task) postings.

A copy with a line added keeps only the n-grams on either side of the line. For most
canonicals that is plenty of 10-grams; for a one-statement canonical (`def add(x: int, y:
int): return x + y`, 16 tokens) a line between signature and body leaves none. So the index
works out, per task, the fewest of its n-grams a copy keeps whichever statement the line goes
before, and a task that could then fall under its candidate threshold is also indexed by
SHORT_NGRAM-grams, with the threshold that such a copy is sure to reach (7 of HumanEval's
164: 27, 34, 38, 41, 45, 53, 60).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..benchmarks import Benchmark, Task, canonical_source
from ..benchmarks.canonical import strip_comments
from ..benchmarks.docstrings import docstring_holders
from .hashing import ngram_hashes, spread_slots
from .lexer import TokenBatch, code_tokens, word_tokens
from .planting import statement_lines
from .tokens import Token, tokenize, words
from .verify import EVIDENCE_NGRAM, ngram_set

CODE_NGRAM = 10
"""Tokens per code n-gram (measured: 10 keeps planted recall at 1.0 while random code rarely
shares a tenth of a canonical's n-grams; see perf/scan_throughput.py)."""
SHORT_NGRAM = 5
"""Tokens per n-gram of the second index, for the tasks an added line can hide from the
first (the verifier's own alignment unit, verify.ALIGN_NGRAM)."""
WORD_NGRAM = 6
"""Words per docstring n-gram."""
BITMAP_BITS = 22
SHORT_BITMAP_BITS = 16
"""The second index holds about a hundred n-grams: a bitmap that stays in the cache."""


@dataclass(frozen=True)
class IndexedTask:
    """What the verifier needs of one task."""

    task_id: str
    fragment: tuple[Token, ...]
    """Signature and canonical body, tokenized."""
    body: tuple[Token, ...]
    """The canonical body alone."""
    docstring: str
    test: str
    code_ngrams: int
    """Distinct code n-grams of the fragment in the index."""
    code_tokens: int
    """Tokens of the fragment (scanning lexer)."""
    prompt_ngrams: int
    """Distinct word n-grams of the docstring in the index."""
    short_needed: int = 0
    """Distinct SHORT_NGRAM-grams of the fragment a document must hold to be a candidate by
    the second index (0: the task is not in it)."""

    @property
    def fragment_characters(self) -> int:
        return self.fragment[-1].end if self.fragment else 0

    @cached_property
    def docstring_grams(self) -> set[tuple[str, ...]]:
        return ngram_set([w for w, _, _ in words(self.docstring)], EVIDENCE_NGRAM)

    @cached_property
    def test_grams(self) -> set[tuple[str, ...]]:
        return ngram_set([t.text for t in tokenize(self.test)], EVIDENCE_NGRAM)


def prompt_docstring(task: Task) -> str:
    """The docstrings of the task's prompt, joined (empty if it has none or does not parse)."""
    try:
        tree = ast.parse(task.prompt)
    except SyntaxError:
        return ""
    texts = [ast.get_docstring(holder) or "" for holder in docstring_holders(tree)]
    return "\n".join(text for text in texts if text)


@dataclass(frozen=True)
class Postings:
    """Sorted (hash, task) pairs with a bitmap over the hashes' spread top bits."""

    hashes: np.ndarray
    tasks: np.ndarray
    bitmap: np.ndarray = field(repr=False)
    n: int
    """Tokens (or words) per n-gram."""
    bits: int
    """The bitmap has 2**bits slots (hashing.spread_slots)."""

    @classmethod
    def build(cls, per_task: list[np.ndarray], n: int, bits: int = BITMAP_BITS) -> Postings:
        pairs_hash = np.concatenate([h for h in per_task] or [np.empty(0, np.uint64)])
        pairs_task = np.concatenate(
            [np.full(len(h), t, dtype=np.int32) for t, h in enumerate(per_task)]
            or [np.empty(0, np.int32)]
        )
        order = np.lexsort((pairs_task, pairs_hash))
        bitmap = np.zeros(1 << bits, dtype=bool)
        bitmap[spread_slots(pairs_hash, bits)] = True
        return cls(pairs_hash[order], pairs_task[order], bitmap, n, bits)

    def lookup(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(place, task, n-gram) of every hit: place is the n-gram's index in `grams`, and an
        n-gram of several tasks is a hit of each."""
        places = np.flatnonzero(self.bitmap[spread_slots(grams, self.bits)])
        grams = grams[places]
        left = np.searchsorted(self.hashes, grams, side="left")
        counts = np.searchsorted(self.hashes, grams, side="right") - left
        firsts = np.repeat(left - np.cumsum(counts) + counts, counts)
        tasks = self.tasks[firsts + np.arange(counts.sum())]
        return np.repeat(places, counts), tasks, np.repeat(grams, counts)


@dataclass(frozen=True)
class Candidate:
    document: int
    """Index of the document in its batch."""
    task: int
    first: int
    """Token index (scanning lexer) of the first hit's first token and of the last hit's
    last token."""
    last: int


@dataclass(frozen=True)
class BenchmarkIndex:
    name: str
    tasks: tuple[IndexedTask, ...]
    code: Postings
    prose: Postings
    short: Postings
    """SHORT_NGRAM-grams of the tasks an added line can hide from `code`."""
    min_fraction: float

    def candidates(
        self, postings: Postings, grams: np.ndarray, batch: TokenBatch, needed: np.ndarray,
        widths: np.ndarray | None = None,
    ) -> list[Candidate]:
        """(document, task) pairs where a document of the batch holds at least `needed` (per
        task) of the task's distinct n-grams (`grams`: `batch.ngrams`' hashes of the postings'
        size), with where the hits lie. With `widths`
        (tokens per task), the n-grams must lie within that many tokens of each other, and a
        pair has a candidate for each stretch where they do: a copy's n-grams lie together,
        while a large document reaches a small canonical's share with hits strewn all over
        it (the verifier then tokenizes the stretches, not everything between them)."""
        place, task, gram = postings.lookup(grams)
        owner, inside = batch.owners(place, postings.n)
        owner, task, gram, place = owner[inside], task[inside], gram[inside], place[inside]
        if len(owner) == 0:
            return []
        # one key per (document, task); sorted by key, then n-gram: distinct n-grams are the
        # first of each run of equal (key, n-gram), counted per key, with no step per hit
        key = owner.astype(np.int64) * (len(needed) + 1) + task
        order = np.lexsort((gram, key))
        key, gram, place = key[order], gram[order], place[order]
        new_key = np.ones(len(key), dtype=bool)
        new_key[1:] = key[1:] != key[:-1]
        new_gram = new_key.copy()
        new_gram[1:] |= gram[1:] != gram[:-1]
        firsts = np.flatnonzero(new_key)
        distinct = np.add.reduceat(new_gram.astype(np.int64), firsts)
        first_place = np.minimum.reduceat(place, firsts)
        last_place = np.maximum.reduceat(place, firsts)
        documents = owner[order][firsts]
        tasks = task[order][firsts]
        needed = needed[tasks]
        chosen = np.flatnonzero(distinct >= needed)
        ends = np.append(firsts[1:], len(key))
        found = []
        for i in chosen.tolist():
            stretches = [(int(first_place[i]), int(last_place[i]))]
            if widths is not None and stretches[0][1] - stretches[0][0] > widths[tasks[i]]:
                stretches = _dense_stretches(place[firsts[i] : ends[i]], gram[firsts[i] : ends[i]],
                                             int(widths[tasks[i]]), int(needed[i]))  # fmt: skip
            found += [Candidate(int(documents[i]), int(tasks[i]), first, last + postings.n - 1)
                      for first, last in stretches]  # fmt: skip
        return found

    @property
    def code_needed(self) -> np.ndarray:
        return self._needed([t.code_ngrams for t in self.tasks])

    @property
    def short_needed(self) -> np.ndarray:
        return np.array([t.short_needed for t in self.tasks], dtype=np.int64)

    @property
    def code_widths(self) -> np.ndarray:
        """Tokens a copy of each task's fragment may spread over: a Type-3 copy keeps 70% of
        its tokens in common with the canonical, so it is at most 1/0.7 times as long; twice,
        and an n-gram, for slack."""
        return np.array([2 * t.code_tokens + CODE_NGRAM for t in self.tasks], dtype=np.int64)

    @property
    def prompt_needed(self) -> np.ndarray:
        return self._needed([t.prompt_ngrams for t in self.tasks])

    def _needed(self, sizes: list[int]) -> np.ndarray:
        """At least `min_fraction` of each task's distinct n-grams, and at least two."""
        return np.maximum(2, np.ceil(self.min_fraction * np.array(sizes, dtype=np.int64)))


def _dense_stretches(
    places: np.ndarray, grams: np.ndarray, width: int, needed: int
) -> list[tuple[int, int]]:
    """(first, last) hit places of the stretches where some `width` tokens hold `needed`
    distinct n-grams (overlapping such windows merged into one stretch)."""
    order = np.argsort(places, kind="stable")
    places, grams = places[order].tolist(), grams[order].tolist()
    counts: dict[int, int] = {}
    stretches: list[tuple[int, int]] = []
    left = 0
    for right, place in enumerate(places):
        counts[grams[right]] = counts.get(grams[right], 0) + 1
        while place - places[left] > width:
            gram = grams[left]
            counts[gram] -= 1
            if not counts[gram]:
                del counts[gram]
            left += 1
        if len(counts) >= needed:
            if stretches and places[left] <= stretches[-1][1]:
                stretches[-1] = (stretches[-1][0], place)
            else:
                stretches.append((places[left], place))
    return stretches


def build_index(benchmark: Benchmark, min_fraction: float = 0.25) -> BenchmarkIndex:
    """The index of every Python task of the benchmark."""
    tasks = [task for task in benchmark if task.language == "python"]
    fragments = [canonical_source(task) for task in tasks]
    docstrings = [prompt_docstring(task) for task in tasks]
    code_batch = code_tokens(fragments)
    prose_batch = word_tokens(docstrings)
    code_sets = _specific([_distinct(code_batch, i, CODE_NGRAM) for i in range(len(tasks))])
    prose_sets = _specific([_distinct(prose_batch, i, WORD_NGRAM) for i in range(len(tasks))])
    short_sets, short_needed = _short_index(fragments, code_batch, code_sets, min_fraction)
    indexed = tuple(
        IndexedTask(
            task_id=task.task_id,
            fragment=tuple(tokenize(fragment)),
            body=tuple(tokenize(strip_comments(task.canonical_solution))),
            docstring=docstring,
            test=task.test,
            code_ngrams=len(code),
            code_tokens=int(code_batch.starts[i + 1] - code_batch.starts[i]),
            prompt_ngrams=len(prose),
            short_needed=short_needed[i],
        )
        for i, (task, fragment, docstring, code, prose) in enumerate(zip(
            tasks, fragments, docstrings, code_sets, prose_sets, strict=True
        ))
    )
    return BenchmarkIndex(
        benchmark.name, indexed, Postings.build(code_sets, CODE_NGRAM),
        Postings.build(prose_sets, WORD_NGRAM),
        Postings.build(short_sets, SHORT_NGRAM, SHORT_BITMAP_BITS), min_fraction,
    )


def _short_index(
    fragments: list[str], batch: TokenBatch, code_sets: list[np.ndarray], min_fraction: float
) -> tuple[list[np.ndarray], list[int]]:
    """The SHORT_NGRAM-grams of each task that a copy with a line added could hide from the
    CODE_NGRAM index (it keeps fewer of them than the candidate threshold), and the fewest
    of them such a copy keeps (the task's threshold in the short index; at least two).
    Other tasks get no n-grams and a threshold of 0."""
    sets, needed = [], []
    for i, fragment in enumerate(fragments):
        tokens = batch.document(i)
        places = _added_line_places(fragment, batch.offsets[batch.starts[i] : batch.starts[i + 1]])
        threshold = max(2, int(np.ceil(min_fraction * len(code_sets[i]))))
        if not places or _kept_after_added_line(tokens, places, code_sets[i], CODE_NGRAM) >= (
            threshold
        ):
            sets.append(np.empty(0, np.uint64))
            needed.append(0)
            continue
        sets.append(np.unique(ngram_hashes(tokens, SHORT_NGRAM)))
        needed.append(max(2, _kept_after_added_line(tokens, places, sets[-1], SHORT_NGRAM)))
    return sets, needed


def _added_line_places(fragment: str, offsets: np.ndarray) -> list[int]:
    """Token indices (scanning lexer) before which a line can be added to the fragment: the
    first token of each statement of its function, the function itself left out (where
    `planting.line_added` adds one); every line's first token when it does not parse."""
    try:
        lines = statement_lines(fragment)
    except (SyntaxError, StopIteration):
        lines = list(range(2, fragment.count("\n") + 2))
    starts = np.cumsum([0] + [len(line) for line in fragment.encode().splitlines(True)])
    return sorted({int(np.searchsorted(offsets, starts[line - 1])) for line in lines
                   if line - 1 < len(starts)} - {0, len(offsets)})  # fmt: skip


def _kept_after_added_line(
    tokens: np.ndarray, places: list[int], indexed: np.ndarray, n: int
) -> int:
    """The fewest of the indexed n-grams a copy keeps with a line added before one of the
    places: those with an occurrence that lies wholly on one side of the line (the n-grams
    of each side are the whole fragment's that do not cross it)."""
    wanted = set(indexed.tolist())
    occurrences: dict[int, list[int]] = {}
    for i, gram in enumerate(ngram_hashes(tokens, n).tolist()):
        if gram in wanted:
            occurrences.setdefault(gram, []).append(i)
    fewest = len(indexed)
    for place in places:
        kept = sum(any(i + n <= place or i >= place for i in found)
                   for found in occurrences.values())  # fmt: skip
        fewest = min(fewest, kept)
    return fewest


def _distinct(batch, i: int, n: int) -> np.ndarray:
    return np.unique(ngram_hashes(batch.document(i), n))


SHARED_BY = 3
"""An n-gram that this many canonicals have in common is dropped from the index."""
MIN_SPECIFIC = 4


def _specific(per_task: list[np.ndarray]) -> list[np.ndarray]:
    """Each task's n-grams less those SHARED_BY or more tasks have in common (a typed
    signature, a loop header: what any code has, not what one task is); a task left with
    fewer than MIN_SPECIFIC keeps them all (HumanEval/31's `is_prime` is inside others)."""
    every = np.concatenate(per_task or [np.empty(0, np.uint64)])
    values, counts = np.unique(every, return_counts=True)
    shared = values[counts >= SHARED_BY]
    kept = [grams[~np.isin(grams, shared, kind="sort")] for grams in per_task]
    return [k if len(k) >= MIN_SPECIFIC else g for k, g in zip(kept, per_task, strict=True)]
