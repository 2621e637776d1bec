"""Running programs in a separate, limited Python process.

Generated code never runs inside the tool's process. Each program runs in a fresh interpreter
(`-I`, isolated mode) in a throwaway working directory, in its own process group (killed whole
when the wall-clock timeout passes), with CPU time, memory and file-size limits, without
network (a network namespace where `unshare` allows it, and sockets refused in any case), and
behind a guard (the module `guard.py`, started by path) that refuses forking, spawning,
deleting files and writing outside the working directory (through `open`, `io.FileIO` or
`os.open`; `ctypes` cannot be imported). Output goes to files in the working directory, so a
flood of prints is bounded by the file-size limit instead of the host's memory. The verdict
comes from a line the guard writes after the program ends, marked with a nonce the guard
reads from stdin and keeps in a closure, out of the program's namespace and argv.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    timeout: float = 10.0
    """Wall-clock seconds."""
    cpu_seconds: int = 10
    memory_bytes: int = 1 << 30
    file_bytes: int = 1 << 20
    processes: int = 64
    """RLIMIT_NPROC (enforced for non-root users; the guard refuses forking in any case)."""


@dataclass(frozen=True)
class RunResult:
    ok: bool
    reason: str
    """`passed`, `timeout`, `failed: AssertionError ...`, `error: NameError ...`, `memory`,
    `exited before the end (...)`, `killed by signal ...`, or `refused: ...` by the guard."""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0


GUARD_PATH = Path(__file__).with_name("guard.py")
"""The program the child runs: it installs the guard, then runs the program it reads."""


@functools.cache
def _can_unshare_network() -> bool:
    """Whether `unshare -n` works here (root, or user namespaces allowed); probed once."""
    if not shutil.which("unshare"):
        return False
    try:
        probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


class Sandbox:
    """Runs programs under `limits`; one instance can be shared by worker threads."""

    def __init__(self, limits: Limits | None = None, isolate_network: bool | None = None):
        self.limits = limits or Limits()
        self.isolate_network = (
            _can_unshare_network() if isolate_network is None else isolate_network
        )

    def _limit_resources(self) -> None:  # runs in the child before exec
        limits = self.limits
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        # soft below hard: the kernel sends SIGXCPU (reported as "cpu time") before SIGKILL
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def run(self, program: str) -> RunResult:
        nonce = secrets.token_hex(16)
        command = [sys.executable, "-I", str(GUARD_PATH)]
        if self.isolate_network:
            command = ["unshare", "-n", *command]
        with tempfile.TemporaryDirectory(prefix="cloneprobe-run-") as folder:
            work = Path(folder)
            out_path, err_path = work / ".stdout", work / ".stderr"
            started = time.monotonic()
            with out_path.open("wb") as out, err_path.open("wb") as err:
                process = subprocess.Popen(
                    command,
                    cwd=work,
                    stdin=subprocess.PIPE,
                    stdout=out,
                    stderr=err,
                    preexec_fn=self._limit_resources,
                    start_new_session=True,
                    env={"PATH": os.environ.get("PATH", ""), "PYTHONHASHSEED": "0"},
                )
                try:
                    stdin = f"{nonce}\n{program}".encode("utf-8", "replace")
                    process.communicate(stdin, self.limits.timeout)
                    timed_out = False
                except subprocess.TimeoutExpired:
                    timed_out = True
                finally:
                    _kill_group(process)
            seconds = time.monotonic() - started
            stdout = _tail(out_path)
            stderr = _tail(err_path)
        if timed_out:
            return RunResult(False, "timeout", stdout, stderr, seconds)
        verdict = _verdict(stderr, nonce)
        if verdict is None:
            code = process.returncode
            if code is not None and code < 0:
                name = signal.Signals(-code).name
                reason = "cpu time" if name == "SIGXCPU" else f"killed by signal {name}"
            else:
                reason = f"exited before the end (exit code {code})"
            return RunResult(False, reason, stdout, stderr, seconds)
        status, detail = verdict
        detail = detail.removeprefix("refused by the sandbox: ")
        reason = "passed" if status == "passed" else f"{status}: {detail}" if detail else status
        return RunResult(status == "passed", reason, stdout, _strip_verdict(stderr, nonce), seconds)


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the program and anything it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _tail(path: Path, limit: int = 20_000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def _verdict(stderr: str, nonce: str) -> tuple[str, str] | None:
    for line in reversed(stderr.splitlines()):
        if line.startswith(nonce + " "):
            try:
                status, detail = json.loads(line[len(nonce) + 1 :])
                return str(status), str(detail)
            except (ValueError, TypeError):
                return None
    return None


def _strip_verdict(stderr: str, nonce: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith(nonce))


def run_python(code: str, timeout: float = 10.0) -> RunResult:
    """Run `code` in a fresh sandbox (a convenience for one-off runs)."""
    return Sandbox(Limits(timeout=timeout)).run(code)
