"""Stable 64-bit hashes: of a token's bytes, of a token n-gram, of a constant.

Everything here is deterministic across processes, machines and Python versions (no salted
`hash()`): a token hashes as a polynomial over its bytes modulo 2**64, an n-gram as a
polynomial over its tokens' hashes, finished with the splitmix64 mixer so that the bits used
by the bitmap are well spread.
"""

from __future__ import annotations

import hashlib

import numpy as np

BYTE_BASE = np.uint64(0x100000001B3)
"""Multiplier of the per-token byte polynomial (FNV's 64-bit prime)."""
TOKEN_BASE = np.uint64(0x9E3779B97F4A7C15 | 1)
"""Multiplier of the n-gram polynomial over token hashes (odd, so every power is invertible)."""
MAX_TOKEN_BYTES = 64
"""Bytes of a token that enter its hash; longer tokens hash by their first 64 bytes."""

BYTE_POWERS = np.array(
    [pow(int(BYTE_BASE), k, 2**64) for k in range(MAX_TOKEN_BYTES)], dtype=np.uint64
)


def constant_hash(label: str) -> int:
    """A fixed 64-bit value for a named constant (an abstracted identifier, a literal)."""
    return int.from_bytes(hashlib.blake2b(label.encode(), digest_size=8).digest(), "little")


def token_hash(token: bytes) -> int:
    """The byte polynomial of one token, as the vectorized lexer computes it."""
    total = 0
    for k, byte in enumerate(token[:MAX_TOKEN_BYTES]):
        total = (total + byte * int(BYTE_POWERS[k])) % 2**64
    return total


def mix64(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, elementwise on uint64."""
    with np.errstate(over="ignore"):
        z = values ^ (values >> np.uint64(30))
        z = z * np.uint64(0xBF58476D1CE4E5B9)
        z = z ^ (z >> np.uint64(27))
        z = z * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def ngram_hashes(tokens: np.ndarray, n: int) -> np.ndarray:
    """Hash of every window of n consecutive token hashes (len(tokens) - n + 1 values)."""
    count = len(tokens) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        total = tokens[:count].copy()
        for k in range(1, n):
            total *= TOKEN_BASE
            total += tokens[k : k + count]
    return mix64(total)
