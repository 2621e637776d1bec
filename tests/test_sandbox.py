"""The sandbox against hand-made hostile programs: each is contained and reported with the
right reason, and the host (its files, its listening sockets, its process, its cwd and
environment) is left untouched.

Every hostile program runs only through `Sandbox.run`, never in the test process. Files the
programs try to reach live in the test's `tmp_path`, given to them as absolute paths.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.execution import Limits, Sandbox
from cloneprobe.execution import program_with_tests as judged_program

TIMEOUT = 2.0
MARGIN = 1.5
"""Seconds allowed past the wall-clock timeout for killing and reaping."""


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(Limits(timeout=TIMEOUT))


@pytest.fixture
def listener():
    """A real TCP socket listening on 127.0.0.1 (port chosen by the OS), non-blocking so that
    `accept` tells at once whether any connection arrived."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def connection_arrived(server: socket.socket) -> bool:
    time.sleep(0.1)  # let a connection that is on its way land in the backlog
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def is_running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for its parent to reap it is not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return not fields or fields[0] not in ("Z", "X")


def gone_soon(pid: int, seconds: float = 2.0) -> bool:
    """Whether `pid` stops running within `seconds` (SIGKILL is delivered asynchronously)."""
    deadline = time.monotonic() + seconds
    while is_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill_if_running(pid: int) -> None:
    if pid > 1 and is_running(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# --- well-behaved programs --------------------------------------------------------------------


def test_a_program_that_runs_to_the_end_passes_with_its_output(sandbox):
    result = sandbox.run("print('hello')\nassert 1 + 1 == 2\n")
    assert (result.ok, result.reason) == (True, "passed")
    assert result.stdout == "hello\n"
    assert result.seconds < TIMEOUT


def test_a_failing_assertion_is_reported_as_failed_with_its_message(sandbox):
    result = sandbox.run("assert 1 == 2, 'one is not two'\n")
    assert not result.ok
    assert result.reason == "failed: AssertionError one is not two"


def test_an_exception_is_reported_as_an_error_with_its_type(sandbox):
    result = sandbox.run("print('before')\n{}['missing']\n")
    assert not result.ok
    assert result.reason == "error: KeyError: 'missing'"
    assert result.stdout == "before\n"


def test_writing_inside_the_work_directory_is_allowed(sandbox):
    program = (
        "import os, pathlib\n"
        "with open('notes.txt', 'w') as f:\n"
        "    f.write('kept')\n"
        "pathlib.Path('sub').mkdir()\n"
        "pathlib.Path('sub/more.txt').write_text('also')\n"
        "print(open('notes.txt').read(), open('sub/more.txt').read())\n"
    )
    result = sandbox.run(program)
    assert (result.ok, result.reason) == (True, "passed")
    assert result.stdout == "kept also\n"


def test_each_run_gets_a_fresh_work_directory(sandbox):
    sandbox.run("open('left-behind.txt', 'w').write('x')\n")
    result = sandbox.run("import os\nassert not os.path.exists('left-behind.txt')\n")
    assert (result.ok, result.reason) == (True, "passed")


# --- time, CPU, memory, output ----------------------------------------------------------------


def test_an_infinite_loop_times_out_and_its_process_is_gone(sandbox):
    started = time.monotonic()
    result = sandbox.run("import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass\n")
    elapsed = time.monotonic() - started
    assert (result.ok, result.reason) == (False, "timeout")
    assert TIMEOUT <= elapsed < TIMEOUT + MARGIN
    assert TIMEOUT <= result.seconds < TIMEOUT + MARGIN
    pid = int(result.stdout.split()[0])
    assert not is_running(pid)
    with pytest.raises(ProcessLookupError):  # nothing is left in its process group
        os.killpg(pid, 0)


def test_a_timeout_kills_the_children_left_in_the_programs_process_group(sandbox):
    program = (
        "import os, time\n"
        "try:\n"
        "    import posix\n"
        "    child = posix.fork()\n"
        "except PermissionError:\n"
        "    child = -1\n"
        "if child == 0:\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(os.getpid(), child, flush=True)\n"
        "time.sleep(60)\n"
    )
    result = sandbox.run(program)
    parent, child = (int(word) for word in result.stdout.split())
    try:
        assert result.reason == "timeout"
        assert not is_running(parent)
        assert child == -1 or gone_soon(child)
    finally:
        kill_if_running(child)


def test_a_cpu_bound_loop_is_stopped_by_the_cpu_limit_before_the_wall_timeout():
    result = Sandbox(Limits(cpu_seconds=1, timeout=5)).run("while True:\n    pass\n")
    assert not result.ok
    assert result.reason == "cpu time" or result.reason.startswith("killed by signal")
    assert result.seconds < 4


def test_a_cpu_bound_loop_is_reported_as_cpu_time():
    result = Sandbox(Limits(cpu_seconds=1, timeout=5)).run("while True:\n    pass\n")
    assert result.reason == "cpu time"


def test_a_huge_allocation_is_reported_as_memory(sandbox):
    result = sandbox.run("data = bytearray(8 << 30)\n")
    assert not result.ok
    assert result.reason.startswith("memory")


def test_printing_forever_is_bounded_by_the_file_size_limit(sandbox):
    started = time.monotonic()
    result = sandbox.run("while True:\n    print('x' * 100)\n")
    assert time.monotonic() - started < TIMEOUT  # stopped by the limit, not by the timeout
    assert not result.ok
    assert "File too large" in result.reason
    assert 0 < len(result.stdout) <= 20_000  # only the tail reaches the host


# --- leaving early ----------------------------------------------------------------------------


def test_os_exit_before_the_end_is_reported_as_exited_before_the_end(sandbox):
    result = sandbox.run("import os\nos._exit(0)\nassert False\n")
    assert not result.ok
    assert result.reason.startswith("exited before the end")


@pytest.mark.parametrize(
    "program", ["import sys\nsys.exit(0)\n", "exit()\n", "raise SystemExit\n", "quit(0)\n"]
)
def test_calling_exit_before_the_end_is_reported_as_exited(sandbox, program):
    result = sandbox.run(program + "assert False\n")
    assert not result.ok
    assert result.reason.startswith("exited")


# --- processes --------------------------------------------------------------------------------


def test_a_fork_bomb_is_refused(sandbox):
    result = sandbox.run("import os\nwhile True:\n    os.fork()\n")
    assert not result.ok
    assert result.reason == "refused: os.fork"


@pytest.mark.parametrize(
    "call",
    [
        "import subprocess\nsubprocess.run(['touch', {marker!r}])",
        "import subprocess\nsubprocess.check_output('touch ' + {marker!r}, shell=True)",
        "import os\nos.system('touch ' + {marker!r})",
        "import os\nos.popen('touch ' + {marker!r}).read()",
        "import os\nos.execv('/usr/bin/touch', ['touch', {marker!r}])",
        "import os\nos.posix_spawn('/usr/bin/touch', ['touch', {marker!r}], {{}})",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
    ],
    ids=["subprocess.run", "shell", "os.system", "os.popen", "os.execv", "posix_spawn", "mp"],
)
def test_starting_another_program_is_refused(sandbox, tmp_path, call):
    marker = tmp_path / "marker"
    result = sandbox.run(call.format(marker=str(marker)) + "\n")
    assert not result.ok
    assert result.reason.startswith("refused")
    assert not marker.exists()


def test_forking_through_the_posix_module_is_refused(sandbox):
    program = "import posix\nchild = posix.fork()\nif child == 0:\n    posix._exit(0)\n"
    result = sandbox.run(program + "posix.waitpid(child, 0)\n")
    assert result.reason.startswith("refused")


def test_no_process_started_by_the_program_outlives_the_run(sandbox):
    program = (
        "import os, time\n"
        "import posix\n"
        "child = posix.fork()\n"
        "if child == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(30)\n"
        "    os._exit(0)\n"
        "print(child, flush=True)\n"
    )
    result = sandbox.run(program)
    child = int(result.stdout.split()[0]) if result.stdout.strip() else -1
    try:
        time.sleep(0.2)
        assert child == -1 or gone_soon(child)
    finally:
        kill_if_running(child)


# --- files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "write",
    [
        "open({target!r}, 'w').write('escaped')",
        "open({target!r}, 'a').write('escaped')",
        "open({target!r}, 'x').write('escaped')",
        "import pathlib\npathlib.Path({target!r}).write_text('escaped')",
        "import io\nio.open({target!r}, 'wb').write(b'escaped')",
    ],
    ids=["w", "a", "x", "pathlib", "io.open"],
)
def test_writing_outside_the_work_directory_is_refused(sandbox, tmp_path, write):
    target = tmp_path / "escaped.txt"
    result = sandbox.run(write.format(target=str(target)) + "\n")
    assert not result.ok
    assert result.reason.startswith("refused: writing")
    assert not target.exists()


