"""Running benchmark code in a separate Python process with a timeout and resource limits.

Generated or benchmark code never runs inside the tool's own process: it runs in a fresh
interpreter (`-I`: isolated mode) in a throwaway working directory, with CPU time, memory and
file-size limits, and is killed when the wall-clock timeout passes.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass

MEMORY_LIMIT = 1 << 30
CPU_SECONDS = 10
FILE_SIZE_LIMIT = 1 << 20


@dataclass(frozen=True)
class RunResult:
    ok: bool
    stdout: str
    stderr: str
    reason: str
    """`passed`, `failed` (non-zero exit), or `timeout`."""


def _limit_resources() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def run_python(code: str, timeout: float = 10.0) -> RunResult:
    """Run `code` as a Python program in a separate, limited process."""
    with tempfile.TemporaryDirectory(prefix="cloneprobe-run-") as workdir:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", code],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=timeout,
                preexec_fn=_limit_resources,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as expired:
            out = expired.stdout or ""
            return RunResult(False, out if isinstance(out, str) else out.decode(), "", "timeout")
    reason = "passed" if done.returncode == 0 else "failed"
    return RunResult(done.returncode == 0, done.stdout, done.stderr, reason)
