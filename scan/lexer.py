"""The scanning lexer: a whole batch of documents to abstract token hashes in a few numpy passes.

What a token is, for the scan (the same rule for the benchmark's canonicals and the corpus):
- comments and string statements (docstrings) are dropped; every other string literal is one
  token STR, its contents ignored (so a `#` or a quote inside a string is never code);
- a run of word bytes (letters, digits, `_`, any non-ASCII byte) is one token: a keyword or a
  builtin name keeps its identity, a number becomes NUM, any other name becomes ID;
- `.name` is one token that keeps its identity (attribute and method names survive renaming);
- every other non-blank byte is a token by itself; layout (spaces, newlines, indentation) is
  not a token, so re-wrapping, re-indenting or minifying code changes nothing.
The text of the comments and string literals (docstrings included) is the document's prose:
its lower-cased ASCII words are what a prompt's docstring is looked for in.

Python 2 files, other languages, minified or binary junk all tokenize (into tokens that match
nothing); nothing here raises on odd input. The batch is one byte string: the regular
expression that finds comments and literals runs once per document, and everything after it
is per byte in numpy (the literals become blanks in place, so a token's offset is its offset
in the document's UTF-8 bytes), never a Python step per token or per literal. Table lookups
are `bytes.translate`, several times faster than numpy's indexing (see perf/scan_throughput.py).
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .hashing import chunk_hashes, constant_hash, ngram_hashes_of_sizes, token_hash

_STRING = (
    rb'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
)
STRINGS_AND_COMMENTS = re.compile(rb"(#[^\n]*|" + _STRING + rb")", re.S)
"""Split pattern: even pieces are code, odd pieces a comment or a string literal. A string's
prefix letters (r, b, f, u) stay in the code as a name: the same on both sides of a match."""

STATEMENT_LOOK = 200
"""Bytes looked at on each side of a string for what makes it a statement (a docstring)."""
KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(
    name for name in dir(builtins) if not name.startswith("_")
) | {"print", "exec", "self", "cls"}
"""Names that keep their identity; every other name is abstracted to ID."""

ID_HASH = np.uint64(constant_hash("ID"))
NUM_HASH = np.uint64(constant_hash("NUM"))
KEPT_HASHES = np.array(sorted({token_hash(name.encode()) for name in KEPT_NAMES}), dtype=np.uint64)


def _table(test) -> bytes:
    return bytes(int(test(b)) for b in range(256))


def _is_word(b: int) -> bool:
    return (chr(b).isalnum() and b < 128) or b == ord("_") or b >= 128


def _is_alpha(b: int) -> bool:
    return (chr(b).isalpha() and b < 128) or b == ord("_") or b >= 128


def _kept_table(hashes: np.ndarray, bits: int = 14) -> tuple[np.uint64, np.ndarray]:
    """A multiplier that sends each of the hashes to its own slot of 2**bits ((h * m) >>
    (64 - bits)), and the table of the hashes in their slots: a membership test in two steps
    per token. Empty slots hold the first hash, whose own slot is another: no token that
    lands in them can equal it."""
    shift = np.uint64(64 - bits)
    with np.errstate(over="ignore"):
        for trial in range(1 << 16):
            multiplier = np.uint64((0x9E3779B97F4A7C15 + 2 * trial) % 2**64)
            slots = (hashes * multiplier) >> shift
            if len(np.unique(slots)) == len(hashes):
                table = np.full(1 << bits, hashes[0], dtype=np.uint64)
                table[slots] = hashes
                return multiplier, table
    raise AssertionError("no collision-free multiplier for the kept names")


_TELLING = _table(lambda b: b in b"\"'#\\\n")
_COLLAPSE = bytes(b if _TELLING[b] else ord("a") for b in range(256))
_DOT = ord(".")
_ALPHA_KIND, _DIGIT_KIND, _PUNCT_KIND, _DOT_KIND = 1, 3, 4, 12
_KIND = bytes(_ALPHA_KIND if _is_alpha(b) else _DIGIT_KIND if _is_word(b)
              else 0 if b in (9, 10, 11, 12, 13, 32, 0) else _DOT_KIND if b == _DOT
              else _PUNCT_KIND for b in range(256))  # fmt: skip
"""Per byte: 0 blank; bit 1 a word byte (1 a letter, `_` or non-ASCII, 3 a digit); bit 4 a
one-byte token (12 a dot, which may start `.name`)."""
_TELLING_BIT = 16
_CLASSES = bytes(_KIND[b] | (_TELLING_BIT if _TELLING[b] else 0) for b in range(256))
"""Per byte: its _KIND, and _TELLING_BIT for a byte the literal pattern tells apart (one
translation of the batch serves both)."""
_PROSE = bytes(b + 32 if ord("A") <= b <= ord("Z") else b if chr(b).isalnum() and b < 128 else 0
               for b in range(256))  # fmt: skip
"""Prose bytes: ASCII letters lower-cased, digits kept, everything else 0 (not a word)."""
_KEPT_MULTIPLIER, _KEPT_TABLE = _kept_table(KEPT_HASHES)
_KEPT_SHIFT = np.uint64(64 - 14)
_PUNCT_HASHES = np.array([constant_hash(f"byte:{b}") for b in range(256)], dtype=np.uint64)
_STR_HASH = np.uint64(constant_hash("STR"))
_BLANK = frozenset(b" \t")
_LINE_START = np.frombuffer(_table(lambda b: b in b"\n;"), dtype=bool)
_LINE_END = np.frombuffer(_table(lambda b: b in b"\r\n;#"), dtype=bool)
_IS_BLANK = np.frombuffer(_table(lambda b: b in _BLANK), dtype=bool)


@dataclass(frozen=True)
class TokenBatch:
    """Token hashes of several documents, concatenated; doc i owns tokens
    hashes[starts[i]:starts[i + 1]]."""

    hashes: np.ndarray
    starts: np.ndarray
    offsets: np.ndarray
    """Byte offset of each token in its own document's UTF-8 text."""

    def document(self, i: int) -> np.ndarray:
        return self.hashes[self.starts[i] : self.starts[i + 1]]

    def ngrams(self, *sizes: int) -> dict[int, np.ndarray]:
        """Per size n, the hash of every n tokens in a row (the i-th starts at token i), those
        that run from one document into the next included: telling them apart costs a step
        per token, so it is left to the few n-grams that `owners` is asked about."""
        return ngram_hashes_of_sizes(self.hashes, sizes)

    def owners(self, places: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(document of each n-gram starting at the places, whether it ends in it too)."""
        owner = np.searchsorted(self.starts, places, side="right") - 1
        return owner, places + n <= self.starts[owner + 1]


@dataclass(frozen=True)
class LexedBatch:
    """A batch of documents as the scan sees it: code tokens, prose words, and where the
    comments and literals lie (to start a verifying lexer outside of one)."""

    data: bytes
    """The documents' UTF-8 bytes, each followed by a newline."""
    doc_starts: np.ndarray
    """Byte offset of each document in `data` (and the total length at the end)."""
    code: TokenBatch
    prose: TokenBatch
    literal_starts: np.ndarray
    """Offsets in `data` of the comments and literals, sorted, and of their ends."""
    literal_ends: np.ndarray

    def code_start(self, doc: int, offset: int) -> int:
        """The last byte offset at or before `offset` in document `doc` that is not inside a
        comment or a string literal (where a verifying lexer may start)."""
        at = int(self.doc_starts[doc]) + offset
        i = int(np.searchsorted(self.literal_starts, at, side="right")) - 1
        if i >= 0 and at < self.literal_ends[i]:
            return int(self.literal_starts[i] - self.doc_starts[doc])
        return offset

    def character_offset(self, doc: int, text: str, offset: int) -> int:
        """The character offset in the document's text of a byte offset (at a character's
        first byte, as every token start is)."""
        if len(text) == self.doc_starts[doc + 1] - self.doc_starts[doc] - 1:  # ASCII
            return offset
        start = int(self.doc_starts[doc])
        return len(self.data[start : start + offset].decode("utf-8", "replace"))


def lex(texts: Sequence[str]) -> LexedBatch:
    """Code tokens and prose words of each text."""
    encoded = [text.encode("utf-8", "replace") for text in texts]
    data = b"\n".join([*encoded, b""]) if encoded else b"\n"  # each text and a newline
    doc_starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) + 1 for e in encoded], out=doc_starts[1:])
    classes = np.frombuffer(data.translate(_CLASSES), dtype=np.uint8)
    piece_starts, literal = _pieces(data, classes >= _TELLING_BIT, doc_starts)
    inside = np.repeat(literal, np.diff(piece_starts))  # per byte: inside a comment or a literal
    where = np.flatnonzero(literal)
    starts, ends = piece_starts[where], piece_starts[where + 1]
    raw = np.frombuffer(data, dtype=np.uint8)
    strings = raw[starts] != ord("#")
    marks = starts[strings][~_statements(raw, where[strings], piece_starts)]
    return LexedBatch(data, doc_starts, _code_batch(data, classes, inside, marks, doc_starts),
                      _literal_words(raw, inside, starts, ends, doc_starts), starts,
                      ends)  # fmt: skip


