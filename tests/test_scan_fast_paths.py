"""The scan's faster paths give what the plain ways give: the prose words hashed from the
literals' bytes alone, the verifier's 5-gram places found by integer keys, the index's count
of n-grams a copy with a line added keeps, and the bitmap over spread hashes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cloneprobe.scan.hashing import MAX_TOKEN_BYTES, ngram_hashes, token_hash
from cloneprobe.scan.index import (
    CODE_NGRAM,
    SHORT_NGRAM,
    _added_line_places,
    _kept_after_added_line,
    build_index,
)
from cloneprobe.scan.index_cache import benchmark_index
from cloneprobe.scan.lexer import code_tokens, lex
from cloneprobe.scan.verify import ALIGN_NGRAM, GRAM_BASE, PreparedDocument

PROSE_WORD = re.compile(rb"[a-z0-9]+")
PIECES = st.sampled_from(['"', "'", '"""', "#", "\\", "\n", " ", "x = ", "Word", "b9 ", "; ",
                          "\u00e9t\u00e9", "q" * 70, "# end"])  # fmt: skip


def plain_prose_words(texts: list[str]) -> list[list[tuple[int, int]]]:
    """Per text, (hash, offset) of the lower-cased ASCII words in its comments and literals,
    found in each literal's own bytes with a regular expression."""
    batch = lex(texts)
    spans = list(zip(batch.literal_starts.tolist(), batch.literal_ends.tolist(), strict=True))
    found = []
    for number in range(len(texts)):
        start, stop = int(batch.doc_starts[number]), int(batch.doc_starts[number + 1])
        words = []
        for low, high in spans:
            if start <= low < stop:
                piece = batch.data[low:high].lower()
                for word in PROSE_WORD.finditer(piece):
                    words.append((token_hash(word.group()), low + word.start() - start))
        found.append(words)
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=30).map("".join), min_size=1, max_size=4))
def test_prose_words_are_each_literals_own_words_with_their_document_offsets(texts):
    batch = lex(texts).prose
    expected = plain_prose_words(texts)
    for number, words in enumerate(expected):
        first, last = int(batch.starts[number]), int(batch.starts[number + 1])
        got = list(zip(batch.hashes[first:last].tolist(), batch.offsets[first:last].tolist(),
                       strict=True))  # fmt: skip
        assert got == words, (number, texts)


def test_prose_words_of_a_batch_ending_in_a_comment_word():
    # the literals' bytes end on a word byte: its run ends at the end of the gathered bytes
    texts = ['x = "a b"', "y = 1  # the last word" + "z" * 80]
    batch = lex(texts).prose
    assert batch.document(1).tolist()[-1] == token_hash(("word" + "z" * 80)[:MAX_TOKEN_BYTES]
                                                        .encode())  # fmt: skip
    assert batch.offsets[-1] == texts[1].index("word")


def test_code_word_lengths_hold_at_the_batch_end_and_after_long_words():
    names = ["." + "a" * 70, ".b", "len", "c" * 9]
    batch = code_tokens(["x" * 200 + " = 1\n", "".join(names[:2]) + " " + " ".join(names[2:])])
    kept = [token_hash(names[0][:MAX_TOKEN_BYTES].encode()), token_hash(b".b"),
            token_hash(b"len")]  # fmt: skip
    assert batch.document(1).tolist()[:3] == kept


def dictionary_positions(document: PreparedDocument, grams: set[tuple[str, ...]]) -> list[int]:
    """The former way: a dictionary of every 5-gram of the document, looked up per gram."""
    table: dict[tuple[str, ...], list[int]] = {}
    blind = document.blind
    for i in range(len(blind) - ALIGN_NGRAM + 1):
        table.setdefault(tuple(blind[i : i + ALIGN_NGRAM]), []).append(i)
    return sorted(p for gram in grams for p in table.get(gram, ()))


@pytest.fixture(scope="module")
def index():
    return benchmark_index("humaneval")


