"""Running a benchmark's own reference code (prompt + canonical solution) in a separate
interpreter: for checking the fixed prompts' examples and tests when the data is built.

This is trusted code shipped with the benchmark, so a plain child process with a timeout
suffices; model samples are never run here (the sandbox in `cloneprobe.execution` does that).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

EXAMPLE_CALLS = Path(__file__).with_name("example_calls.py")


@dataclass(frozen=True)
class ReferenceRun:
    ok: bool
    stdout: str
    stderr: str


def run_reference(program: str, timeout: float = 20.0, script: Path | None = None) -> ReferenceRun:
    """Run `program` (or `script`, fed `program` on stdin) in a fresh isolated interpreter."""
    command = [sys.executable, "-I", str(script) if script else "-"]
    try:
        done = subprocess.run(
            command, input=program, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return ReferenceRun(False, "", f"timeout after {timeout:g} s")
    return ReferenceRun(done.returncode == 0, done.stdout, done.stderr)


def evaluate_calls(source: str, calls: list[str], timeout: float = 20.0) -> list[str | None]:
    """repr of each call's result after running `source` (None where a call raised, or for
    every call when `source` itself fails)."""
    run = run_reference(json.dumps({"source": source, "calls": calls}), timeout, EXAMPLE_CALLS)
    if not run.ok:
        return [None] * len(calls)
    return json.loads(run.stdout.strip().splitlines()[-1])
