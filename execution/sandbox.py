"""Running untrusted programs, and judging them against tests, in confined child processes.

Generated code never runs inside the tool's process. One fork server per tool process, shared
by every `Sandbox` (`runs.shared_fork_server`), is `guard.py` started by path (a fresh
interpreter with a clean environment, `PYTHONHASHSEED=0`, that never reads a job). For each run
it forks a child in a session of its own, with rlimits and, where the machine allows, a control
group of its own (`cgroups.py`: memory and processes of the whole sample); the child confines
itself, forks the sample's process and only then reads the job. While one run goes on, the next
run's child is already started and waits for its job.

Isolation "namespaces" (the default wherever the kernel allows it; probed once): new user,
mount, network, PID and IPC namespaces; a fresh tmpfs root holding read-only binds of the
standard library and the shared libraries it loads (no site-packages, nothing of the tool, no
/home, /root, /sys, /run), a /dev of null, zero, random and urandom, a size-limited tmpfs at
/tmp as the only writable place, a /proc of the namespace; a new session keyring; no
capability; a seccomp filter (`seccomp.py`). Isolation "guard": the fallback where namespaces
are unavailable; said once in the log; the sample's interpreter is patched
(`python_guard.py`), which a hostile sample can undo. Without a control group, the isolation
is recorded with "+rlimits" (limits per process only).

stdout and stderr come back through pipes this side reads and caps (`Limits.file_bytes`
together; only their tails are kept). The verdict comes from the harness, a process that holds
the test while the sample's process holds only the program and, call by call, the arguments
(`guard.py`, `wire.py`). Whatever the sample does, it cannot turn into "passed".
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from .cgroups import find_limiter
from .elf_needs import library_folders
from .runs import (
    OUTPUT_TAIL,
    Leftovers,
    PreparedRun,
    close_spares,
    exchange,
    shared_fork_server,
)
from .wire import frame

log = logging.getLogger(__name__)

ISOLATIONS = ("namespaces", "guard")
RLIMITS_SUFFIX = "+rlimits"
SANDBOX_UID = 65534
"""The user (`nobody`) the sample runs as when the tool runs as root with namespaces."""


@dataclass(frozen=True)
class Limits:
    timeout: float = 10.0
    """Wall-clock seconds."""
    cpu_seconds: int = 10
    """CPU seconds of the whole sample (all its processes together, read from its control
    group where one counts it) and of each process (RLIMIT_CPU)."""
    memory_bytes: int = 1 << 30
    """Memory of the whole sample (its cgroup, every process, tmpfs and memfd pages) and the
    address space of each process."""
    file_bytes: int = 1 << 20
    """Largest file the program may write, and most bytes of stdout and stderr together (the
    run ends past it)."""
    processes: int = 64
    """Processes the sample may have at once: its cgroup's and, with isolation "namespaces",
    its user namespace's limit (the guard fallback refuses forking instead)."""
    open_files: int = 256
    workspace_bytes: int = 64 << 20
    """Size of the private tmpfs at /tmp (isolation "namespaces")."""


@dataclass(frozen=True)
class RunResult:
    ok: bool
    reason: str
    """`passed`, `timeout`, `cpu time`, `memory`, `failed: AssertionError ...`,
    `error: NameError ...`, `exited: ...`, `exited before the end (...)`,
    `killed by signal ...`, `output: more than ...`, or `refused: ...` (isolation "guard")."""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    isolation: str = "guard"
    """Which isolation ran: "namespaces" or "guard", with "+rlimits" when no cgroup limited the
    whole sample (limits per process only)."""


