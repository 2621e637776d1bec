"""The scanning lexer: a whole batch of documents to abstract token hashes in a few numpy passes.

What a token is, for the scan (the same rule for the benchmark's canonicals and the corpus):
- comments and string statements (docstrings) are dropped; every other string literal is one
  token STR, its contents ignored (so a `#` or a quote inside a string is never code);
- a run of word bytes (letters, digits, `_`, any non-ASCII byte) is one token: a keyword or a
  builtin name keeps its identity, a number becomes NUM, any other name becomes ID;
- `.name` is one token that keeps its identity (attribute and method names survive renaming);
- every other non-blank byte is a token by itself; layout (spaces, newlines, indentation) is
  not a token, so re-wrapping, re-indenting or minifying code changes nothing.

Python 2 files, other languages, minified or binary junk all tokenize (into tokens that match
nothing); nothing here raises on odd input. The code path is per byte in numpy, not per token
in Python, which is what makes the scan fast (see perf/scan_throughput.py).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import keyword
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .hashing import BYTE_BASE, MAX_TOKEN_BYTES, constant_hash, ngram_hashes, token_hash

_STRING = (
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)
STRINGS_AND_COMMENTS = re.compile(r"(#[^\n]*|" + _STRING + ")", re.S)
"""Split pattern: even pieces are code, odd pieces a comment or a string literal. A string's
prefix letters (r, b, f, u) stay in the code as a name: the same on both sides of a match."""

STRING_MARK = "\x01"
STRING_MARK_PADDED = f" {STRING_MARK} "
KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(
    name for name in dir(builtins) if not name.startswith("_")
) | {"print", "exec", "self", "cls"}
"""Names that keep their identity; every other name is abstracted to ID."""

ID_HASH = np.uint64(constant_hash("ID"))
NUM_HASH = np.uint64(constant_hash("NUM"))
KEPT_HASHES = np.array(sorted({token_hash(name.encode()) for name in KEPT_NAMES}), dtype=np.uint64)

_WORD = np.zeros(256, dtype=bool)
for _byte in range(256):
    _WORD[_byte] = (chr(_byte).isalnum() and _byte < 128) or _byte == ord("_") or _byte >= 128
_ALPHA = np.zeros(256, dtype=bool)
for _byte in range(256):
    _ALPHA[_byte] = (chr(_byte).isalpha() and _byte < 128) or _byte == ord("_") or _byte >= 128
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32, 0]] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_PUNCT_HASHES = np.array([constant_hash(f"byte:{b}") for b in range(256)], dtype=np.uint64)
_PUNCT_HASHES[ord(STRING_MARK)] = constant_hash("STR")
_DOT = ord(".")
_KIND = np.where(_WORD, 1, np.where(_SPACE, 0, 2)).astype(np.int8)
_KIND[_DOT] = 3


@dataclass(frozen=True)
class CodeText:
    """A document's code as the scanning lexer sees it, and where its pieces came from."""

    code: str
    prose: list[str]
    """Text of the comments and string literals."""
    pieces: list[str] = field(repr=False)
    """The code pieces (even places) and what replaced each comment or literal (odd places)."""

    @cached_property
    def anchors(self) -> list[tuple[int, int]]:
        """(offset in code, offset in the original text) at the start of each code piece;
        worked out only for the few documents that hold a candidate."""
        pieces, prose = self.pieces, self.prose
        code_length = original = len(pieces[0])
        anchors = [(0, 0)]
        for i, literal in enumerate(prose):
            code_length += len(pieces[2 * i + 1])
            original += len(literal)
            anchors.append((code_length, original))
            following = len(pieces[2 * i + 2])
            code_length += following
            original += following
        return anchors

    def original_offset(self, code_offset: int) -> int:
        """Offset in the original text of a code offset (exact for ASCII text)."""
        anchors = self.anchors
        index = bisect_right(anchors, (code_offset, 1 << 62)) - 1
        code_start, original_start = anchors[max(index, 0)]
        return original_start + code_offset - code_start

    def safe_start(self, original_offset: int) -> int:
        """The last place at or before the offset where code starts (never inside a string
        or a comment), where tokenizing part of the text may begin."""
        originals = [original for _, original in self.anchors]
        return originals[max(bisect_right(originals, original_offset) - 1, 0)]


