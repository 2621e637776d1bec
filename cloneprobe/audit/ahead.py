"""Detection done ahead: while the sandbox runs the samples, a thread with connections of its
own to the store builds the evidence's view and judges every sample (the verdicts stored),
and the report's stream reads them back afterwards. The sandbox's runs leave the tool's
process waiting on their pipes most of the time, and the detection does not depend on them.

Only while a core is idle: otherwise the detection would only take CPU from the runs, and a
thread holding the interpreter's lock while the system has it wait delays every run's reply
(measured: `execute` 10% slower at a load average of 15 on 2 cores; docs/sandbox.md). Idle is
measured, not guessed from the load average (which still counts the command that ran the
minute before): the CPU time the system's idle task got on this process's CPUs over the last
moments (`IdleCores`), once the runs have started, and again between chunks; while no core is
idle the thread waits, and once the runs are over it goes on at full speed.
"""

from __future__ import annotations

import os
import threading
import time
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
    None when nothing was done ahead: with a read-only store, or when no core was idle before
    the runs ended (`ahead` forces the choice; None: as the measured idle time says). An error
    of either is raised here."""
    if store.read_only or ahead is False:
        run()
        return None
    done: dict[str, Any] = {}
    stopping, finished = threading.Event(), threading.Event()
    wait = (lambda: True) if ahead else IdleCores().waiter(finished)

    def detect() -> None:
        try:
            if not wait():  # the runs ended before a core was idle: the caller detects
                return
            # one connection reads the samples, another writes the verdicts: a connection
            # reading in WAL mode could not start writing once the executions have written
            with SampleStore(store.path) as reading, SampleStore(store.path) as writing:
                mine = replace(samples, store=reading)
                view = StreamedEvidence(canonicals, settings, mine)
                judge_ahead(writing, benchmark, settings, mine, canonicals,
                            lambda: stopping.is_set() or not wait())  # fmt: skip
                done["view"] = view
        except BaseException as error:  # raised again in the caller's thread
            done["error"] = error

    thread = threading.Thread(target=detect, name="detection ahead", daemon=True)
    thread.start()
    try:
        run()
    except BaseException:
        stopping.set()
        finished.set()
        thread.join()
        raise
    finished.set()
    thread.join()
    if "error" in done:
        raise done["error"]
    return done.get("view")


class IdleCores:
    """How many of this process's CPUs the system left idle since the last reading, from the
    idle and iowait times of /proc/stat's per-CPU lines; where there is no /proc/stat, the
    load average's guess (its CPUs less the load)."""

    WINDOW = 0.3
    """Seconds between readings: 30 clock ticks per CPU at the usual 100 Hz."""

    def __init__(self, path: str = "/proc/stat") -> None:
        self.path = path
        try:
            self.cpus = {f"cpu{n}" for n in os.sched_getaffinity(0)}
        except (AttributeError, OSError):
            self.cpus = set()
        self.last = self._times()
        self.read_at = time.monotonic()

    def _times(self) -> tuple[int, int] | None:
        """(idle, total) clock ticks summed over this process's CPUs, or None."""
        try:
            with open(self.path, encoding="ascii") as stat:
                lines = [line.split() for line in stat if line.startswith("cpu")]
        except OSError:
            return None
        idle = total = 0
        for fields in lines:
            if fields[0] in self.cpus:
                ticks = [int(v) for v in fields[1:9]]  # user .. steal (guest is in user)
                idle, total = idle + ticks[3] + ticks[4], total + sum(ticks)
        return (idle, total) if total else None

    def since_last(self, own: float = 0.0) -> float:
        """Idle cores (0 to the number of CPUs) since the last reading, counting `own` CPU
        seconds (the detection's, spent meanwhile) as idle; this reading is the next one's
        start."""
        now, read_at = self._times(), time.monotonic()
        last, elapsed = self.last, read_at - self.read_at
        self.last, self.read_at = now, read_at
        if now is None or last is None or now[1] <= last[1]:
            try:
                return max(0.0, (os.cpu_count() or 1) - os.getloadavg()[0])
            except OSError:  # no load average here either
                return 0.0
        spent = own / elapsed if elapsed > 0 else 0.0
        return len(self.cpus) * (now[0] - last[0]) / (now[1] - last[1]) + spent

    def waiter(self, finished: threading.Event) -> Callable[[], bool]:
        """A call that returns True once a core has been idle over the last WINDOW seconds
        (waiting while none is, a reading every WINDOW seconds), or False once `finished` is
        set (then without waiting); asked between chunks, it reads only when the last
        reading is WINDOW seconds old. The CPU time of the thread that calls it counts as
        idle: the detection does not wait for the core it takes itself."""
        state = {"idle": False, "cpu": time.thread_time()}

        def wait() -> bool:
            while not finished.is_set():
                if time.monotonic() - self.read_at >= self.WINDOW:
                    cpu = time.thread_time()
                    state["idle"] = self.since_last(cpu - state["cpu"]) >= 1.0
                    state["cpu"] = cpu
                elif not state["idle"] and finished.wait(self.WINDOW):
                    break
                if state["idle"]:
                    return True
            return False

        return wait