class Sandbox:
    """Runs programs under `limits`; one instance can be shared by worker threads.
    `isolation`: "namespaces", "guard", or None for the best this machine allows."""

    def __init__(
        self, limits: Limits | None = None, isolation: str | None = None, cgroups: bool = True
    ):
        if isolation not in (None, *ISOLATIONS):
            raise ValueError(f"isolation {isolation!r}: use one of {', '.join(ISOLATIONS)}")
        self.limits = limits or Limits()
        self.isolation = isolation or best_isolation()
        self.limiter = find_limiter() if cgroups else None
        """How a whole sample is limited: a control group per run where the machine allows it
        (`cgroups=False` forces the per-process fallback)."""
        if self.limiter is None and cgroups:
            _say_rlimits_once()
        self.recorded = self.isolation + ("" if self.limiter else RLIMITS_SUFFIX)
        self._server = shared_fork_server()
        self._leftovers = Leftovers()
        self._spares: queue.SimpleQueue[PreparedRun] = queue.SimpleQueue()
        weakref.finalize(self, close_spares, self._spares, self._leftovers)
        """The isolation as recorded: "+rlimits" when no control group limits the sample."""

    def _rlimits(self) -> dict[str, tuple[int, int]]:
        limits = self.limits
        return {
            "RLIMIT_AS": (limits.memory_bytes, limits.memory_bytes),
            # soft below hard: the kernel sends SIGXCPU (reported as "cpu time") before SIGKILL
            "RLIMIT_CPU": (limits.cpu_seconds, limits.cpu_seconds + 1),
            "RLIMIT_FSIZE": (limits.file_bytes, limits.file_bytes),
            "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
            # 1, not 0: a core_pattern piping to a helper (apport, systemd-coredump) ignores a
            # limit of 0 and starts that helper as root on the host with the sample's memory;
            # the kernel refuses a piped dump at exactly 1, and a file dump below a page
            "RLIMIT_CORE": (1, 1),
            # no real-time scheduling even where the tool's user may (an audio group's 95):
            # a SCHED_FIFO loop would hold a CPU from everything else on the machine
            **({"RLIMIT_RTPRIO": (0, 0)} if hasattr(resource, "RLIMIT_RTPRIO") else {}),
        }

    def run(
        self,
        program: str,
        test: str | None = None,
        entry_point: str | None = None,
        prelude: str | None = None,
    ) -> RunResult:
        """Run `program`; with `test` (code defining `check`) and `entry_point`, judge it:
        "passed" only when `check(entry_point)` returned. `prelude`: trusted code the harness
        runs before the test (the task's prompt), so that helpers the test calls, such as
        HumanEval/32's `poly`, are the task's own and not ones the sample redefined. Without a
        test, "passed" says only that the program ran to its end (its own word)."""
        if (test is None) != (entry_point is None):
            raise ValueError("give both the test code and the entry point, or neither")
        job = {
            "program": program, "test": test, "entry_point": entry_point, "prelude": prelude,
            "isolation": self.isolation,
        }  # fmt: skip
        prepared = self._take_prepared()
        try:
            self._spares.put(self._prepare())  # the next run's child starts while this one runs
        except BaseException:
            prepared.close(self._leftovers)
            raise
        started = time.monotonic()
        try:
            cpu = prepared.cgroup.cpu_seconds if prepared.cgroup and prepared.cgroup.cpu else None
            outcome = exchange(prepared.fds, frame(job), started, self.limits, cpu)
            outcome.seconds = time.monotonic() - started
            out_of_memory = prepared.cgroup is not None and prepared.cgroup.out_of_memory()
        finally:
            prepared.close(self._leftovers)
        self._leftovers.remove_finished()
        stdout, stderr = (_decode_tail(data) for data in outcome.output)
        if outcome.too_much_output:
            reason = f"output: more than {self.limits.file_bytes} bytes on stdout and stderr"
        elif outcome.over_cpu:
            reason = (f"cpu time: the sample's processes used more than "
                      f"{self.limits.cpu_seconds} s together")  # fmt: skip
        elif outcome.timed_out:
            reason = "timeout"
        elif outcome.verdict is not None:
            status, detail = outcome.verdict
            reason = f"{status}: {detail}" if detail else status
        elif out_of_memory:
            reason = "memory: killed by the kernel over the sample's memory limit"
        else:
            reason = _reason_without_verdict(outcome.code)
        passed = reason == "passed"
        return RunResult(passed, reason, stdout, stderr, outcome.seconds, self.recorded)

    def _take_prepared(self) -> PreparedRun:
        try:
            return self._spares.get_nowait()
        except queue.Empty:
            return self._prepare()

    def _prepare(self) -> PreparedRun:
        """A run's child, started and confined up to where it waits for its job: its control
        group, its pipes, the setup sent (nothing of any job)."""
        cgroup = self.limiter.create(self.limits.memory_bytes, self.limits.processes) if (
            self.limiter) else None  # fmt: skip
        folder = None
        if self.isolation == "guard":  # the guard fallback writes in a folder of its own
            folder = tempfile.TemporaryDirectory(prefix="cloneprobe-")
        request = {
            "rlimits": self._rlimits(),
            "cgroup": [str(f / "cgroup.procs") for f in cgroup.folders] if cgroup else [],
            "cwd": folder.name if folder else "/",
        }  # fmt: skip
        pipes = [os.pipe() for _ in range(5)]  # stdin, stdout, stderr, verdict, status
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1], pipes[4][1]]
        prepared = PreparedRun([pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0], pipes[4][0]],
                             cgroup, folder)  # fmt: skip
        try:
            self._server.start(request, theirs)
            os.write(prepared.fds[0], frame(self._setup()))  # small: the pipe takes it whole
        except BaseException:
            prepared.close(self._leftovers)
            raise
        finally:
            for fd in theirs:
                os.close(fd)  # from here on only the child holds them
        return prepared

    def _setup(self) -> dict:
        return {
            "isolation": self.isolation, "processes": self.limits.processes,
            "workspace_bytes": self.limits.workspace_bytes, "sandbox_uid": SANDBOX_UID,
            **_root_contents(),
        }  # fmt: skip

    def close(self) -> None:
        """End the spare children and remove what is left of finished runs (a later run
        starts a spare again)."""
        close_spares(self._spares, self._leftovers)