def split_code(text: str) -> CodeText:
    """The code with comments and string statements dropped and other string literals
    replaced by STRING_MARK, with the text of the comments and strings apart.

    A string is a statement (a docstring) when only blanks lie between it and the start of
    its line (or a `;`) and between it and the end of its line (or a `;` or a comment),
    looking at most 200 characters either way. One pass over the pieces, no call per piece:
    this runs on every document."""
    pieces = STRINGS_AND_COMMENTS.split(text)
    prose = pieces[1::2]
    for i in range(1, len(pieces), 2):
        piece = pieces[i]
        if piece[0] == "#":
            pieces[i] = " "
            continue
        after = pieces[i + 1]
        first = after[:1]  # "" (end of text, or another literal next) counts as a line end
        if first in "\r\n;":
            ends = True
        elif first in " \t":
            head = after[:200].lstrip(" \t")
            ends = not head or head[0] in "\r\n;#"
        else:
            ends = False
        if ends:
            before = pieces[i - 1]
            last = before[-1:]  # "" (start of text, or a literal before) is a line start
            if last in "\n;":
                pieces[i] = " "
                continue
            if last in " \t":
                tail = before[-200:].rstrip(" \t")
                if not tail or tail[-1] in "\n;":
                    pieces[i] = " "
                    continue
        pieces[i] = STRING_MARK_PADDED
    return CodeText("".join(pieces), prose, pieces)


@dataclass(frozen=True)
class TokenBatch:
    """Token hashes of several documents, concatenated; doc i owns tokens
    hashes[starts[i]:starts[i + 1]]."""

    hashes: np.ndarray
    starts: np.ndarray
    offsets: np.ndarray
    """Byte offset of each token in its own document's text."""

    def document(self, i: int) -> np.ndarray:
        return self.hashes[self.starts[i] : self.starts[i + 1]]

    def ngrams(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n-gram hashes, owning document, first token index) of the n-grams that lie
        inside one document."""
        grams = ngram_hashes(self.hashes, n)
        if len(grams) == 0:
            empty = np.empty(0, dtype=np.int64)
            return grams, empty, empty
        counts = np.diff(self.starts)
        owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        inside = owner[: len(grams)] == owner[n - 1 :]
        return grams[inside], owner[: len(grams)][inside], np.flatnonzero(inside)


def _encode(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """All texts as one byte array (separated by a newline) and each text's first byte."""
    encoded = [text.encode("utf-8", "replace") for text in texts]
    lengths = np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=len(encoded))
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    data = np.frombuffer(b"\n".join(encoded) + b"\n", dtype=np.uint8)
    return data, starts


_INVERSE_BASE = np.uint64(pow(int(BYTE_BASE), -1, 2**64))
HASH_CHUNK = 1 << 20
"""Bytes hashed at a time (memory: 16 bytes of power tables and 8 of prefix sums each)."""


@functools.lru_cache(maxsize=1)
def _power_tables() -> tuple[np.ndarray, np.ndarray]:
    """(BYTE_BASE**j, BYTE_BASE**-j) mod 2**64 for j up to a chunk and a token (the base is
    odd, so it has an inverse)."""
    n = HASH_CHUNK + MAX_TOKEN_BYTES + 1
    with np.errstate(over="ignore"):
        powers = np.full(n, BYTE_BASE, dtype=np.uint64)
        powers[0] = 1
        np.multiply.accumulate(powers, out=powers)
        inverse = np.full(n, _INVERSE_BASE, dtype=np.uint64)
        inverse[0] = 1
        np.multiply.accumulate(inverse, out=inverse)
    return powers, inverse


