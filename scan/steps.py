"""Our datatrove pipeline steps: the scan itself, and a reader for folders of source files.

Each step knows nothing of where it runs (`run(data, rank, world_size)`); the executors in
`executors.py` decide that. Datatrove is imported here, so import this module only inside the
scan command (the CLI starts without it).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
import time

from datatrove.data import Document as TroveDocument
from datatrove.data import DocumentsPipeline
from datatrove.io import get_datafolder
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.readers.base import BaseDiskReader
from fsspec.implementations.local import LocalFileSystem

from ..benchmarks.registry import DEFAULT_BENCHMARK
from .errors import ScanError
from .idioms import RankCollector
from .index_cache import benchmark_index
from .results import write_rank_matches
from .scanner import Document, DocumentScanner
from .verify import MIN_BODY_TOKENS

BATCH_CHARACTERS = 1_000_000
"""Documents are scanned in batches of about this many characters (bounds memory per rank)."""
PROGRESS_SECONDS = 1.0


MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> None:
    """Have glibc's malloc serve the lexer's arrays (a few MB each, made and freed for every
    batch) from memory the process keeps, instead of mapping fresh pages for each one and
    returning them: measured, 144,000 page faults and 0.3-0.4 s of system time per 40 MB
    scanned fall to 7,000 and 0.02 s, at the same peak memory. Nothing elsewhere (another
    C library, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, TRIM_THRESHOLD)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        return


class ScanStep(PipelineStep):
    """Finds the benchmark's canonical solutions and prompts in the documents of one rank and
    writes the rank's matches (`matches/RANK.jsonl`) and tallies (`tallies/RANK.json`)."""

    name = "cloneprobe scan"
    type = "SCAN"

    def __init__(self, output: str, benchmark: str = DEFAULT_BENCHMARK,
                 group_field: str | None = None):  # fmt: skip
        super().__init__()
        self.output = output
        self.benchmark = benchmark
        self.group_field = group_field

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1):
        keep_freed_memory()
        folder = get_datafolder(self.output)
        scanner = DocumentScanner(benchmark_index(self.benchmark))
        short = frozenset(t.task_id for t in scanner.index.tasks if len(t.body) < MIN_BODY_TOKENS)
        collector = RankCollector(short)
        started, cpu_started = time.monotonic(), time.process_time()
        last_report = started
        batch: list[Document] = []
        size = 0
        for document in data or ():
            batch.append(self._document(document))
            size += len(document.text)
            if size >= BATCH_CHARACTERS:
                self._scan(scanner, batch, collector)
                batch, size = [], 0
                if time.monotonic() - last_report >= PROGRESS_SECONDS:
                    self._report(folder, rank, scanner, started, cpu_started, done=False)
                    last_report = time.monotonic()
        self._scan(scanner, batch, collector)
        write_rank_matches(folder, rank, collector.matches)
        with folder.open(f"tallies/{rank:05d}.json", "w") as handle:
            json.dump({task: t.to_dict() for task, t in sorted(collector.tallies.items())}, handle)
        self._report(folder, rank, scanner, started, cpu_started, done=True)
        return
        yield  # a generator that yields nothing: the scan is the pipeline's last step

    def _document(self, document: TroveDocument) -> Document:
        group = document.metadata.get(self.group_field) if self.group_field else None
        return Document(str(document.id), document.text, None if group is None else str(group))

    def _scan(self, scanner: DocumentScanner, batch: list[Document], collector: RankCollector):
        with self.track_time("batch"):
            for match in scanner.scan(batch):
                collector.add(match)
        self.stat_update("documents", value=len(batch))

    def _report(self, folder, rank, scanner, started, cpu_started, done: bool) -> None:
        counts = scanner.counts
        record = {"rank": rank, "documents": counts.documents, "characters": counts.characters,
                  "candidates": counts.candidates, "matches": counts.matches,
                  "seconds": time.monotonic() - started,
                  "cpu_seconds": time.process_time() - cpu_started,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "done": done}  # fmt: skip
        name = f"progress/{rank:05d}.json"
        with folder.open(name + ".tmp", "w") as handle:
            json.dump(record, handle)
        folder.mv(name + ".tmp", name)


class SourceFilesReader(BaseDiskReader):
    """Reads a folder of source files (by glob), one document per file: id = the path relative
    to the folder, metadata `repository` = its first folder (for repository-level grouping).

    A file is a document, so datatrove's per-file costs are per-document costs here: its log
    line per input file is left out, and a local folder is read with `open` (not through
    fsspec); a remote one still goes through the DataFolder."""

    name = "source files"

    def read_files_shard(self, shard: list[str]):
        """datatrove's loop (skip, limit, input-file stats) without its log line per file."""
        read = skipped = 0
        for filepath in shard:
            self.stat_update("input_files")
            for document in self.read_file(filepath):
                if skipped < self.skip:
                    skipped += 1
                    continue
                if self.limit != -1 and read >= self.limit:
                    return
                yield document
                read += 1
            if self.limit != -1 and read >= self.limit:
                return

    def read_file(self, filepath: str):
        try:
            raw = self._read_bytes(filepath)
        except OSError as error:
            raise ScanError(
                f"{self.data_folder.resolve_paths(filepath)}: cannot read ({error}); fix its "
                "permissions or leave it out with --glob"
            ) from error
        text = raw.decode("utf-8", errors="replace")
        if not text:
            return  # as datatrove skips a document without text
        parts = filepath.split("/")
        metadata = {"repository": parts[0] if len(parts) > 1 else ""}
        if self.add_file_path:
            metadata["file_path"] = self._full_path(filepath)
        yield TroveDocument(text=text, id=filepath, metadata=metadata)

    def _full_path(self, filepath: str) -> str:
        """datatrove's `file_path` metadata, without a trip through fsspec for a local one."""
        if isinstance(self.data_folder.fs, LocalFileSystem):
            return os.path.join(self.data_folder.path, filepath)
        return self.data_folder.resolve_paths(filepath)

    def _read_bytes(self, filepath: str) -> bytes:
        if isinstance(self.data_folder.fs, LocalFileSystem):
            return read_local_file(os.path.join(self.data_folder.path, filepath))
        with self.data_folder.open(filepath, "rb") as handle:
            return handle.read()


READ_CHUNK = 1 << 18


def read_local_file(path: str) -> bytes:
    """A local file's bytes by `os.read` on its descriptor, with no file object: 7-8 against
    12-14 microseconds per file of the library (`open(path, "rb").read()`), a file being a
    document here. OSError as `open` raises it."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        chunks = []
        while chunk := os.read(descriptor, READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
