"""The benchmark's scan index kept in the content cache between runs.

Building the index (tokenizing and parsing every canonical, working out where a line can be
added to each) is about 0.2 s of the scan command's serial start-up, before any rank runs;
read back from the user's content cache (`cloneprobe.content_cache`: keyed by the
benchmark's whole content and a fingerprint of the code, JSON only) it is about 0.03 s. A
missing, unreadable or malformed entry is built again and written over; with the cache off
(`CLONEPROBE_NO_CACHE=1`) the index is built every time.
"""

from __future__ import annotations

import functools

import numpy as np

from ..benchmarks import Benchmark, load_benchmark
from ..content_cache import ContentCache, code_fingerprint, content_key
from .hashing import spread_slots
from .index import BenchmarkIndex, IndexedTask, Postings, build_index
from .tokens import Token

KIND = "scan-index"


@functools.lru_cache(maxsize=2)
def benchmark_index(spec: str) -> BenchmarkIndex:
    """The index of a benchmark by name or path, once per process: the scan makes it in the
    parent, and forked workers (and the merge) share that one copy. Read from the content
    cache when an earlier run left it there, else built and written there."""
    return cached_index(load_benchmark(spec))


def index_key(benchmark: Benchmark) -> str:
    """A hash of everything the index depends on: the code and every field of every task."""
    parts = [KIND, benchmark.name]
    for task in benchmark:
        parts += [task.task_id, task.prompt, task.canonical_solution, task.entry_point,
                  task.test, task.language]  # fmt: skip
    return content_key(code_fingerprint(), *parts)


def cached_index(benchmark: Benchmark, disk: ContentCache | None = None) -> BenchmarkIndex:
    """The benchmark's index from the content cache, or built (and written there)."""
    disk = ContentCache.from_environment() if disk is None else disk
    if not disk.enabled:
        return build_index(benchmark)
    return disk.get(KIND, index_key(benchmark), lambda: build_index(benchmark), encode_index,
                    decode_index)  # fmt: skip


def encode_index(index: BenchmarkIndex) -> dict:
    return {
        "name": index.name, "min_fraction": index.min_fraction,
        "tasks": [[t.task_id, [list(k) for k in t.fragment], [list(k) for k in t.body],
                   t.docstring, t.test, t.code_ngrams, t.code_tokens, t.prompt_ngrams,
                   t.short_needed] for t in index.tasks],
        "code": _encode_postings(index.code), "prose": _encode_postings(index.prose),
        "short": _encode_postings(index.short),
    }  # fmt: skip


def decode_index(value: dict) -> BenchmarkIndex:
    tasks = tuple(
        IndexedTask(task_id=str(task_id), fragment=_tokens(fragment), body=_tokens(body),
                    docstring=str(docstring), test=str(test), code_ngrams=int(code_ngrams),
                    code_tokens=int(code_tokens), prompt_ngrams=int(prompt_ngrams),
                    short_needed=int(short_needed))
        for task_id, fragment, body, docstring, test, code_ngrams, code_tokens, prompt_ngrams,
        short_needed in value["tasks"]
    )  # fmt: skip
    return BenchmarkIndex(str(value["name"]), tasks, _decode_postings(value["code"]),
                          _decode_postings(value["prose"]), _decode_postings(value["short"]),
                          float(value["min_fraction"]))  # fmt: skip


def _tokens(rows: list) -> tuple[Token, ...]:
    """Tokens from their rows (`Token._make`: a row of another length is a TypeError, which
    makes the entry a miss), without a conversion per field: a third of the read's time."""
    return tuple(map(Token._make, rows))


def _encode_postings(postings: Postings) -> dict:
    return {"hashes": postings.hashes.tolist(), "tasks": postings.tasks.tolist(),
            "n": postings.n, "bits": postings.bits}  # fmt: skip


def _decode_postings(value: dict) -> Postings:
    hashes = np.array(value["hashes"], dtype=np.uint64)
    tasks = np.array(value["tasks"], dtype=np.int32)
    if hashes.shape != tasks.shape or hashes.ndim != 1:
        raise ValueError("postings of unequal lengths")
    bits = int(value["bits"])
    bitmap = np.zeros(1 << bits, dtype=bool)
    bitmap[spread_slots(hashes, bits)] = True
    return Postings(hashes, tasks, bitmap, int(value["n"]), bits)