def _word_hashes(
    data: np.ndarray, starts_mask: np.ndarray, word_mask: np.ndarray, starts: np.ndarray
) -> np.ndarray:
    """Byte polynomial of each word token (first MAX_TOKEN_BYTES bytes), one per word start
    (`starts`: the places of `starts_mask`).

    A word runs from its start to the next start or the end of its run of word bytes. With
    prefix sums of byte * BASE**j over a chunk of the batch, a word's polynomial is
    (sum to its end - sum to its start) * BASE**-start: a few passes over the bytes, none
    per byte of a word (the same values as `hashing.token_hash`; test_scan_lexer checks)."""
    n = len(data)
    if len(starts) == 0:
        return np.empty(0, dtype=np.uint64)
    last = np.empty(n, dtype=bool)
    np.logical_or(~word_mask[1:], starts_mask[1:], out=last[:-1])
    last[-1] = True
    ends = np.flatnonzero(last & word_mask)
    ends += 1
    np.minimum(ends, starts + MAX_TOKEN_BYTES, out=ends)  # a token hashes by its first 64 bytes
    powers, inverse = _power_tables()
    hashes = np.empty(len(starts), dtype=np.uint64)
    bounds = np.searchsorted(starts, np.arange(0, n + HASH_CHUNK, HASH_CHUNK))
    with np.errstate(over="ignore"):
        for chunk, (first, stop) in enumerate(itertools.pairwise(bounds)):
            if first == stop:
                continue
            low = chunk * HASH_CHUNK  # words starting in [low, low + HASH_CHUNK)
            high = min(n, low + HASH_CHUNK + MAX_TOKEN_BYTES)
            prefix = np.empty(high - low + 1, dtype=np.uint64)
            prefix[0] = 0
            np.multiply(data[low:high], powers[: high - low], out=prefix[1:])
            np.cumsum(prefix[1:], out=prefix[1:])
            begin, end = starts[first:stop] - low, ends[first:stop] - low
            hashes[first:stop] = (prefix[end] - prefix[begin]) * inverse[begin]
    return hashes


def code_tokens(codes: Sequence[str]) -> TokenBatch:
    """Token hashes of each code text (already passed through `split_code`)."""
    data, doc_starts = _encode(codes)
    kind = _KIND[data]
    word = kind == 1
    attribute_dot = np.zeros(len(data), dtype=bool)
    attribute_dot[:-1] = (kind[:-1] == 3) & _ALPHA[data[1:]]
    wordish = word | attribute_dot
    word_start = wordish.copy()
    word_start[1:] &= ~wordish[:-1]
    word_start |= attribute_dot
    token_start = word_start | (kind >= 2) & ~attribute_dot
    positions = np.flatnonzero(token_start)

    words = np.flatnonzero(word_start)
    raw = _word_hashes(data, word_start, wordish, words)
    first = data[words]
    found = np.searchsorted(KEPT_HASHES, raw)
    kept = KEPT_HASHES[np.minimum(found, len(KEPT_HASHES) - 1)] == raw
    mapped = np.where(kept | (first == _DOT), raw, ID_HASH)
    mapped[_DIGIT[first]] = NUM_HASH
    hashes = _PUNCT_HASHES[data[positions]]
    hashes[np.searchsorted(positions, words)] = mapped  # a word start is a token start
    return _batch(hashes, positions, doc_starts)


def word_tokens(texts: Sequence[str]) -> TokenBatch:
    """Hashes of the lower-cased alphanumeric words of each text (for docstring prose)."""
    data, doc_starts = _encode([text.lower() for text in texts])
    word = _WORD[data] & (data < 128) & (data != ord("_"))
    previous = np.zeros(len(data), dtype=bool)
    previous[1:] = word[:-1]
    word_start = word & ~previous
    starts = np.flatnonzero(word_start)
    return _batch(_word_hashes(data, word_start, word, starts), starts, doc_starts)


def _batch(hashes: np.ndarray, positions: np.ndarray, doc_starts: np.ndarray) -> TokenBatch:
    token_starts = np.searchsorted(positions, doc_starts)
    owner = np.repeat(np.arange(len(doc_starts) - 1), np.diff(token_starts))
    return TokenBatch(hashes, token_starts, positions - doc_starts[owner])
