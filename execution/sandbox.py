"""Running untrusted programs, and judging them against tests, in confined child processes.

Generated code never runs inside the tool's process. Each `Sandbox` starts `guard.py` once, by
path, as a fork server (a fresh interpreter with a clean environment, `PYTHONHASHSEED=0`, that
never reads a job). For each run it forks a child in a session of its own, with rlimits and,
where the machine allows, a control group of its own (`cgroups.py`: memory and processes of
the whole sample); the child confines itself, forks the sample's process and only then reads
the job. While one run goes on, the next run's child is already started and waits for its job.

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
import json
import logging
import os
import queue
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from .cgroups import Cgroup, find_limiter
from .elf_needs import library_folders

log = logging.getLogger(__name__)

ISOLATIONS = ("namespaces", "guard")
RLIMITS_SUFFIX = "+rlimits"
SANDBOX_UID = 65534
"""The user (`nobody`) the sample runs as when the tool runs as root with namespaces."""
OUTPUT_TAIL = 20_000
GUARD_PATH = Path(__file__).with_name("guard.py")
"""The program the child runs: it confines itself, then runs the sample and the tests."""
CLEAN_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
}


@dataclass(frozen=True)
class Limits:
    timeout: float = 10.0
    """Wall-clock seconds."""
    cpu_seconds: int = 10
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
        self._server = _shared_fork_server()
        self._leftovers = _Leftovers()
        self._spares: queue.SimpleQueue[_Prepared] = queue.SimpleQueue()
        weakref.finalize(self, _close_spares, self._spares, self._leftovers)
        """The isolation as recorded: "+rlimits" when no control group limits the sample."""

    def _rlimits(self) -> dict[str, tuple[int, int]]:
        limits = self.limits
        return {
            "RLIMIT_AS": (limits.memory_bytes, limits.memory_bytes),
            # soft below hard: the kernel sends SIGXCPU (reported as "cpu time") before SIGKILL
            "RLIMIT_CPU": (limits.cpu_seconds, limits.cpu_seconds + 1),
            "RLIMIT_FSIZE": (limits.file_bytes, limits.file_bytes),
            "RLIMIT_NOFILE": (limits.open_files, limits.open_files),
            "RLIMIT_CORE": (0, 0),
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
            outcome = _exchange(prepared.fds, _frame(job), started, self.limits)
            outcome.seconds = time.monotonic() - started
            out_of_memory = prepared.cgroup is not None and prepared.cgroup.out_of_memory()
        finally:
            prepared.close(self._leftovers)
        self._leftovers.remove_finished()
        stdout, stderr = (_decode_tail(data) for data in outcome.output)
        if outcome.too_much_output:
            reason = f"output: more than {self.limits.file_bytes} bytes on stdout and stderr"
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

    def _take_prepared(self) -> _Prepared:
        try:
            return self._spares.get_nowait()
        except queue.Empty:
            return self._prepare()

    def _prepare(self) -> _Prepared:
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
        prepared = _Prepared([pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][0], pipes[4][0]],
                             cgroup, folder)  # fmt: skip
        try:
            self._server.start(request, theirs)
            os.write(prepared.fds[0], _frame(self._setup()))  # small: the pipe takes it whole
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
        _close_spares(self._spares, self._leftovers)


@dataclass
class _Prepared:
    fds: list[int]
    """Our ends: stdin, stdout, stderr, verdict, status."""
    cgroup: Cgroup | None
    folder: tempfile.TemporaryDirectory | None

    def close(self, leftovers: _Leftovers) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.cgroup is not None:
            leftovers.add(self.cgroup)  # removed once its processes are gone
        if self.folder is not None:
            self.folder.cleanup()


def _close_spares(spares: queue.SimpleQueue, leftovers: _Leftovers) -> None:
    while True:
        try:
            spares.get_nowait().close(leftovers)
        except queue.Empty:
            break
    leftovers.remove_all()


class _Leftovers:
    """Control groups of finished runs, removed once the kernel has ended their processes
    (a run returns as soon as its verdict is in; the rest of its teardown is not waited for)."""

    def __init__(self):
        self.lock, self.groups = threading.Lock(), []

    def add(self, cgroup: Cgroup) -> None:
        with self.lock:
            self.groups.append(cgroup)

    def remove_finished(self) -> None:
        with self.lock:
            groups, self.groups = self.groups, []
        left = [group for group in groups if not group.try_remove()]
        with self.lock:
            self.groups += left

    def remove_all(self) -> None:
        with self.lock:
            groups, self.groups = self.groups, []
        for group in groups:
            group.remove()


@functools.cache
def _shared_fork_server() -> _ForkServer:
    """One fork server per process, shared by every Sandbox (it holds no setting of theirs:
    each request brings its own), ended when the process exits."""
    return _ForkServer()


class _ForkServer:
    """The guard started once (`guard.py --serve`, a fresh interpreter that never reads a job)
    and asked to fork a child per run; restarted if it died."""

    def __init__(self):
        self.lock, self.channel, self.process = threading.Lock(), None, None

    def _launch(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-S", "-s", "-B"]  # no site, no user packages
        if sys.version_info >= (3, 11):
            command.append("-P")  # the guard's folder stays off the sample's import path
        with theirs:
            self.process = subprocess.Popen(
                [*command, str(GUARD_PATH), "--serve"],
                cwd="/",
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=CLEAN_ENVIRONMENT,
            )
        self.channel = ours
        weakref.finalize(self, _stop_server, ours, self.process)

    def start(self, request: dict, fds: list[int]) -> None:
        message = json.dumps(request).encode()
        with self.lock:
            for attempt in range(2):
                if self.channel is None or self.process.poll() is not None:
                    self._launch()
                try:
                    socket.send_fds(self.channel, [message], fds)
                    return
                except OSError:
                    self.channel = None
                    if attempt:
                        raise


def _stop_server(channel: socket.socket, process: subprocess.Popen) -> None:
    channel.close()  # the server ends at the end of its channel
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


@dataclass
class _Outcome:
    output: list = field(default_factory=lambda: [b"", b""])
    """The tails of stdout and stderr."""
    verdict: tuple[str, str] | None = None
    timed_out: bool = False
    too_much_output: bool = False
    code: int | None = None
    seconds: float = 0.0


def _exchange(fds: list[int], payload: bytes, started: float, limits) -> _Outcome:
    """Send the setup and the job, read stdout and stderr (keeping their tails, and stopping
    once they exceed `limits.file_bytes` together), the verdict and the child's status, until
    the child has ended and its verdict pipe closed, or the wall-clock timeout passes; then
    kill what is left of the run."""
    stdin, stdout, stderr, verdict_fd, status_fd = fds
    outcome, verdict, status, written, total = _Outcome(), b"", b"", 0, 0
    selector = selectors.DefaultSelector()
    names = {stdout: 0, stderr: 1, verdict_fd: "verdict", status_fd: "status"}
    for fd in names:
        selector.register(fd, selectors.EVENT_READ)
    os.set_blocking(stdin, False)
    selector.register(stdin, selectors.EVENT_WRITE)
    deadline = started + limits.timeout
    pid = None
    try:
        while True:
            open_fds = selector.get_map().keys()
            # ended: the server reported the exit (or is gone) and the verdict pipe closed
            ended = (b"exit" in status or status_fd not in open_fds) and verdict_fd not in open_fds
            if ended and not ({stdout, stderr} & open_fds):
                break
            if _parse_verdict(verdict) is not None:  # decided: the sample's output is all in
                _drain(selector, names, outcome)  # (it flushes before every answer)
                break
            left = deadline - time.monotonic()
            if ended:  # what the run printed last; a process it left behind cannot hold us
                left = min(left, 0.2)
            if left <= 0:
                outcome.timed_out = not ended
                break
            for key, _ in selector.select(left):
                fd = key.fd
                if fd == stdin:
                    try:
                        written += os.write(stdin, payload[written : written + (1 << 16)])
                    except BrokenPipeError:
                        written = len(payload)
                    except BlockingIOError:
                        pass
                    if written >= len(payload):
                        selector.unregister(stdin)
                    continue
                data = os.read(fd, 1 << 16)
                if not data:
                    selector.unregister(fd)
                    continue
                which = names[fd]
                if which == "verdict":
                    verdict = (verdict + data)[: 1 << 16]
                elif which == "status":
                    status += data
                    if pid is None and status.startswith(b"pid "):
                        pid = int(status.split()[1])
                else:
                    total += len(data)
                    outcome.output[which] = (outcome.output[which] + data)[-OUTPUT_TAIL * 4 :]
                    if total > limits.file_bytes:
                        outcome.too_much_output = True
                        return outcome
    finally:
        selector.close()
        if pid is not None:
            _kill_run(pid)
    if verdict:
        outcome.verdict = _parse_verdict(verdict)
    for line in status.decode("ascii", "replace").splitlines():
        if line.startswith("exit ") and line[5:].lstrip("-").isdigit():
            outcome.code = int(line[5:])
    return outcome


def _drain(selector, names, outcome) -> None:
    """Add what stdout and stderr hold now, without waiting."""
    for fd, which in names.items():
        if not isinstance(which, int) or fd not in selector.get_map():
            continue
        while selector.select(0) and any(key.fd == fd for key, _ in selector.select(0)):
            data = os.read(fd, 1 << 16)
            if not data:
                break
            outcome.output[which] = (outcome.output[which] + data)[-OUTPUT_TAIL * 4 :]


def _kill_run(pid: int) -> None:
    """Kill the run's child and anything left in its session (the namespace's PID 1 is in it;
    its death takes every process of the namespace with it)."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


def _frame(value) -> bytes:
    data = json.dumps(value).encode("utf-8", "surrogatepass")
    return len(data).to_bytes(4, "big") + data


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


@functools.cache
def best_isolation() -> str:
    """ "namespaces" when this machine runs a probe sample under them, else "guard" (logged
    once, with the reason)."""
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


def _parse_verdict(data: bytes) -> tuple[str, str] | None:
    """The harness's [status, detail], when it wrote one."""
    if not data:
        return None
    try:
        status, detail = json.loads(data)
    except (ValueError, TypeError):
        return None
    return (status, detail) if type(status) is str and type(detail) is str else None


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