def _pieces(data: bytes, telling: np.ndarray,
            doc_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Where every piece of every document starts in the data (code and literal alternating;
    the newline after a document in its last piece; the data's length at the end), and which
    pieces are literals.

    The split pattern runs on the data with every run of bytes it cannot tell apart (all but
    quotes, `#`, backslashes and newlines; `telling` marks the others) collapsed into one
    byte: the same pieces, since it only ever skips over such runs, from about a tenth of the
    bytes."""
    kept = np.empty(len(data), dtype=bool)
    kept[0] = True
    np.logical_or(telling[1:], telling[:-1], out=kept[1:])  # a telling byte, or a run's first
    places = np.flatnonzero(kept)
    collapsed = np.frombuffer(data, dtype=np.uint8)[places].tobytes().translate(_COLLAPSE)
    bounds = np.searchsorted(places, doc_starts).tolist()
    split = STRINGS_AND_COMMENTS.split
    per_doc = [split(collapsed[a:b]) for a, b in itertools.pairwise(bounds)]
    counts = np.fromiter(map(len, per_doc), dtype=np.int64, count=len(per_doc))
    total = int(counts.sum())
    ends = np.fromiter(map(len, itertools.chain.from_iterable(per_doc)), dtype=np.int64,
                       count=total)  # fmt: skip
    np.cumsum(ends, out=ends)
    piece_starts = np.empty(total + 1, dtype=np.int64)
    piece_starts[0] = 0
    piece_starts[1:] = np.append(places, len(data))[ends]
    first = np.repeat(np.cumsum(counts) - counts, counts)
    literal = ((np.arange(total) - first) & 1).astype(bool)
    return piece_starts, literal


def _statements(raw: np.ndarray, pieces: np.ndarray, piece_starts: np.ndarray) -> np.ndarray:
    """Which of the string literals (piece numbers) are statements: only blanks between it and
    the start of its line (or a `;`, or another literal) and between it and the end of its
    line (or a `;`, a comment, or another literal), looking at most STATEMENT_LOOK bytes."""
    start, stop = piece_starts[pieces], piece_starts[pieces + 1]
    after = _skip_blanks(raw, stop, np.minimum(piece_starts[pieces + 2], stop + STATEMENT_LOOK),
                         1)  # fmt: skip
    ends = after < 0
    ends[~ends] = _LINE_END[raw[after[~ends]]]
    before = _skip_blanks(raw, start - 1, np.maximum(piece_starts[pieces - 1],
                                                     start - STATEMENT_LOOK) - 1, -1)  # fmt: skip
    begins = before < 0
    begins[~begins] = _LINE_START[raw[before[~begins]]]
    return ends & begins


def _skip_blanks(raw: np.ndarray, at: np.ndarray, limit: np.ndarray, step: int) -> np.ndarray:
    """From each place, the first non-blank byte's place going by `step` before `limit`
    (exclusive), or -1 when only blanks lie before the limit."""
    at = at.copy()
    left = np.flatnonzero(at != limit)
    done = np.full(len(at), False)
    done[at == limit] = True
    while len(left):
        blank = _IS_BLANK[raw[at[left]]]
        left = left[blank]
        at[left] += step
        finished = at[left] == limit[left]
        done[left[finished]] = True
        left = left[~finished]
    at[done] = -1
    return at


def _code_batch(data: bytes, classes: np.ndarray, inside: np.ndarray, marks: np.ndarray,
                doc_starts: np.ndarray) -> TokenBatch:  # fmt: skip
    """Token hashes of the code: the bytes outside comments and literals, and a STR token
    at each of `marks` (the first byte of a string literal that is not a statement)."""
    kind = np.bitwise_and(classes, _TELLING_BIT - 1)  # the _KIND of each byte
    kind *= ~inside
    kind[marks] = _PUNCT_KIND
    runs = _runs(np.bitwise_and(kind, 1))  # the runs of word bytes: (starts, ends)
    # a token starts at every one-byte token (a dot of `.name` included, which starts that
    # token) and at every run of word bytes that does not follow the dot of a `.name`
    token_start = kind >= _PUNCT_KIND
    before = kind[np.maximum(runs[0] - 1, 0)]
    after_dot = (before == _DOT_KIND) & (kind[runs[0]] == _ALPHA_KIND) & (runs[0] > 0)
    token_start[runs[0][~after_dot]] = True
    positions = np.flatnonzero(token_start)
    # the word tokens, one per run in order: the run's first byte, or the dot before it
    words = runs[0] - after_dot
    is_word = np.zeros(len(data), dtype=bool)
    is_word[words] = True
    is_word = is_word[positions]
    raw = chunk_hashes(data, words, runs[1] - words)
    first = kind[words]
    with np.errstate(over="ignore"):
        kept = _KEPT_TABLE[(raw * _KEPT_MULTIPLIER) >> _KEPT_SHIFT] == raw
    mapped = np.where(kept | (first == _DOT_KIND), raw, ID_HASH)
    mapped[first == _DIGIT_KIND] = NUM_HASH
    hashes = _PUNCT_HASHES[np.frombuffer(data, dtype=np.uint8)[positions]]
    hashes[np.flatnonzero(is_word)] = mapped  # by places: a third of a masked assignment's time
    hashes[np.searchsorted(positions, marks)] = _STR_HASH
    return _batch(hashes, positions, doc_starts)


def _literal_words(raw: np.ndarray, inside: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   doc_starts: np.ndarray) -> TokenBatch:  # fmt: skip
    """The words of the comments and literals (the prose), hashed from their bytes alone,
    gathered end to end (about a third of a batch): no word runs from one literal into the
    next, since each begins with a quote or `#`, which are not word bytes. Offsets are the
    words' offsets in their documents, as if the whole batch had been read."""
    prose = np.frombuffer(raw[inside].tobytes().translate(_PROSE), dtype=np.uint8)
    hashes, compact = _word_hashes(prose)
    before = np.zeros(len(starts) + 1, dtype=np.int64)  # literal bytes before each literal
    np.cumsum(ends - starts, out=before[1:])
    shift = np.repeat(starts - before[:-1], ends - starts)  # per gathered byte, to its offset
    return _batch(hashes, compact + shift[compact], doc_starts)


def _word_hashes(prose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hashes and offsets of the words of prose bytes (word bytes non-zero, see _PROSE)."""
    starts, ends = _runs((prose != 0).view(np.uint8))
    return chunk_hashes(prose, starts, ends - starts), starts


def _runs(marks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of non-zero bytes (0 or 1 each) starts and ends (exclusive), in order:
    the places where a byte differs from the one before are the starts and the ends,
    alternating (one pass finds both; comparing bytes, not numpy bools, is twice as fast)."""
    changes = np.flatnonzero(marks[1:] != marks[:-1]) + 1
    if len(marks) and marks[0]:
        changes = np.concatenate(([0], changes))
    if len(marks) and marks[-1]:
        changes = np.append(changes, len(marks))
    return changes[0::2], changes[1::2]


def _word_batch(prose: np.ndarray, doc_starts: np.ndarray) -> TokenBatch:
    """Hashes of the words of prose bytes (word bytes non-zero, see _PROSE)."""
    return _batch(*_word_hashes(prose), doc_starts)


def word_tokens(texts: Sequence[str]) -> TokenBatch:
    """Hashes of the lower-cased alphanumeric words of each text (a prompt's docstring)."""
    encoded = [text.encode("utf-8", "replace") for text in texts]
    doc_starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) + 1 for e in encoded], out=doc_starts[1:])
    prose = (b"\n".join(encoded) + b"\n").translate(_PROSE)
    return _word_batch(np.frombuffer(prose, dtype=np.uint8), doc_starts)


def code_tokens(texts: Sequence[str]) -> TokenBatch:
    """Code token hashes of each text (comments and docstrings dropped)."""
    return lex(texts).code


def _batch(hashes: np.ndarray, positions: np.ndarray, doc_starts: np.ndarray) -> TokenBatch:
    token_starts = np.searchsorted(positions, doc_starts)
    owner = np.repeat(np.arange(len(doc_starts) - 1), np.diff(token_starts))
    return TokenBatch(hashes, token_starts, positions - doc_starts[owner])
