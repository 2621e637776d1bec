"""A whole scan: resolve the corpora, run the pipeline on an executor, merge the ranks.

Layout of the output folder (local path or fsspec URL, shared by every rank):
  scan.json            the settings the ranks were cut for (a resume must match them)
  paths/N.txt          the files of the N-th corpus, listed once for every rank
  datatrove/           datatrove's logs, stats and per-rank completion markers
  progress/RANK.json   documents, characters and CPU time so far, per rank
  matches/RANK.jsonl   a finished rank's matches;  tallies/RANK.json  its per-task counts
  summary.json         the merged result (what --json prints)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from ..benchmarks.registry import DEFAULT_BENCHMARK
from .errors import ScanError
from .executors import ExecutorSettings, build_executor, default_workers
from .pieces import plan_pieces, ranks_it_feeds, splits_files
from .readers import Corpus, CorpusSettings, resolve_and_list, write_paths_file
from .summary import merge_ranks

Progress = Callable[[dict], None]

_POLLING = threading.Lock()
"""Held by the progress thread while it reads the ranks' files, and taken around every fork
(the local executor forks its workers): a child never starts with a lock or a file handle that
the polling thread held half-way through."""


def _forked_worker_setup() -> None:
    """In a forked worker: release the polling lock, and give SIGTERM back its default (the
    CLI turns it into KeyboardInterrupt; a worker must die of it, as a forkserver worker does,
    when the pool terminates it, whichever of its threads the signal reaches)."""
    _POLLING.release()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(
    before=_POLLING.acquire, after_in_parent=_POLLING.release, after_in_child=_forked_worker_setup
)


@dataclass(frozen=True)
class ScanSettings:
    corpora: tuple[CorpusSettings, ...]
    output: str
    benchmark: str = DEFAULT_BENCHMARK
    group_field: str | None = None
    """Metadata field naming a document's repository (default: `repository` for folders of
    source files, none otherwise)."""
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    limit: int = -1
    """Documents per rank and corpus (-1: all); for trying a scan on a sample."""


def choose_tasks(
    corpora: list[Corpus], settings: ExecutorSettings, listings: list[list[str] | None]
) -> int:
    """Ranks: the explicit --ranks, else four per worker (for balance and fine-grained resume)
    but never more than the corpora can keep busy (a folder of source files: one document per
    file;
    JSONL and Parquet files are cut into pieces, compressed JSONL into no more pieces than
    there are workers, see pieces.py)."""
    if settings.tasks:
        return settings.tasks
    workers = settings.workers or default_workers()
    most = 4 * workers
    fed = sum(ranks_it_feeds(c.format, files, workers, most)
              for c, files in zip(corpora, listings, strict=True))  # fmt: skip
    return max(1, min(fed, most))


def run_scan(settings: ScanSettings, progress: Progress | None = None) -> dict:
    """Scan (or resume) and return the summary; a Slurm submission returns its status."""
    from datatrove.io import get_datafolder

    from .index_cache import benchmark_index
    from .readers import build_reader, file_sizes
    from .steps import ScanStep

    resolved = [resolve_and_list(c) for c in settings.corpora]
    corpora = [corpus for corpus, _ in resolved]
    listings = [files for _, files in resolved]
    tasks = choose_tasks(corpora, settings.executor, listings)
    output = get_datafolder(settings.output)
    # ranks chosen here cut a compressed file in no more pieces than workers; --ranks is obeyed
    cap = None if settings.executor.tasks else (settings.executor.workers or default_workers())
    plans = [
        plan_pieces(files, file_sizes(corpus, files), tasks, cap)
        if files and splits_files(corpus.format) and len(files) < tasks else None
        for corpus, files in resolved
    ]  # fmt: skip
    identity = _identity(settings, corpora, tasks, plans)
    _claim_output(output, identity)
    group_field = settings.group_field or (
        "repository" if all(c.format == "files" for c in corpora) else None
    )
    pipeline = []
    for number, ((corpus, files), pieces) in enumerate(zip(resolved, plans, strict=True)):
        name = f"paths/{number:03d}.txt"
        listed = pieces is None and write_paths_file(output, name, files)
        paths_file = _join(settings.output, name) if listed else None
        pipeline.append(build_reader(corpus, settings.limit, paths_file, pieces))
    pipeline.append(ScanStep(settings.output, settings.benchmark, group_field))
    benchmark_index(settings.benchmark)  # built here once; forked local workers inherit it
    executor = build_executor(pipeline, settings.executor, _join(settings.output, "datatrove"),
                              tasks)  # fmt: skip
    started = time.monotonic()
    pending = set(executor.get_incomplete_ranks())
    with _quiet_stderr(output), _watch(output, tasks, started, progress):
        try:
            executor.run()
        except ScanError:
            raise
        except Exception as error:
            raise _user_error(error, output) from error
    wall = time.monotonic() - started
    left = executor.get_incomplete_ranks()
    if left:
        if settings.executor.kind == "slurm":
            return {"status": "submitted", "ranks": tasks, "pending": len(left),
                    "output": settings.output,
                    "next": "run the same command again when the job has finished"}  # fmt: skip
        raise ScanError(
            f"{settings.output}: {len(left)} of {tasks} ranks did not finish (see "
            f"{_join(settings.output, 'datatrove/logs')}); run the same command again to resume"
        )
    summary = merge_ranks(output, settings.benchmark, identity, wall, pending)
    _write_json(output, "summary.json", summary)
    return summary


def _write_json(output, name: str, data: dict) -> None:
    """A JSON file in the output folder, written whole or not at all (a temporary name, then
    renamed: an interrupted scan never leaves half a summary)."""
    with output.open(name + ".tmp", "w") as handle:
        json.dump(data, handle, indent=1)
    output.mv(name + ".tmp", name)


def _join(base: str, name: str) -> str:
    return f"{base.rstrip('/')}/{name}"


def _identity(settings: ScanSettings, corpora: list[Corpus], tasks: int, plans: list) -> dict:
    identity = {"corpora": [asdict(c) for c in corpora], "benchmark": settings.benchmark,
                "group_field": settings.group_field, "limit": settings.limit,
                "ranks": tasks}  # fmt: skip
    if any(plans):  # files cut into pieces: a resume must cut them the same way
        identity["pieces"] = [[list(p) for p in plan] if plan else None for plan in plans]
    return identity


def _claim_output(output, identity: dict) -> None:
    """Record what the ranks are cut for; refuse to resume a different scan in the folder."""
    if output.isfile("scan.json"):
        with output.open("scan.json", "r") as handle:
            previous = json.load(handle)
        if previous != identity:
            raise ScanError(
                f"{output.path}: holds a different scan (other corpora, benchmark or ranks); "
                "use another --output, or delete it to start over"
            )
        return
    _write_json(output, "scan.json", identity)


def _user_error(error: Exception, output) -> ScanError:
    """A worker's failure as one line: a ScanError raised in a worker keeps its message."""
    message = str(error).strip().splitlines()
    text = message[-1] if message else type(error).__name__
    if type(error).__name__ == "ScanError" or text.startswith("/"):
        return ScanError(text)
    return ScanError(f"a scan worker failed: {type(error).__name__}: {text} (logs in "
                     f"{output.path}/datatrove/logs)")  # fmt: skip