@functools.cache
def _root_contents() -> dict[str, list[str]]:
    """What the sample's root holds, read-only: the standard library's folders and the folders
    of the shared libraries its extension modules load (read once from their ELF headers, or
    with ldd), and the loader's
    cache. No site-packages (covered empty inside), nothing of the tool."""
    stdlib = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    stdlib |= {p for p in sys.path if p.endswith("lib-dynload") and os.path.isdir(p)}
    folders = {p for p in stdlib if p and os.path.isdir(p)}
    libraries = set()
    # the interpreter and libpython are loaded already: only what extension modules load later
    modules = [str(p) for folder in folders for p in Path(folder).glob("lib-dynload/*.so")]
    modules += [str(p) for folder in folders for p in Path(folder).glob("*.so")]
    found = library_folders(modules)
    if found is not None:
        libraries = found
    elif modules and shutil.which("ldd"):  # a file elf_needs cannot read: ask the loader
        listing = subprocess.run(
            ["ldd", *modules], capture_output=True, text=True, timeout=60, check=False
        ).stdout
        for line in listing.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > parts.index("=>") + 1:
                found_path = parts[parts.index("=>") + 1]
                if found_path.startswith("/") and "libpython" not in found_path:
                    libraries.add(os.path.dirname(found_path))
    folders |= libraries
    real = sorted({os.path.realpath(f): f for f in folders}.items())
    outermost = [f for r, f in real if not any(r.startswith(o + os.sep) for o, _ in real)]
    files = [f for f in ("/etc/ld.so.cache",) if os.path.isfile(f)]
    return {"folders": sorted(outermost), "files": files}


@functools.cache
def _say_rlimits_once() -> None:
    log.warning(
        "No control group can limit a whole sample on this machine (cgroup v2 with memory and "
        "pids delegated, or writable cgroup v1 hierarchies): memory and processes are limited "
        "per process (rlimits); reports say isolation=...%s.", RLIMITS_SUFFIX,
    )  # fmt: skip


def start_in_background() -> threading.Thread:
    """Probe the isolation (which starts the shared fork server), find the control groups and
    read what the sample's root holds, in a thread, so that a command doing this first has it
    ready when its samples are loaded; a `Sandbox` made meanwhile waits for the probe instead
    of repeating it. Nothing of any sample is involved; a failure here is met again, and
    reported, by the first `Sandbox`."""

    def prepare() -> None:
        with contextlib.suppress(Exception):
            best_isolation()
            find_limiter()
            _root_contents()

    thread = threading.Thread(target=prepare, name="sandbox start", daemon=True)
    thread.start()
    return thread


_PROBE_LOCK = threading.Lock()


def best_isolation() -> str:
    """ "namespaces" when this machine runs a probe sample under them, else "guard" (logged
    once, with the reason); probed once per process, whichever thread asks first."""
    with _PROBE_LOCK:
        return _probed_isolation()


@functools.cache
def _probed_isolation() -> str:
    probe = Sandbox(Limits(timeout=30), isolation="namespaces").run(
        "def answer():\n    return 42\n", "def check(f):\n    assert f() == 42\n", "answer"
    )
    if probe.ok:
        return "namespaces"
    log.warning(
        "Samples run without kernel namespaces on this machine (%s): falling back to the "
        "Python-level guard, which a hostile sample can undo; reports say isolation=guard.",
        (probe.reason + " " + probe.stderr.strip()[-300:]).strip(),
    )
    return "guard"


def _reason_without_verdict(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        return "cpu time" if name == "SIGXCPU" else f"killed by signal {name}"
    if code is not None and code > 128 and (code - 128) in signal.valid_signals():
        name = signal.Signals(code - 128).name
        return "cpu time" if name == "SIGXCPU" else f"killed by signal {name}"
    return f"exited before the end (exit code {code})"


def _decode_tail(data: bytes, limit: int = OUTPUT_TAIL) -> str:
    return data.decode("utf-8", "replace")[-limit:]


def run_python(code: str, timeout: float = 10.0) -> RunResult:
    """Run `code` in a fresh sandbox (a convenience for one-off runs)."""
    return Sandbox(Limits(timeout=timeout)).run(code)
