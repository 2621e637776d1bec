"""Stable 64-bit hashes: of a token's bytes, of a token n-gram, of a constant.

Everything here is deterministic across processes, machines and Python versions (no salted
`hash()`): a token hashes as a polynomial over its 8-byte little-endian chunks modulo 2**64
(a token of up to 8 bytes is its own bytes), an n-gram as a polynomial over its tokens' hashes.
The index's bitmap takes the top bits of an n-gram's hash times SPREAD (an odd multiplier:
Fibonacci hashing), which spreads them; a hash is otherwise only compared for equality.
"""

from __future__ import annotations

import hashlib

import numpy as np

CHUNK_BASE = np.uint64(0x100000001B3)
"""Multiplier of the per-token polynomial over 8-byte chunks (FNV's 64-bit prime)."""
TOKEN_BASE = np.uint64(0x9E3779B97F4A7C15 | 1)
"""Multiplier of the n-gram polynomial over token hashes (odd, so every power is invertible)."""
MAX_TOKEN_BYTES = 64
"""Bytes of a token that enter its hash; longer tokens hash by their first 64 bytes."""

_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)


def constant_hash(label: str) -> int:
    """A fixed 64-bit value for a named constant (an abstracted identifier, a literal)."""
    return int.from_bytes(hashlib.blake2b(label.encode(), digest_size=8).digest(), "little")


def token_hash(token: bytes) -> int:
    """The chunk polynomial of one token, as `chunk_hashes` computes it for a whole batch."""
    token = token[:MAX_TOKEN_BYTES]
    total = 0
    for k in range(0, len(token), 8):
        total = (total * int(CHUNK_BASE) + int.from_bytes(token[k : k + 8], "little")) % 2**64
    return total


def _unaligned_words(data) -> np.ndarray:
    """view[i] = the 8 bytes data[i:i + 8] as a little-endian uint64 (zeros past the end);
    data: bytes, or a numpy array of one-byte items."""
    padded = np.zeros(len(data) + MAX_TOKEN_BYTES + 8, dtype=np.uint8)
    padded[: len(data)] = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    return np.ndarray((len(data) + MAX_TOKEN_BYTES,), dtype="<u8", buffer=padded, strides=(1,))


def chunk_hashes(data, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """`token_hash` of every token that starts at `starts` in the data and is `lengths` bytes
    long: a few vector steps per token, none per byte."""
    if len(starts) == 0:
        return np.empty(0, dtype=np.uint64)
    values = _unaligned_words(data)
    lengths = np.minimum(lengths, MAX_TOKEN_BYTES)
    hashes = values[starts] & _MASKS[np.minimum(lengths, 8)]
    longer = np.flatnonzero(lengths > 8)
    done = 8
    with np.errstate(over="ignore"):
        while len(longer):
            rest = lengths[longer] - done
            chunk = values[starts[longer] + done] & _MASKS[np.minimum(rest, 8)]
            hashes[longer] = hashes[longer] * CHUNK_BASE + chunk
            longer = longer[rest > 8]
            done += 8
    return hashes


SPREAD = np.uint64(0x9E3779B97F4A7C15)
"""Multiplier that spreads an n-gram hash's bits into its top bits, for a bitmap's slot."""


def spread_slots(hashes: np.ndarray, bits: int) -> np.ndarray:
    """Each hash's slot in a table of 2**bits (its top bits after multiplying by SPREAD)."""
    with np.errstate(over="ignore"):
        return (hashes * SPREAD) >> np.uint64(64 - bits)


def ngram_hashes(tokens: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of n consecutive token hashes (len(tokens) - n + 1 values)."""
    return _polynomials(tokens, n)


def ngram_hashes_of_sizes(tokens: np.ndarray, sizes: tuple[int, ...]) -> dict[int, np.ndarray]:
    """`ngram_hashes(tokens, n)` for each of the sizes, sharing the work: the polynomial of a
    window of 2k tokens is made from its halves' (P2k(i) = Pk(i) * TOKEN_BASE**k + Pk(i + k)),
    so the 10-gram and 5-gram hashes of a batch cost what its 10-gram hashes alone did."""
    polynomials: dict[int, np.ndarray] = {}
    for n in sorted(set(sizes)):
        half = polynomials.get(n // 2) if n % 2 == 0 else None
        if half is None:
            polynomials[n] = _polynomials(tokens, n)
            continue
        count, k = max(0, len(tokens) - n + 1), n // 2
        with np.errstate(over="ignore"):
            joined = half[:count] * np.uint64(pow(int(TOKEN_BASE), k, 2**64))
            joined += half[k : k + count]
        polynomials[n] = joined
    return {n: polynomials[n] for n in sizes}


def _polynomials(tokens: np.ndarray, n: int) -> np.ndarray:
    """The polynomial (base TOKEN_BASE, modulo 2**64) of every window of n token hashes."""
    count = len(tokens) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        total = tokens[:count].copy()
        for k in range(1, n):
            total *= TOKEN_BASE
            total += tokens[k : k + count]
    return total