def test_writing_to_the_parent_of_the_work_directory_by_a_relative_path_is_refused(sandbox):
    name = f"cloneprobe-escape-{secrets.token_hex(8)}.txt"
    target = Path(tempfile.gettempdir()) / name  # the work directory's parent
    try:
        result = sandbox.run(f"open('../{name}', 'w').write('escaped')\n")
        assert result.reason.startswith("refused: writing")
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_writing_through_a_symlink_that_leaves_the_work_directory_is_refused(sandbox, tmp_path):
    program = f"import os\nos.symlink({str(tmp_path)!r}, 'out')\nopen('out/escaped.txt', 'w')\n"
    result = sandbox.run(program)
    assert result.reason.startswith("refused: writing")
    assert not (tmp_path / "escaped.txt").exists()


@pytest.mark.parametrize(
    "write",
    [
        "import os\nfd = os.open({target!r}, os.O_WRONLY | os.O_CREAT)\nos.write(fd, b'x')",
        "import io\nio.FileIO({target!r}, 'w').write(b'escaped')",
    ],
    ids=["os.open", "io.FileIO"],
)
def test_writing_outside_the_work_directory_by_low_level_calls_is_refused(sandbox, tmp_path, write):
    target = tmp_path / "escaped.txt"
    result = sandbox.run(write.format(target=str(target)) + "\n")
    assert not target.exists()
    assert result.reason.startswith("refused")


