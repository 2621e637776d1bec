"""Detection done ahead: while the sandbox runs the samples, a thread with connections of its
own to the store builds the evidence's view and judges every sample (the verdicts stored),
and the report's stream reads them back afterwards. The sandbox's runs leave the tool's
process waiting on their pipes most of the time, and the detection does not depend on them.

Only where a core is idle: otherwise the detection would only take CPU from the runs, and a
thread holding the interpreter's lock while the system has it wait delays every run's reply
(measured: `execute` 10% slower at a load average of 15 on 2 cores; docs/sandbox.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cloneprobe.audit.detection import CanonicalFragments, DetectionSettings
from cloneprobe.audit.stream import judge_ahead
from cloneprobe.benchmarks import Benchmark
from cloneprobe.evidence.stream import StreamedEvidence
from cloneprobe.generation import SampleStore
from cloneprobe.generation.selection import SampleSelection


def detect_while(
    run: Callable[[], None],
    store: SampleStore,
    benchmark: Benchmark,
    settings: DetectionSettings,
    samples: SampleSelection,
    canonicals: CanonicalFragments,
    ahead: bool | None = None,
) -> StreamedEvidence | None:
    """Call `run` (the executions), detecting ahead meanwhile; the evidence's view built, or
    None when nothing was done ahead: with a read-only store, or without an idle core (`ahead`
    forces the choice; None: as the load says). An error of either is raised here."""
    if store.read_only or not (idle_core() if ahead is None else ahead):
        run()
        return None
    done: dict[str, Any] = {}
    stopping = threading.Event()

    def detect() -> None:
        try:  # one connection reads the samples, another writes the verdicts: a connection
            # reading in WAL mode could not start writing once the executions have written
            with SampleStore(store.path) as reading, SampleStore(store.path) as writing:
                mine = replace(samples, store=reading)
                done["view"] = StreamedEvidence(canonicals, settings, mine)
                judge_ahead(writing, benchmark, settings, mine, canonicals, stopping.is_set)
        except BaseException as error:  # raised again in the caller's thread
            done["error"] = error

    thread = threading.Thread(target=detect, name="detection ahead", daemon=True)
    thread.start()
    try:
        run()
    except BaseException:
        stopping.set()
        thread.join()
        raise
    thread.join()
    if "error" in done:
        raise done["error"]
    return done["view"]


def idle_core() -> bool:
    """Whether the machine has a core to spare (a load average below its number of CPUs)."""
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1)
    except OSError:  # no load average here
        return False