@contextlib.contextmanager
def _quiet_stderr(output) -> Iterator[None]:
    """datatrove's workers log to file descriptor 2; send that to a log file while the
    executor runs (the workers inherit it), so the terminal shows our progress only."""
    if os.environ.get("CLONEPROBE_SCAN_VERBOSE"):
        yield
        return
    descriptor, name = tempfile.mkstemp(prefix="cloneprobe-scan-", suffix=".log")
    sys.stderr.flush()
    saved, saved_stream = os.dup(2), sys.stderr
    try:
        with open(name, "a", encoding="utf-8") as in_process:  # in-process ranks log here
            os.dup2(descriptor, 2)
            sys.stderr = in_process
            try:
                yield
            finally:
                sys.stderr = saved_stream
                os.dup2(saved, 2)
    finally:
        os.close(saved)
        os.close(descriptor)
        with contextlib.suppress(OSError), open(name, "rb") as log, \
                output.open("datatrove/console.log", "ab") as copy:  # fmt: skip
            copy.write(log.read())
        with contextlib.suppress(OSError):
            os.unlink(name)


def read_progress(output, tasks: int) -> dict:
    """Totals over the ranks' progress files."""
    totals = {"documents": 0, "characters": 0, "matches": 0, "cpu_seconds": 0.0,
              "ranks_done": 0, "ranks": tasks}  # fmt: skip
    for name in output.list_files("progress", glob_pattern="*.json"):
        try:
            with output.open(name, "r") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            continue
        for key in ("documents", "characters", "matches", "cpu_seconds"):
            totals[key] += record.get(key, 0)
        totals["ranks_done"] += bool(record.get("done"))
    return totals


@contextlib.contextmanager
def _watch(output, tasks: int, started: float, progress: Progress | None) -> Iterator[None]:
    """Report progress from the ranks' files every half second while the executor runs."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            with _POLLING:
                totals = read_progress(output, tasks)
                totals["seconds"] = time.monotonic() - started
                progress(totals)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        totals = read_progress(output, tasks)
        totals["seconds"] = time.monotonic() - started
        progress(totals)
