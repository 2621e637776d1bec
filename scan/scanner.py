"""Scanning documents: a batch in, the verified matches out. Knows nothing of datatrove."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .index import CODE_NGRAM, SHORT_NGRAM, WORD_NGRAM, BenchmarkIndex, Candidate, IndexedTask
from .lexer import LexedBatch, lex
from .results import Match
from .verify import (
    EVIDENCE_FRACTION,
    TYPE_RANK,
    PreparedDocument,
    best_alignment,
    literal_agreement,
    name_agreement,
    prose_match,
    shared_fraction,
)


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    group: str | None = None


@dataclass
class ScanCounts:
    documents: int = 0
    characters: int = 0
    candidates: int = 0
    matches: int = 0
    """`candidates`: the regions verified (a task's n-grams close together in a document)."""


REGION_MARGIN = 2000
"""Characters tokenized on each side of a candidate's hits (more for long canonicals)."""


class DocumentScanner:
    """Finds the index's tasks in batches of documents."""

    def __init__(self, index: BenchmarkIndex):
        self.index = index
        self.code_needed = index.code_needed
        self.code_widths = index.code_widths
        self.short_needed = index.short_needed
        self.prompt_needed = index.prompt_needed
        self.counts = ScanCounts()

    def scan(self, documents: Sequence[Document]) -> list[Match]:
        if not documents:
            return []
        batch = lex([doc.text for doc in documents])
        self.counts.documents += len(documents)
        self.counts.characters += sum(len(doc.text) for doc in documents)
        with_short = len(self.index.short.hashes) > 0
        grams = batch.code.ngrams(CODE_NGRAM, *([SHORT_NGRAM] if with_short else []))
        solution = self.index.candidates(self.index.code, grams[CODE_NGRAM], batch.code,
                                         self.code_needed, self.code_widths)  # fmt: skip
        short = []
        if with_short:
            short = self.index.candidates(self.index.short, grams[SHORT_NGRAM], batch.code,
                                          self.short_needed, self.code_widths)  # fmt: skip
        short_only = {(c.document, c.task) for c in short} - {(c.document, c.task)
                                                               for c in solution}  # fmt: skip
        solution += short
        words = batch.prose.ngrams(WORD_NGRAM)[WORD_NGRAM]
        prompt = self.index.candidates(self.index.prose, words, batch.prose, self.prompt_needed)
        regions: dict[tuple[int, int], list[tuple[int, int] | None]] = {}
        for c in solution:
            pair = (c.document, c.task)
            region = self._region(batch, documents[c.document].text, c, pair in short_only)
            regions.setdefault(pair, []).append(region)
        for c in prompt:
            regions[(c.document, c.task)] = [None]  # the whole document
        matches = []
        prepared: dict[tuple[int, tuple[int, int] | None], PreparedDocument] = {}
        solution_pairs = {(c.document, c.task) for c in solution}
        prompt_pairs = {(c.document, c.task) for c in prompt}
        for (doc_index, task_index), places in sorted(regions.items()):
            doc = documents[doc_index]
            kinds = {name for name, pairs in (("solution", solution_pairs),
                     ("prompt", prompt_pairs), ("short only", short_only))
                     if (doc_index, task_index) in pairs}  # fmt: skip
            found = []
            for region in _merged(places):
                key = (doc_index, region)
                if key not in prepared:
                    prepared[key] = PreparedDocument(doc.text, region)
                self.counts.candidates += 1
                match = verify_candidate(self.index.tasks[task_index], doc, prepared[key], kinds)
                if match is not None:
                    found.append(match)
            if found:
                matches.append(min(found, key=_best_first))
        self.counts.matches += len(matches)
        return matches

    def _region(self, batch: LexedBatch, text: str, candidate: Candidate, short_only: bool):
        """Characters of the document worth tokenizing for this candidate (None: all). A
        candidate the short n-grams alone made must hold the whole canonical (`is_whole`),
        between its first and last hit: a margin of three times the canonical is plenty."""
        task = self.index.tasks[candidate.task]
        margin = 3 * task.fragment_characters
        if not short_only:
            margin = max(REGION_MARGIN, margin)
        if len(text) < margin * 4:
            return None
        offsets, doc = batch.code.offsets, candidate.document
        last_token = min(candidate.last, len(offsets) - 1)
        start = batch.code_start(doc, max(0, int(offsets[candidate.first]) - margin))
        size = int(batch.doc_starts[doc + 1] - batch.doc_starts[doc]) - 1
        stop = min(size, int(offsets[last_token]) + margin)
        return batch.character_offset(doc, text, start), batch.character_offset(doc, text, stop)


def is_whole(alignment, literals: float, names: float) -> bool:
    """Whether the span holds the whole canonical: every token in order (names renamed at
    most), every builtin, attribute name and literal kept; what a copy with lines added is.
    A candidate that only the short n-grams made must be: with five tokens per n-gram, any
    function `def f(s: str) -> str:` whose body has a statement more than `return
    s.lower()` reaches HumanEval/27 (`return string.swapcase()`) at Type-3."""
    return alignment.lcs == alignment.canonical_size and literals == names == 1.0


def _merged(regions: list[tuple[int, int] | None]) -> list[tuple[int, int] | None]:
    """The regions with overlapping ones joined (None, the whole document, takes all)."""
    if None in regions:
        return [None]
    joined: list[tuple[int, int]] = []
    for start, stop in sorted(regions):  # type: ignore[arg-type]
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(stop, joined[-1][1]))
        else:
            joined.append((start, stop))
    return joined  # type: ignore[return-value]


