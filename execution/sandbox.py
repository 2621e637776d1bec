"""Running untrusted programs, and judging them against tests, in a confined child process.

Generated code never runs inside the tool's process. `Sandbox.run` starts `guard.py` by path
in a fresh interpreter with a clean environment (`PYTHONHASHSEED=0`, no inherited variables, so
no secrets), in its own session and process group (killed whole when the wall-clock timeout
passes), with rlimits on CPU seconds, address space, file size, open files and processes, and
its output going to files the file-size limit caps (only their tail reaches the caller).

Isolation "namespaces" (the default wherever the kernel allows it; probed once): the child
enters new mount, network, PID and IPC namespaces (inside a user namespace when the tool does
not run as root), sees the filesystem read-only with a private tmpfs at /tmp as its only
writable place, the host's /tmp, /var/tmp, /dev/shm, /run, /root and /home hidden, no network
at all, only its own processes, and holds no privilege (as root, it runs as `nobody`).
Isolation "guard": the fallback where namespaces are unavailable; said once in the log; the
sample's interpreter is patched (`python_guard.py`), which a hostile sample can undo.

The verdict comes from the parent's side: with tests, the sample's program and the tests run in
two processes; the harness runs `check` with proxies that call into the sample's process and
get plain data back, and only the harness holds the pipe the verdict comes back on (the threat
model is in `guard.py`). Whatever the sample does, it cannot turn into "passed" in either
isolation, short of ptrace-ing the harness as root in the guard fallback.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

ISOLATIONS = ("namespaces", "guard")
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
    """Address space of each process."""
    file_bytes: int = 1 << 20
    """Largest file the program may write (its stdout and stderr included)."""
    processes: int = 64
    """Processes the sample may have at once, counted in its own user namespace (isolation
    "namespaces"; the guard fallback refuses forking instead)."""
    open_files: int = 256
    workspace_bytes: int = 64 << 20
    """Size of the private tmpfs at /tmp (isolation "namespaces")."""


@dataclass(frozen=True)
class RunResult:
    ok: bool
    reason: str
    """`passed`, `timeout`, `cpu time`, `memory`, `failed: AssertionError ...`,
    `error: NameError ...`, `exited: ...`, `exited before the end (...)`,
    `killed by signal ...`, or `refused: ...` (isolation "guard")."""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    isolation: str = "guard"
    """Which isolation ran: "namespaces" or "guard"."""


class Sandbox:
    """Runs programs under `limits`; one instance can be shared by worker threads.
    `isolation`: "namespaces", "guard", or None for the best this machine allows."""

    def __init__(self, limits: Limits | None = None, isolation: str | None = None):
        if isolation not in (None, *ISOLATIONS):
            raise ValueError(f"isolation {isolation!r}: use one of {', '.join(ISOLATIONS)}")
        self.limits = limits or Limits()
        self.isolation = isolation or best_isolation()

    def _limit_resources(self) -> None:  # runs in the child before exec
        limits = self.limits
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        # soft below hard: the kernel sends SIGXCPU (reported as "cpu time") before SIGKILL
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

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
            "isolation": self.isolation, "processes": self.limits.processes,
            "workspace_bytes": self.limits.workspace_bytes, "sandbox_uid": SANDBOX_UID,
            "import_paths": _package_folders(),
        }  # fmt: skip
        verdict_read, verdict_write = os.pipe()
        try:
            with tempfile.TemporaryDirectory(prefix="cloneprobe-run-") as folder:
                work = Path(folder)
                started = time.monotonic()
                with (work / ".stdout").open("wb") as out, (work / ".stderr").open("wb") as err:
                    handed_over, verdict_write = verdict_write, -1  # closed by the callee
                    timed_out, code = self._start_and_wait(job, work, out, err, handed_over)
                seconds = time.monotonic() - started
                stdout, stderr = _tail(work / ".stdout"), _tail(work / ".stderr")
            verdict = None if timed_out else _read_verdict(verdict_read)
        finally:
            os.close(verdict_read)
            if verdict_write >= 0:
                os.close(verdict_write)
        if timed_out:
            reason = "timeout"
        elif verdict is None:
            reason = _reason_without_verdict(code)
        else:
            status, detail = verdict
            reason = f"{status}: {detail}" if detail else status
        passed = verdict is not None and verdict[0] == "passed"
        return RunResult(passed, reason, stdout, stderr, seconds, self.isolation)

    def _start_and_wait(self, job, work, out, err, verdict_write) -> tuple[bool, int | None]:
        command = [sys.executable, "-S", "-s", "-B"]  # no site: `import_paths` instead
        if sys.version_info >= (3, 11):
            command.append("-P")  # the guard's folder stays off the sample's import path
        command += [str(GUARD_PATH), str(verdict_write)]
        try:
            process = subprocess.Popen(
                command,
                cwd=work,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                pass_fds=(verdict_write,),
                preexec_fn=self._limit_resources,
                start_new_session=True,
                env=CLEAN_ENVIRONMENT,
            )
        finally:
            os.close(verdict_write)  # from here on only the child holds it
        try:
            with contextlib.suppress(BrokenPipeError):
                process.stdin.write(json.dumps(job).encode("utf-8", "surrogatepass"))
                process.stdin.close()
            process.wait(self.limits.timeout)
            return False, process.returncode
        except subprocess.TimeoutExpired:
            return True, None
        finally:
            _kill_group(process)


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


@functools.cache
def _package_folders() -> list[str]:
    """The tool's site-packages folders, so samples can import what the tool's interpreter has
    installed (numpy, ...) without the child paying for `site` and its .pth files."""
    return [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the child and anything left in its process group (the namespace's PID 1 is in it;
    its death takes every process of the namespace with it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _read_verdict(fd: int) -> tuple[str, str] | None:
    """The harness's [status, detail], when it wrote one (every writer is gone by now)."""
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        data = os.read(fd, 1 << 16)
    except BlockingIOError:
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


def _tail(path: Path, limit: int = OUTPUT_TAIL) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def run_python(code: str, timeout: float = 10.0) -> RunResult:
    """Run `code` in a fresh sandbox (a convenience for one-off runs)."""
    return Sandbox(Limits(timeout=timeout)).run(code)
