"""The sandbox's behaviour with ordinary programs and samples: verdicts and their reasons, limits,
the view from inside, the plain-data channel, the isolation recorded, and HumanEval's canonical
solutions. Hostile samples are in test_sandbox_attacks.py.

Every program runs only through `Sandbox.run`, never in the test process.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.execution import Execution, ExecutionStore, Limits, Sandbox, execute_samples
from cloneprobe.execution.cgroups import PROBE_LIMIT, _limit_holds, find_limiter
from cloneprobe.execution.sandbox import best_isolation
from cloneprobe.execution.wire import WireError, decode, encode_value

TIMEOUT = 2.0
ADD_TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
NAMESPACES = best_isolation() == "namespaces"
RECORDED = best_isolation() + ("" if find_limiter() else "+rlimits")
"""The isolation a run records here ("+rlimits" where no control group can be made)."""
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason="no kernel namespaces here")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(Limits(timeout=TIMEOUT))


def is_running(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return not fields or fields[0] not in ("Z", "X")


# --- verdicts ---------------------------------------------------------------------------------


def test_a_program_that_runs_to_the_end_passes_with_its_output(sandbox):
    result = sandbox.run("print('hello')\nassert 1 + 1 == 2\n")
    assert (result.ok, result.reason, result.stdout) == (True, "passed", "hello\n")
    assert result.isolation == RECORDED


def test_a_sample_is_judged_by_its_tests_in_the_harness(sandbox):
    right = sandbox.run("def add(a, b):\n    print('adding')\n    return a + b\n", ADD_TEST, "add")
    wrong = sandbox.run("def add(a, b):\n    return a - b\n", ADD_TEST, "add")
    assert (right.ok, right.reason, right.stdout) == (True, "passed", "adding\n")
    assert (wrong.ok, wrong.reason) == (False, "failed: AssertionError")


def test_a_failing_assertion_is_reported_as_failed_with_its_message(sandbox):
    result = sandbox.run("assert 1 == 2, 'one is not two'\n")
    assert (result.ok, result.reason) == (False, "failed: AssertionError one is not two")


@pytest.mark.parametrize(
    "program, reason",
    [
        ("print('before')\n{}['missing']\n", "error: KeyError: 'missing'"),
        (
            "def add(a, b):\n    return undefined\n",
            "error: NameError: name 'undefined' is not defined",
        ),
        ("x = 1\n", "error: NameError: name 'add' is not defined"),
    ],
    ids=["at-import", "in-the-answer", "no-entry-point"],
)
def test_an_exception_is_reported_as_an_error_with_its_type(sandbox, program, reason):
    result = sandbox.run(program, ADD_TEST, "add")
    assert (result.ok, result.reason) == (False, reason)


def test_a_test_calling_the_program_at_its_top_level_waits_for_the_program(sandbox):
    test = (
        "EXPECTED = add(1, 1)\ndef check(candidate):\n    assert candidate(2, 3) == EXPECTED + 3\n"
    )
    slow = "import time\ntime.sleep(0.2)\ndef add(a, b):\n    return a + b\n"
    result = sandbox.run(slow, test, "add")
    assert (result.ok, result.reason) == (True, "passed")


def test_a_test_needing_an_unknown_helper_fails_instead_of_passing(sandbox):
    test = "def check(candidate):\n    assert helper(candidate(1)) == 1\n"
    result = sandbox.run("def f(x):\n    return x\n", test, "f")
    assert result.reason == "error: NameError: name 'helper' is not defined"


def test_the_tests_take_helpers_from_the_trusted_prelude_not_from_the_sample(sandbox):
    task = load_humaneval().get("HumanEval/32")  # its test checks answers with the prompt's poly
    forged = task.prompt.replace("    return sum(", "    return 0 * sum(") + "    return 0.0\n"
    assert forged != task.prompt + "    return 0.0\n"
    trusted = sandbox.run(forged, task.test, task.entry_point, prelude=task.prompt)
    untrusted = sandbox.run(forged, task.test, task.entry_point)
    assert not trusted.ok and trusted.reason.startswith("failed: AssertionError")
    assert untrusted.ok  # why the prelude exists: the sample's own poly says 0 everywhere


def test_answers_cross_as_plain_data_of_every_builtin_kind(sandbox):
    program = (
        "def answer():\n"
        "    return [1, 2.5, float('inf'), 'x', b'\\x00', (1, (2,)), {1: 'a', (2, 3): None},"
        " {1, 2}, frozenset({3}), 1j, True, 10**50]\n"
    )
    test = (
        "def check(candidate):\n"
        "    value = candidate()\n"
        "    assert value == [1, 2.5, float('inf'), 'x', b'\\x00', (1, (2,)),"
        " {1: 'a', (2, 3): None}, {1, 2}, frozenset({3}), 1j, True, 10**50]\n"
        "    assert [type(v).__name__ for v in value] == ['int', 'float', 'float', 'str', 'bytes',"
        " 'tuple', 'dict', 'set', 'frozenset', 'complex', 'bool', 'int']\n"
    )
    result = sandbox.run(program, test, "answer")
    assert (result.ok, result.reason) == (True, "passed")


def test_arguments_are_copies_so_the_sample_cannot_mutate_the_tests_data(sandbox):
    test = (
        "def check(candidate):\n    data = [3, 1]\n    candidate(data)\n    assert data == [3, 1]\n"
    )
    result = sandbox.run("def f(xs):\n    xs.clear()\n", test, "f")
    assert (result.ok, result.reason) == (True, "passed")


def test_the_wire_accepts_plain_data_only():
    assert decode('{"t": "tuple", "v": [1, {"t": "set", "v": [2]}]}') == (1, {2})
    for text in ('{"a": 1}', '{"t": "object", "v": []}', '{"t": "dict", "v": [[[1], 2]]}', "[1"):
        with pytest.raises(WireError):
            decode(text)

    class Sneaky(int):
        pass

    with pytest.raises(WireError):
        encode_value([Sneaky(1)])


# --- leaving early ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "program", ["import sys\nsys.exit(0)\n", "exit()\n", "raise SystemExit\n", "quit(0)\n"]
)
def test_calling_exit_before_the_end_is_reported_as_exited(sandbox, program):
    result = sandbox.run(program + "assert False\n")
    assert not result.ok
    assert result.reason.startswith("exited: the program called exit(")


def test_os_exit_before_the_end_is_reported_as_exited_before_the_end(sandbox):
    result = sandbox.run("import os\nos._exit(0)\n", ADD_TEST, "add")
    assert (result.ok, result.reason) == (False, "exited before the end (exit code 0)")


# --- limits -----------------------------------------------------------------------------------


def test_an_infinite_loop_times_out_and_its_process_is_gone(sandbox):
    result = sandbox.run("import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass\n")
    assert (result.ok, result.reason) == (False, "timeout")
    if not NAMESPACES:  # with namespaces the pid printed is the namespace's own
        assert not is_running(int(result.stdout.split()[0]))


def test_a_cpu_bound_loop_is_reported_as_cpu_time():
    # the process's own CPU limit or the group's account of all its processes, whichever
    # ends it first (a busy machine decides the race): either is reported as cpu time
    result = Sandbox(Limits(cpu_seconds=1, timeout=10)).run("while True:\n    pass\n")
    assert not result.ok
    assert result.reason in ("cpu time", "cpu time: the sample's processes used more than "
                             "1 s together")  # fmt: skip


def test_a_huge_allocation_is_reported_as_memory(sandbox):
    result = sandbox.run("data = bytearray(8 << 30)\n")
    assert (result.ok, result.reason) == (False, "memory: MemoryError")


def test_printing_forever_is_stopped_by_the_output_limit_of_the_pipes():
    result = Sandbox(Limits(timeout=TIMEOUT, file_bytes=1 << 16)).run(
        "while True:\n    print('x' * 100)\n"
    )
    assert result.reason == "output: more than 65536 bytes on stdout and stderr"
    assert 0 < len(result.stdout) <= 20_000  # only the tail reaches the host


@needs_namespaces
def test_forking_is_limited_by_the_process_limit():
    program = "import os, signal\nwhile True:\n    if os.fork() == 0:\n        signal.pause()\n"
    result = Sandbox(Limits(timeout=5, processes=8)).run(program)
    assert result.reason == "error: BlockingIOError: [Errno 11] Resource temporarily unavailable"


# --- the view from inside ---------------------------------------------------------------------


@needs_namespaces
def test_inside_namespaces_only_tmp_is_writable_and_the_host_is_out_of_sight(sandbox):
    program = (
        "import os, socket\n"
        "open('/tmp/mine.txt', 'w').write('kept')\n"
        "print(open('mine.txt').read(), os.getcwd())\n"
        "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
        "print([os.path.exists(p) for p in ('/home', '/var', '/run', '/root/.ssh', '/sys')])\n"
        "print(len(socket.if_nameindex()), os.getuid())\n"
        "for path in ('/etc/cloneprobe-probe', '/var/tmp/x', '/dev/shm/x', '/root/x'):\n"
        "    try:\n"
        "        open(path, 'w')\n"
        "    except OSError as error:\n"
        "        print(error.errno in (2, 13, 30), end=' ')\n"
    )
    result = sandbox.run(program)
    lines = result.stdout.splitlines()
    assert result.reason == "passed", result
    assert lines[0] == "kept /tmp"
    assert lines[1] == "['1', '2']"  # the harness and the sample, nothing of the host
    assert lines[2] == "[False, False, False, False, False]"
    assert lines[3] == "1 0"  # the loopback only (down); root inside, no privilege outside
    assert lines[4].split() == ["True"] * 4


def test_each_run_gets_a_fresh_workspace(sandbox):
    sandbox.run("open('left-behind.txt', 'w').write('x')\n")
    result = sandbox.run("import os\nassert not os.path.exists('left-behind.txt')\n")
    assert (result.ok, result.reason) == (True, "passed")


def test_the_environment_is_clean_and_hashing_is_seeded(sandbox, monkeypatch):
    monkeypatch.setenv("CLONEPROBE_SECRET", "host-value")
    program = "import os\nprint(sorted(os.environ), hash('cloneprobe'))\n"
    first, second = sandbox.run(program), sandbox.run(program)
    seeded = subprocess.run(
        [sys.executable, "-c", "print(hash('cloneprobe'))"],
        env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=True,
    ).stdout.split()[0]  # fmt: skip
    assert first.stdout == second.stdout
    names, value = first.stdout.rsplit(" ", 1)
    assert "CLONEPROBE_SECRET" not in names
    assert value.strip() == seeded


def test_one_sandbox_serves_several_threads_at_once(sandbox):
    programs = [f"print({i})\n" if i % 2 else f"assert {i} == -1\n" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(sandbox.run, programs))
    for i, result in enumerate(results):
        expected = ("passed", f"{i}\n") if i % 2 else ("failed: AssertionError", "")
        assert (result.reason, result.stdout) == expected


@needs_namespaces
def test_the_tools_packages_are_not_importable_but_the_standard_library_is(sandbox):
    pytest.importorskip("numpy")
    program = (
        "import json, math, sqlite3, zlib, ctypes, decimal\n"
        "try:\n    import numpy\nexcept ImportError:\n    print('no numpy')\n"
        "try:\n    import cloneprobe\nexcept ImportError:\n    print('no cloneprobe')\n"
    )
    result = sandbox.run(program)
    assert (result.reason, result.stdout) == ("passed", "no numpy\nno cloneprobe\n")


@needs_namespaces
def test_without_namespaces_it_falls_back_to_the_guard_and_says_so_once():
    # a user namespace whose limit on nested user namespaces is 0: the probe's unshare fails
    script = Path(__file__).with_name("sandbox_fallback_probe.py")
    limited = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c",
         f"echo 0 > /proc/sys/user/max_user_namespaces && exec {sys.executable} {script}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert limited.returncode == 0, limited.stderr
    assert limited.stdout.splitlines() == ["guard passed 1", "guard passed 2"]
    warnings = [line for line in limited.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1
    assert "without kernel namespaces" in warnings[0] and "isolation=guard" in warnings[0]


def test_an_unknown_isolation_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="namespaces, guard"):
        Sandbox(isolation="chroot")


# --- the guard fallback -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "program, reason",
    [
        ("import os\nos.fork()\n", "refused: os.fork"),
        ("import subprocess\nsubprocess.run(['true'])\n", "refused: subprocess"),
        ("import socket\nsocket.create_connection(('127.0.0.1', 9))\n", "refused: network"),
        ("open('/etc/cloneprobe-probe', 'w')\n", "refused: writing /etc/cloneprobe-probe outside"),
    ],
    ids=["fork", "subprocess", "network", "write"],
)
def test_the_guard_fallback_refuses_honest_mistakes(program, reason):
    result = Sandbox(Limits(timeout=TIMEOUT), isolation="guard").run(program)
    assert result.isolation == "guard"
    assert result.reason.startswith(reason)


# --- pass@k's executions ----------------------------------------------------------------------


def test_executions_record_the_isolation_they_ran_under(tmp_path):
    benchmark = load_humaneval()
    tasks = benchmark.tasks[:3]
    samples = [(i, t.task_id, t.prompt + t.canonical_solution) for i, t in enumerate(tasks)]
    samples.append((3, tasks[0].task_id, tasks[0].prompt + "    return None\n"))
    with closing(sqlite3.connect(tmp_path / "store.sqlite")) as db:
        assert execute_samples(db, benchmark, samples, workers=2) == 4
        results = ExecutionStore(db).results()
        counts = ExecutionStore(db).isolations()
    assert [results[i].passed for i in range(4)] == [True, True, True, False]
    assert {r.isolation for r in results.values()} == {RECORDED}
    assert counts == {RECORDED: 4}


def test_a_store_from_before_isolation_was_recorded_is_migrated(tmp_path):
    with closing(sqlite3.connect(tmp_path / "old.sqlite")) as db:
        db.execute(
            "CREATE TABLE executions (sample_id INTEGER PRIMARY KEY, passed INTEGER NOT NULL,"
            " reason TEXT NOT NULL, seconds REAL)"
        )
        db.execute("INSERT INTO executions VALUES (7, 1, 'passed', 0.1)")
        db.commit()
        store = ExecutionStore(db)
        store.add([Execution(8, False, "timeout", 2.0, "namespaces")])
        assert store.results() == {
            7: Execution(7, True, "passed", 0.1, None),
            8: Execution(8, False, "timeout", 2.0, "namespaces"),
        }
        assert store.isolations() == {"unknown": 1, "namespaces": 1}


# --- HumanEval --------------------------------------------------------------------------------


@pytest.mark.slow(reason="a few seconds: all 164 canonical solutions in the sandbox")
def test_all_humaneval_canonical_solutions_pass_their_tests_in_the_sandbox():
    tasks = load_humaneval().tasks
    assert len(tasks) == 164
    sandbox = Sandbox()

    def run(task):
        program = task.prompt + task.canonical_solution
        return task.task_id, sandbox.run(program, task.test, task.entry_point, task.prompt)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(run, tasks))
    assert {task: r.reason for task, r in results.items() if not r.ok} == {}
    assert len(results) == 164


def test_a_wrong_humaneval_solution_fails_its_tests_in_the_sandbox(sandbox):
    task = load_humaneval().get("HumanEval/0")
    program = task.prompt + "    return False\n"
    result = sandbox.run(program, task.test, task.entry_point, task.prompt)
    assert (result.ok, result.reason) == (False, "failed: AssertionError")


# --- limits for the whole sample -----------------------------------------------------------


def test_without_a_control_group_the_per_process_fallback_is_recorded():
    ran = Sandbox(Limits(timeout=TIMEOUT), cgroups=False).run("print('x')\n")
    assert (ran.reason, ran.isolation) == ("passed", best_isolation() + "+rlimits")


@pytest.mark.skipif(find_limiter() is None, reason="no control group can be made here")
def test_a_control_group_limits_the_memory_of_all_the_samples_processes_together():
    """Two children of 100 MiB each under a 160 MiB limit: each is within its own address
    space limit, so only a limit on the whole sample ends one of them. The second starts once
    the first holds its memory, and the sample prints how many hold theirs at the end: the
    kernel ends the biggest process of the group, which is the first, after it said it held
    (counting the bytes alone, as this test once did, said 2 whenever a busy machine ran the
    children one after the other)."""
    program = (
        "import os, select, time\nr, w = os.pipe()\npids = []\nfor k in range(2):\n"
        "    pid = os.fork()\n    if pid == 0:\n        data = bytearray(100 << 20)\n"
        "        for i in range(0, len(data), 4096):\n            data[i] = 1\n"
        "        os.write(w, b'1')\n        select.select([], [], [], 60)\n        os._exit(0)\n"
        "    pids.append(pid)\n    if k == 0:\n        os.read(r, 1)\n"
        "def alive(p):\n    try:\n        return os.waitpid(p, os.WNOHANG)[0] == 0\n"
        "    except ChildProcessError:\n        return False\n"
        "held = 1\nwhile held < 2:\n"
        "    if not select.select([r], [], [], 0.2)[0]:\n"
        "        if not all(alive(p) for p in pids):\n            break\n"
        "        continue\n    held += len(os.read(r, 1))\n"
        "time.sleep(0.2)\nprint(sum(alive(p) for p in pids))\n"
    )
    limits = Limits(timeout=20, memory_bytes=160 << 20)
    grouped = Sandbox(limits).run(program)
    per_process = Sandbox(limits, cgroups=False).run(program)
    assert (per_process.reason, per_process.stdout) == ("passed", "2\n")
    assert grouped.isolation == best_isolation()  # no "+rlimits": a group was made
    assert grouped.stdout in ("0\n", "1\n") or grouped.reason.startswith("memory"), grouped


@pytest.mark.skipif(find_limiter() is None, reason="no control group can be made here")
def test_a_group_is_counted_on_only_once_its_memory_limit_was_seen_to_end_a_process():
    """The check find_limiter makes: a child touching four times the probe's limit is ended
    in a group limited to it, and not in one limited to far more (a limit that does not hold
    looks like this, and the sandbox then records +rlimits)."""
    limiter = find_limiter()
    for limit, ended in ((PROBE_LIMIT, True), (16 * PROBE_LIMIT, False)):
        group = limiter.create(limit, 16)
        try:
            assert _limit_holds(group) is ended, limit
        finally:
            group.remove()


def test_runs_go_on_after_the_fork_server_was_killed():
    from cloneprobe.execution.runs import shared_fork_server

    sandbox = Sandbox(Limits(timeout=TIMEOUT))
    assert sandbox.run(ADD_TEST.replace("def check", "def unused")).ok
    shared_fork_server().process.kill()
    shared_fork_server().process.wait()
    results = [sandbox.run("def add(a, b):\n    return a + b\n", ADD_TEST, "add") for _ in range(3)]
    assert [r.reason for r in results] == ["passed"] * 3


def test_the_samples_process_holds_only_its_streams_and_its_two_pipes_to_the_harness(sandbox):
    program = (
        "import os\nopen_fds = []\nfor fd in range(256):\n    try:\n        os.fstat(fd)\n"
        "    except OSError:\n        continue\n"
        "    open_fds.append(os.readlink(f'/proc/self/fd/{fd}').split(':')[0])\n"
        "print(open_fds)\n"
    )
    with ThreadPoolExecutor(max_workers=2) as pool:  # another run's pipes exist meanwhile
        results = list(pool.map(sandbox.run, [program] * 4))
    for result in results:
        assert result.stdout == "['/dev/null', 'pipe', 'pipe', 'pipe', 'pipe']\n", result
