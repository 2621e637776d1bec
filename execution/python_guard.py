"""The Python-level guard: the fallback where the kernel's namespaces are unavailable.

Imported by `guard.py` inside the sample's process only, before the sample runs, and only when
the sandbox runs with isolation "guard". It patches the interpreter: no forking, spawning,
signalling, deleting, writing outside the working directory or opening sockets, no `ctypes`.
A program with full control of its interpreter can undo any patch (re-importing `ctypes`
after deleting its `sys.modules` entry, for one), so this is a speed bump, not a wall: it
keeps honest mistakes from touching the host, not a hostile sample. The verdict does not
depend on it (see `guard.py`).
"""

import builtins
import io
import os
import posix
import sys

REFUSED_OS_CALLS = (
    "fork", "forkpty", "system", "popen", "kill", "killpg", "remove", "unlink", "rmdir",
    "removedirs", "rename", "renames", "replace", "truncate", "chmod", "chown", "execv",
    "execve", "execl", "execlp", "execvp", "execvpe", "spawnl", "spawnv", "spawnve", "spawnlp",
    "spawnvp", "posix_spawn", "posix_spawnp", "setuid", "setgid", "setsid",
)  # fmt: skip
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def refuse(what):
    def refused(*args, **kwargs):
        raise PermissionError("refused by the sandbox: " + what)

    return refused


def guard_writes(root):
    """open, io.FileIO and os.open refuse writing outside `root`."""

    def check_path(file):
        if isinstance(file, int):
            return
        path = os.path.realpath(os.path.join(root, os.fspath(file)))
        if not path.startswith(root + os.sep):
            raise PermissionError(
                f"refused by the sandbox: writing {file} outside the work directory"
            )

    raw_open, raw_os_open, raw_fileio = builtins.open, posix.open, io.FileIO

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            check_path(file)
        return raw_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        if flags & WRITE_FLAGS:
            check_path(path)
        return raw_os_open(path, flags, *args, **kwargs)

    class GuardedFileIO(raw_fileio):
        def __init__(self, file, mode="r", *args, **kwargs):
            if any(flag in mode for flag in "wax+"):
                check_path(file)
            super().__init__(file, mode, *args, **kwargs)

    import _io

    builtins.open = io.open = _io.open = guarded_open
    os.open = posix.open = guarded_os_open
    io.FileIO = _io.FileIO = GuardedFileIO


def guard_network():
    """New sockets are refused; wrapping an existing descriptor (a socketpair, which asyncio's
    event loop uses and which reaches no network) is allowed."""
    import _socket
    import socket

    raw_socket, py_socket = _socket.socket, socket.socket

    class RefusedSocket(raw_socket):
        def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
            if fileno is None:
                raise PermissionError("refused by the sandbox: network")
            raw_socket.__init__(self, family, type, proto, fileno)

    class RefusedPySocket(py_socket):
        def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
            if fileno is None:
                raise PermissionError("refused by the sandbox: network")
            py_socket.__init__(self, family, type, proto, fileno)

    _socket.socket = RefusedSocket
    socket.socket = RefusedPySocket
    socket.create_connection = refuse("network")


def guard_processes():
    """Forking, spawning, signalling and deleting refused. subprocess, multiprocessing and
    shutil all end in these calls, so they need no patching of their own (and importing them
    would slow every run down)."""
    for name in REFUSED_OS_CALLS:
        for module in (os, posix):
            if hasattr(module, name):
                setattr(module, name, refuse("os." + name))
    import _posixsubprocess

    _posixsubprocess.fork_exec = refuse("subprocess")
    sys.modules["ctypes"] = None  # no way around the guard through libc


def install_python_guard():
    """Patch the running interpreter (the fallback where namespaces are unavailable)."""
    guard_writes(os.getcwd())
    guard_network()
    guard_processes()
