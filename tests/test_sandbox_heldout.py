"""Holes a held-out set of hostile HumanEval samples found in the sandbox of issue 22, each
pinned by a minimal sample through `cloneprobe execute` over a real SQLite store, beside the
canonical solution, which must pass in the same run.

- A lone surrogate in what a sample raises (`raise ValueError('\\ud800')`) reached the verdict's
  detail, and SQLite refused to store it: `execute` ended with an internal error and no result
  of the run was stored, the honest ones included.
- Escape sequences in what a sample raises were stored as they were, for a report to hand to a
  terminal.
- AF_VSOCK sockets: vsock ports are one space for the whole (virtual) machine, whatever the
  network namespace, so a sample could listen on, or hold, a port of the host's and talk to
  the machine's hypervisor side.
- inotify on the folders the root shares with the host (the standard library) showed the
  sample every access of other processes to them: other samples' imports, the tool's; so did
  fanotify's inode marks, open to unprivileged processes since Linux 5.13.
- Core dumps: RLIMIT_CORE was 0, which a core_pattern piping to a helper (apport,
  systemd-coredump) ignores: a sample that made itself dumpable (prctl, or any exec) and
  crashed would start that helper as root on the host with its memory. The limit is now 1
  (the kernel refuses a piped dump at exactly 1, and a file dump below a page), and the
  seccomp filter refuses any change to it.
- A real-time priority limit of the tool's user (RLIMIT_RTPRIO, 95 for an audio group) was
  inherited: a sample could run SCHED_FIFO and hold a CPU from the rest of the machine.
- /dev was a writable tmpfs: a second writable place, with no limit on its inodes.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

TASK = load_humaneval().get("HumanEval/0")
PREFIX = "    return False\n\n"
REPORT = "raise RuntimeError('found ' + repr(FOUND))\n"


def at_import(code: str) -> str:
    """A completion that runs `code` when the program is loaded and reports FOUND (the tool
    keeps a completion's definitions: the code runs in a decorator)."""
    body = "".join(
        "    " + line if line.strip() else line for line in (code + REPORT).splitlines(True)
    )
    return (
        f"{PREFIX}def attack(_):\n    global FOUND\n{body}    return _\n"
        "@attack\nclass Run:\n    pass\n"
    )


HELD: list[socket.socket] = []
"""vsock sockets the test holds while `execute` runs."""


def vsock_port() -> int | None:
    """A vsock port this test holds (the host's side), or None where this machine has no
    vsock transport."""
    try:
        server = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        server.bind((socket.VMADDR_CID_ANY, socket.VMADDR_PORT_ANY))
    except (OSError, AttributeError):
        return None
    HELD.append(server)
    return server.getsockname()[1]


VSOCK = """
import errno, socket
FOUND = []
try:
    s = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
    FOUND.append('created')
    try:
        s.bind((0xFFFFFFFF, PORT))  # the port the host holds
        FOUND.append('bound')
    except OSError as error:
        FOUND.append(errno.errorcode[error.errno])
except OSError as error:
    FOUND.append(errno.errorcode[error.errno])
"""

INOTIFY = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
FOUND = []
for fd in (libc.inotify_init1(0), libc.fanotify_init(0x200, 0)):  # FAN_REPORT_FID
    FOUND.append(errno.errorcode[ctypes.get_errno()] if fd < 0 else 'watching')
"""

DEV = """
import errno
FOUND = []
try:
    open('/dev/planted', 'w').write('x')
    FOUND.append('written')
except OSError as error:
    FOUND.append(errno.errorcode[error.errno])
"""

CORE = """
import ctypes, errno, resource
libc = ctypes.CDLL(None, use_errno=True)
FOUND = [resource.getrlimit(resource.RLIMIT_CORE)]
lower = (ctypes.c_ulong * 2)(0, 1)
for done in (libc.setrlimit(4, lower), libc.prlimit(0, 4, lower, None)):
    FOUND.append('lowered' if done == 0 else errno.errorcode[ctypes.get_errno()])
"""

SURROGATE = "    raise ValueError('no \\ud800 answer')\n"
ESCAPES = "    raise ValueError('\\x1b]0;owned\\x07\\x1b[2J\\rpassed')\n"


@pytest.fixture(scope="module")
def heldout_run():
    """One `execute` run: the samples that found each hole, then the canonical solution."""
    port = vsock_port()
    samples = {
        "surrogate": SURROGATE,
        "escapes": ESCAPES,
        "vsock": at_import(VSOCK.replace("PORT", str(port or 1024))),
        "inotify": at_import(INOTIFY),
        "dev": at_import(DEV),
        "core": at_import(CORE),
        "canonical": TASK.canonical_solution,
    }
    with tempfile.TemporaryDirectory(prefix="cloneprobe-heldout-") as folder:
        path, store = Path(folder) / "samples.jsonl", Path(folder) / "store.sqlite"
        write_samples(path, samples.values())
        try:
            result = CliRunner().invoke(main, [
                "execute", str(path), "--model", "m", "--temperature", "0.8", "--store",
                str(store), "--json", "--exec-timeout", "10", "--workers", "2",
            ])  # fmt: skip
        finally:
            while HELD:
                HELD.pop().close()
        rows = stored_verdicts(store)
    return {"result": result, "rows": dict(zip(samples, rows, strict=True)), "port": port}


def write_samples(path: Path, completions) -> None:
    """A sample file of completions of TASK, one per line, in order."""
    path.write_text("".join(
        json.dumps({"task_id": TASK.task_id, "completion": c}) + "\n" for c in completions
    ))  # fmt: skip


def stored_verdicts(store: Path) -> list[tuple[int | None, str | None]]:
    """(passed, reason) of each stored sample in index order, straight from the SQLite file;
    (None, None) for a sample with no verdict stored."""
    with closing(sqlite3.connect(store)) as db:
        return db.execute(
            "SELECT e.passed, e.reason FROM samples s LEFT JOIN executions e "
            "ON e.sample_id = s.id ORDER BY s.sample_index"
        ).fetchall()


def test_a_lone_surrogate_in_what_a_sample_raises_stops_no_result_from_being_stored(
    heldout_run,
):
    assert heldout_run["result"].exit_code == 0, heldout_run["result"].output
    rows = heldout_run["rows"]
    assert rows["canonical"] == (1, "passed")
    assert all(passed is not None for passed, _ in rows.values()), rows
    assert rows["surrogate"] == (0, "error: ValueError: no \\ud800 answer")


def test_control_characters_of_a_sample_are_stored_escaped(heldout_run):
    assert heldout_run["rows"]["escapes"] == (
        0, "error: ValueError: \\x1b]0;owned\\x07\\x1b[2J\\x0dpassed"
    )  # fmt: skip


def test_no_vsock_socket_can_be_opened(heldout_run):
    """Where this machine has vsock, the host's port was held by the test while the sample
    tried to bind it; a shared port space answered EADDRINUSE."""
    expected = "error: RuntimeError: found ['EAFNOSUPPORT']"
    assert heldout_run["rows"]["vsock"] == (0, expected)
    if heldout_run["port"] is None:
        pytest.skip("no vsock transport on this machine: the sample was refused by the kernel")


def test_inotify_and_fanotify_are_refused_by_the_filter(heldout_run):
    expected = "error: RuntimeError: found ['EPERM', 'EPERM']"
    assert heldout_run["rows"]["inotify"] == (0, expected)


def test_dev_is_read_only_so_tmp_is_the_only_writable_place(heldout_run):
    assert heldout_run["rows"]["dev"] == (0, "error: RuntimeError: found ['EROFS']")


REAL_TIME = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
class Param(ctypes.Structure):
    _fields_ = [('priority', ctypes.c_int)]
done = libc.sched_setscheduler(0, 1, ctypes.byref(Param(1)))  # SCHED_FIFO
FOUND = ['SCHED_FIFO' if done == 0 else errno.errorcode[ctypes.get_errno()]]
"""


def test_no_real_time_priority_even_where_the_tools_user_may_take_one(tmp_path):
    """`execute` in a process allowed real-time priorities (RLIMIT_RTPRIO 10, as root): the
    sample still may not take one."""
    try:
        allowed = (
            subprocess.run(
                [sys.executable, "-c", "pass"], preexec_fn=raise_real_time_limit, check=True
            ).returncode
            == 0
        )
    except (subprocess.SubprocessError, OSError):
        allowed = False
    if not allowed:
        pytest.skip("this user may not raise RLIMIT_RTPRIO, so the tool cannot hand it on")
    samples, store = tmp_path / "samples.jsonl", tmp_path / "store.sqlite"
    completions = [at_import(REAL_TIME), TASK.canonical_solution]
    write_samples(samples, completions)
    subprocess.run(
        [sys.executable, "-m", "cloneprobe", "execute", str(samples), "--model", "m",
         "--temperature", "0.8", "--store", str(store), "--json", "--exec-timeout", "10"],
        preexec_fn=raise_real_time_limit, capture_output=True, check=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert stored_verdicts(store) == [(0, "error: RuntimeError: found ['EPERM']"), (1, "passed")]


def raise_real_time_limit() -> None:
    resource.setrlimit(resource.RLIMIT_RTPRIO, (10, 10))


def test_the_core_dump_limit_is_one_and_the_sample_cannot_lower_it(heldout_run):
    """Only the limit can be checked here: this machine's core_pattern writes a file, which
    a limit of 0 stops too; a piped one starts its helper unless the limit is exactly 1."""
    expected = "error: RuntimeError: found [(1, 1), 'EPERM', 'EPERM']"
    assert heldout_run["rows"]["core"] == (0, expected)
