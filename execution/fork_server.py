"""The sandbox's fork server: started once per tool process (`guard.py --serve`), it forks a
child per run and never reads a job.

Imported by `guard.py` only; the standard library only.
"""

import contextlib
import json
import os
import resource
import selectors
import signal
import socket


def serve(channel, run):
    """The fork server: started once per sandbox, it reads no job, ever. For each request (the
    run's limits and control group, and its stdin, stdout, stderr, verdict and status pipes)
    it forks a child that takes those pipes, limits itself and runs `main` as a fresh guard
    would; it writes the child's pid on the status pipe, then its exit status once reaped.
    It ends when the tool closes the channel."""
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    statuses = {}
    selector = selectors.DefaultSelector()
    selector.register(channel, selectors.EVENT_READ)
    selector.register(wakeup_read, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fd == wakeup_read:
                os.read(wakeup_read, 4096)
                reap(statuses)
                continue
            try:
                message, fds, _, _ = socket.recv_fds(channel, 1 << 16, 5)
            except InterruptedError:
                continue
            if not message:
                os._exit(0)
            if len(fds) != 5:
                for fd in fds:
                    os.close(fd)
                continue
            request = json.loads(message)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (channel.fileno(), wakeup_read, wakeup_write):
                    os.close(fd)
                start_run(request, fds, run)
            for fd in fds[:4]:
                os.close(fd)
            statuses[pid] = fds[4]
            with contextlib.suppress(OSError):
                os.write(fds[4], f"pid {pid}\n".encode())
        reap(statuses)


def reap(statuses):
    while statuses:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = statuses.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            os.close(fd)


def start_run(request, fds, run):
    """In the server's child: its own session, the run's limits and control group, the pipes
    as stdin, stdout and stderr; then `run` (the guard's main) with the verdict on fd 3."""
    try:
        os.setsid()
        os.chdir(request["cwd"])
        for name, value in request["rlimits"].items():
            resource.setrlimit(getattr(resource, name), tuple(value))
        for procs in request["cgroup"]:
            with open(procs, "w") as file:
                file.write("0")
        request.clear()  # nothing of the host's paths stays for the sample to find
        for target, fd in enumerate(fds[:4]):
            os.dup2(fd, target)
        # nothing else the server holds (other runs' pipes among them) stays open here
        os.closerange(4, 1 << 16)
        run(3)
    except BaseException as error:
        with contextlib.suppress(BaseException):
            os.write(2, f"sandbox: starting the run failed: {error!r}\n".encode())
    os._exit(71)
