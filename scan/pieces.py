"""Cutting a corpus of few large files across all ranks: each rank reads one piece of one file.

datatrove shares a corpus out by file (rank r reads files r, r + world_size, ...), so a corpus
of one JSONL or Parquet file is one rank and one core. When a corpus has fewer files than
there are ranks, the ranks are given to its files in proportion to their sizes, and each rank
reads the k-th of the K pieces of its file:
- uncompressed JSONL: the lines that start in bytes [size * k / K, size * (k + 1) / K);
- Parquet: rows [rows * k / K, rows * (k + 1) / K), reading only the row groups they lie in;
- compressed JSONL (no seeking into it): the lines whose number is k modulo K (each of the
  K ranks decompresses the whole file, so such a file is cut in at most as many pieces as
  there are workers; see `ranks_it_feeds`).
Every record lies in exactly one piece, whatever K (tests/test_scan_pieces.py).
"""

from __future__ import annotations

Piece = tuple[str, int, int]
"""(file, k, K): the k-th of K pieces of a file."""

COMPRESSED = (".gz", ".zst", ".bz2", ".xz", ".lz4")


def is_compressed(path: str) -> bool:
    return path.endswith(COMPRESSED)


def splits_files(fmt: str) -> bool:
    """Whether a corpus of this format can be cut inside its files."""
    return fmt in ("jsonl", "parquet")


def ranks_it_feeds(fmt: str, files: list[str] | None, workers: int, most: int) -> int:
    """How many ranks a corpus can keep busy (at most `most`): one per file, or all for a
    splittable file, but no more than the workers for compressed JSONL alone."""
    if files is None:  # a saved dataset: datatrove cuts it by row
        return most
    if not splits_files(fmt):
        return min(len(files), most)
    if fmt == "jsonl" and all(is_compressed(f) for f in files):
        return min(max(len(files), workers), most)
    return most


def plan_pieces(
    files: list[str], sizes: list[int], ranks: int, workers: int | None = None
) -> list[Piece | None] | None:
    """The piece each rank reads (rank r: the r-th; None: a rank with nothing to read), or None
    when there are at least as many files as ranks (datatrove then shares out whole files). A
    compressed file is cut in at most `workers` pieces (each piece decompresses all of it); the
    ranks it cannot use go to the uncompressed files, or read nothing."""
    if len(files) >= ranks or not files:
        return None
    total = sum(sizes) or 1
    shares = [max(1, size * ranks // total) for size in sizes]
    # largest remainders get the ranks left over; a file never has fewer than one
    order = sorted(range(len(files)), key=lambda i: (-(sizes[i] * ranks % total), i))
    left, turn = ranks - sum(shares), 0
    while left > 0:
        shares[order[turn % len(order)]] += 1
        left -= 1
        turn += 1
    while left < 0:  # more files at their floor of one than the sizes allow for
        i = max(range(len(files)), key=lambda i: (shares[i], -i))
        shares[i] -= 1
        left += 1
    if workers is not None:
        spare = 0
        for i, name in enumerate(files):
            if is_compressed(name) and shares[i] > workers:
                spare += shares[i] - workers
                shares[i] = workers
        plain = [i for i in order if not is_compressed(files[i])]
        for turn in range(spare if plain else 0):
            shares[plain[turn % len(plain)]] += 1
        spare = spare if not plain else 0
    else:
        spare = 0
    pieces: list[Piece | None] = [
        (name, part, parts) for name, parts in zip(files, shares, strict=True)
        for part in range(parts)
    ]  # fmt: skip
    return pieces + [None] * spare