@pytest.mark.parametrize(
    "delete",
    [
        "import os\nos.remove({victim!r})",
        "import os\nos.unlink({victim!r})",
        "import pathlib\npathlib.Path({victim!r}).unlink()",
        "import os\nos.rename({victim!r}, {victim!r} + '.moved')",
        "import shutil\nshutil.rmtree({folder!r})",
        "import shutil\nshutil.move({victim!r}, 'here.txt')",
        "import os\nos.truncate({victim!r}, 0)",
    ],
    ids=["remove", "unlink", "pathlib", "rename", "rmtree", "move", "truncate"],
)
def test_deleting_or_clobbering_files_is_refused(sandbox, tmp_path, delete):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    result = sandbox.run(delete.format(victim=str(victim), folder=str(tmp_path)) + "\n")
    assert not result.ok
    assert result.reason.startswith("refused")
    assert victim.read_text() == "precious"


def test_deleting_a_file_in_the_work_directory_is_refused_too(sandbox):
    result = sandbox.run("import os\nopen('mine.txt', 'w').close()\nos.remove('mine.txt')\n")
    assert result.reason == "refused: os.remove"


def test_deleting_a_file_through_the_posix_module_is_refused(sandbox, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    result = sandbox.run(f"import posix\nposix.unlink({str(victim)!r})\n")
    assert victim.exists()
    assert result.reason.startswith("refused")


# --- network ----------------------------------------------------------------------------------


@pytest.mark.parametrize("isolate", [None, False], ids=["default", "no-namespace"])
@pytest.mark.parametrize(
    "connect",
    [
        "import socket\ns = socket.socket()\ns.connect(('127.0.0.1', {port}))",
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)",
    ],
    ids=["socket", "create_connection"],
)
def test_connecting_to_a_local_listening_socket_is_refused(listener, isolate, connect):
    port = listener.getsockname()[1]
    result = Sandbox(Limits(timeout=TIMEOUT), isolate_network=isolate).run(
        connect.format(port=port) + "\n"
    )
    assert not result.ok
    assert result.reason == "refused: network"
    assert not connection_arrived(listener)


def test_a_low_level_socket_cannot_reach_the_network(sandbox, listener):
    port = listener.getsockname()[1]
    program = (
        f"import _socket\ns = _socket.socket()\ns.settimeout(1)\ns.connect(('127.0.0.1', {port}))\n"
    )
    if not sandbox.isolate_network:
        pytest.skip("no network namespace here (the guard-only case is the xfail test below)")
    result = sandbox.run(program)
    assert not result.ok
    assert result.reason.startswith(("error: OSError", "refused: network"))
    assert not connection_arrived(listener)


def test_a_low_level_socket_is_refused_even_without_a_network_namespace(listener):
    port = listener.getsockname()[1]
    program = (
        f"import _socket\ns = _socket.socket()\ns.settimeout(1)\ns.connect(('127.0.0.1', {port}))\n"
    )
    result = Sandbox(Limits(timeout=TIMEOUT), isolate_network=False).run(program)
    assert not connection_arrived(listener)
    assert not result.ok