def test_five_gram_places_by_keys_are_the_dictionarys(index):
    text = "\n".join(
        f"def f{i}(a, b):\n    return sorted(set(a) & set(b))  # {i}\n"
        for i in range(30)
    ) + "\nx = [v for v in range(10) if v % 2]\n"
    document = PreparedDocument(text)
    for task in index.tasks[:60]:
        blind = [t.blind for t in task.fragment]
        grams = {tuple(blind[i : i + ALIGN_NGRAM]) for i in range(len(blind) - ALIGN_NGRAM + 1)}
        assert document.gram_positions(grams) == dictionary_positions(document, grams)
    grams = {tuple(document.blind[3 : 3 + ALIGN_NGRAM])}
    assert document.gram_positions(grams) == dictionary_positions(document, grams) != []


def test_five_gram_places_with_more_distinct_tokens_than_a_key_holds():
    symbols = [chr(c) for c in range(0x2190, 0x2C00) if re.fullmatch(r"[^\s\w]", chr(c))]
    symbols += [chr(c) for c in range(0x1F300, 0x1FB00) if re.fullmatch(r"[^\s\w]", chr(c))]
    assert len(set(symbols)) + 1 > GRAM_BASE
    text = " ".join(symbols) + "\nif x : return x\nif x : return x\n"
    document = PreparedDocument(text)
    assert len(document.blind_vocabulary) >= GRAM_BASE
    grams = {("if", "x", ":", "return", "x"), tuple(symbols[10:15])}
    assert document.gram_positions(grams) == dictionary_positions(document, grams)
    assert len(document.gram_positions(grams)) == 3


def kept_by_sides(tokens: np.ndarray, places: list[int], indexed: np.ndarray, n: int) -> int:
    """The former way: hash each side of the line on its own and count the indexed n-grams
    found on either side."""
    fewest = len(indexed)
    for place in places:
        sides = np.concatenate([ngram_hashes(tokens[:place], n), ngram_hashes(tokens[place:], n)])
        fewest = min(fewest, int(np.isin(indexed, sides, kind="sort").sum()))
    return fewest


def test_ngrams_kept_with_a_line_added_are_counted_as_hashing_each_side_counts(index):
    from cloneprobe.benchmarks import canonical_source, load_benchmark

    tasks = list(load_benchmark("humaneval").tasks)
    fragments = [canonical_source(task) for task in tasks]
    batch = code_tokens(fragments)
    compared = 0
    for i, fragment in enumerate(fragments):
        tokens = batch.document(i)
        offsets = batch.offsets[batch.starts[i] : batch.starts[i + 1]]
        places = _added_line_places(fragment, offsets)
        for n in (CODE_NGRAM, SHORT_NGRAM):
            indexed = np.unique(ngram_hashes(tokens, n))[::2]  # some of them, as _specific
            mine = _kept_after_added_line(tokens, places, indexed, n)
            assert mine == kept_by_sides(tokens, places, indexed, n), (tasks[i].task_id, n)
            compared += 1
    assert compared == 2 * len(tasks)
    assert [t.task_id for t in index.tasks if t.short_needed] == [
        "HumanEval/27", "HumanEval/34", "HumanEval/38", "HumanEval/41", "HumanEval/45",
        "HumanEval/53", "HumanEval/60",
    ]  # fmt: skip


def test_the_bitmap_lets_every_indexed_ngram_through(index):
    for postings in (index.code, index.short, index.prose):
        place, _, gram = postings.lookup(postings.hashes)
        assert set(place.tolist()) == set(range(len(postings.hashes)))
        assert (gram == postings.hashes[place]).all()


def test_index_is_built_the_same_from_the_same_benchmark(index):
    from cloneprobe.benchmarks import load_benchmark

    again = build_index(load_benchmark("humaneval"))
    assert again.code.hashes.tolist() == index.code.hashes.tolist()
    assert [t.short_needed for t in again.tasks] == [t.short_needed for t in index.tasks]
