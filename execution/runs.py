"""The tool's side of one run: the fork server, a run's child prepared ahead, and the exchange
over the run's pipes (setup and job in; output, verdict and exit status out).

Used by `sandbox.py` only; what runs on the other side is `guard.py`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .cgroups import Cgroup

OUTPUT_TAIL = 20_000
CPU_READ_EVERY = 0.1
"""Seconds between two readings of a run's CPU time (its control group's count), while it runs."""
GUARD_PATH = Path(__file__).with_name("guard.py")
"""The program the child runs: it confines itself, then runs the sample and the tests."""
CLEAN_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
}


@dataclass
class PreparedRun:
    fds: list[int]
    """Our ends: stdin, stdout, stderr, verdict, status."""
    cgroup: Cgroup | None
    folder: tempfile.TemporaryDirectory | None

    def close(self, leftovers: Leftovers) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.cgroup is not None:
            leftovers.add(self.cgroup)  # removed once its processes are gone
        if self.folder is not None:
            self.folder.cleanup()


def close_spares(spares: queue.SimpleQueue, leftovers: Leftovers) -> None:
    while True:
        try:
            spares.get_nowait().close(leftovers)
        except queue.Empty:
            break
    leftovers.remove_all()


class Leftovers:
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
def shared_fork_server() -> _ForkServer:
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
class Outcome:
    output: list = field(default_factory=lambda: [b"", b""])
    """The tails of stdout and stderr."""
    verdict: tuple[str, str] | None = None
    timed_out: bool = False
    too_much_output: bool = False
    over_cpu: bool = False
    """The run's processes together used more CPU time than `limits.cpu_seconds`."""
    code: int | None = None
    seconds: float = 0.0


def exchange(
    fds: list[int],
    payload: bytes,
    started: float,
    limits,
    cpu_seconds: Callable[[], float | None] | None = None,
) -> Outcome:
    """Send the setup and the job, read stdout and stderr (keeping their tails, and stopping
    once they exceed `limits.file_bytes` together), the verdict and the child's status, until
    the child has ended and its verdict pipe closed, or the wall-clock timeout passes, or (with
    `cpu_seconds`, the CPU time of all the run's processes) its CPU time passes
    `limits.cpu_seconds`; then kill what is left of the run."""
    stdin, stdout, stderr, verdict_fd, status_fd = fds
    outcome, verdict, status, written, total = Outcome(), b"", b"", 0, 0
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
            if cpu_seconds is not None:
                used = cpu_seconds()
                if used is not None and used > limits.cpu_seconds:
                    outcome.over_cpu = True
                    break
                left = min(left, CPU_READ_EVERY)
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


def _parse_verdict(data: bytes) -> tuple[str, str] | None:
    """The harness's [status, detail], when it wrote one."""
    if not data:
        return None
    try:
        status, detail = json.loads(data)
    except (ValueError, TypeError):
        return None
    if type(status) is not str or type(detail) is not str:
        return None
    return _storable(status), _storable(detail)


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(32), *range(127, 160)) if chr(c) not in "\n\t"}


def _storable(text: str) -> str:
    """`text` as valid UTF-8 without control characters: the detail quotes what the sample
    raised, and a lone surrogate in it (`raise ValueError('\\ud800')`) would stop SQLite, and
    every later result, from being stored; an escape sequence would reach the terminal of
    whoever reads a report. Both are kept as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").translate(_CONTROLS)