@pytest.mark.parametrize(
    "program",
    [
        "import ssl\n",
        "import asyncio\nasync def f():\n    return 3\nassert asyncio.run(f()) == 3\n",
        "import urllib.request\n",
    ],
    ids=["ssl", "asyncio", "urllib.request"],
)
def test_importing_standard_modules_built_on_sockets_is_not_an_error(sandbox, program):
    result = sandbox.run(program)
    assert (result.ok, result.reason) == (True, "passed")


# --- the verdict ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ending, reason",
    [("assert False, 'wrong'", "failed: AssertionError wrong"), ("import os\nos._exit(0)", None)],
    ids=["then-fails", "then-exits"],
)
def test_a_fake_verdict_line_on_stderr_does_not_make_the_program_pass(sandbox, ending, reason):
    fake = secrets.token_hex(16)  # the same shape as the sandbox's nonce, but not it
    program = (
        "import sys, json\n"
        f"sys.stderr.write('\\n{fake} ' + json.dumps(['passed', '']) + '\\n')\n"
        "sys.stderr.flush()\n"
        f"{ending}\n"
    )
    result = sandbox.run(program)
    assert not result.ok
    if reason:
        assert result.reason == reason
    else:
        assert result.reason.startswith("exited before the end")


@pytest.mark.parametrize(
    "nonce", ["sys.argv[1]", "sys.modules['__main__']._NONCE"], ids=["argv", "main-module"]
)
def test_the_verdict_cannot_be_forged_with_the_nonce_found_in_the_process(sandbox, nonce):
    program = (
        "import sys, os, json\n"
        f"sys.stderr.write('\\n' + {nonce} + ' ' + json.dumps(['passed', '']) + '\\n')\n"
        "sys.stderr.flush()\n"
        "os._exit(0)\n"
    )
    result = sandbox.run(program)
    assert not result.ok


# --- the host ---------------------------------------------------------------------------------


def test_the_host_process_cwd_and_environment_are_unharmed(sandbox, monkeypatch):
    monkeypatch.setenv("CLONEPROBE_SENTINEL", "host-value")
    cwd, environment = os.getcwd(), dict(os.environ)
    program = (
        "import os\n"
        "print(repr(os.environ.get('CLONEPROBE_SENTINEL')), flush=True)\n"
        "os.chdir('/')\n"
        "os.environ['CLONEPROBE_SENTINEL'] = 'changed'\n"
    )
    result = sandbox.run(program)
    assert result.stdout == "None\n"  # the host's environment is not handed to the program
    assert result.reason == "passed"  # the program's own environment is its own business
    assert os.getcwd() == cwd
    assert dict(os.environ) == environment
    assert os.environ["CLONEPROBE_SENTINEL"] == "host-value"


def test_one_sandbox_serves_several_threads_at_once(sandbox):
    programs = [f"print({i})\n" if i % 2 else f"assert {i} == -1\n" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(sandbox.run, programs))
    for i, result in enumerate(results):
        if i % 2:
            assert (result.reason, result.stdout) == ("passed", f"{i}\n")
        else:
            assert result.reason == "failed: AssertionError"


def test_a_correct_program_using_numpy_passes(sandbox):
    pytest.importorskip("numpy")
    result = sandbox.run("import numpy as np\nassert int(np.array([1, 2]).sum()) == 3\n")
    assert (result.ok, result.reason) == (True, "passed")


# --- HumanEval --------------------------------------------------------------------------------


@pytest.mark.slow
def test_all_humaneval_canonical_solutions_pass_their_tests_in_the_sandbox():
    tasks = load_humaneval().tasks
    assert len(tasks) == 164
    sandbox = Sandbox()

    def run(task):
        program = judged_program(task.prompt + task.canonical_solution, task.test, task.entry_point)
        return task.task_id, sandbox.run(program)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(run, tasks))
    failed = {task: r.reason for task, r in results.items() if not r.ok}
    assert failed == {}
    assert len(results) == 164


def test_a_wrong_humaneval_solution_fails_its_tests_in_the_sandbox(sandbox):
    task = load_humaneval().get("HumanEval/0")
    result = sandbox.run(
        judged_program(task.prompt + "    return False\n", task.test, "has_close_elements")
    )
    assert not result.ok
    assert result.reason.startswith("failed: AssertionError")