def _best_first(match: Match):
    """A task's matches in one document's several regions, best first: the closer clone
    type, then the more similar, then the earlier."""
    return TYPE_RANK[match.clone_type], -match.similarity, match.span


def verify_candidate(
    task: IndexedTask, doc: Document, prepared: PreparedDocument, kinds: set[str]
) -> Match | None:
    """The match of one task in one document, or None when the candidate does not hold up.
    `kinds`: what made the candidate: `solution` (the canonical's n-grams), `prompt` (the
    docstring's words), `short only` (only the short n-grams of index.SHORT_NGRAM tokens)."""
    alignment = (
        best_alignment(task.fragment, task.body, prepared) if "solution" in kinds else None
    )
    solution = alignment is not None and alignment.clone_type is not None
    literals = names = 1.0
    if solution:
        canonical = task.fragment if alignment.signature else task.body
        span_tokens = prepared.tokens[alignment.start : alignment.stop]
        literals = literal_agreement(canonical, span_tokens)
        names = name_agreement(canonical, span_tokens)
        if "short only" in kinds and not is_whole(alignment, literals, names):
            solution = False
    docstring, prose_span = 0.0, None
    if solution or "prompt" in kinds:
        docstring, prose_span = prose_match(task.docstring_grams, prepared)
    prompt = docstring >= EVIDENCE_FRACTION
    if not solution and not prompt:
        return None
    if solution:
        tokens, base = prepared.tokens, prepared.base
        span = (base + tokens[alignment.start].start, base + tokens[alignment.stop - 1].end)
    else:
        span = prose_span or (0, 0)  # prose spans are already absolute
    test = shared_fraction(task.test_grams, prepared.token_texts)
    return Match(
        task_id=task.task_id,
        document=doc.id,
        group=doc.group,
        span=span,
        lines=(doc.text.count("\n", 0, span[0]) + 1, doc.text.count("\n", 0, span[1]) + 1),
        similarity=alignment.similarity if solution else round(docstring, 3),
        clone_type=alignment.clone_type if solution else None,
        matched="both" if solution and prompt else "solution" if solution else "prompt",
        docstring=round(docstring, 3),
        test=round(test, 3),
        signature=alignment.signature if solution else False,
        literals=round(literals, 3),
        names=round(names, 3),
    )
