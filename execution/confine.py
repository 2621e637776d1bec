"""Confinement by the kernel for the sandbox's child: namespaces, mounts and privileges.

Runs only inside the child process the sandbox starts (imported by `guard.py`), before any
untrusted code; the standard library only (`ctypes` for the system calls Python 3.11 lacks:
unshare, mount, mount_setattr, capset, prctl).

`enter_namespaces` gives the process new user, mount, network, PID and IPC namespaces (the
user namespace's root is the calling user, or `nobody` when that is root) and forks:
the caller's copy waits for the new namespace's first process (PID 1) and exits with its
status, and PID 1 carries on. Its death kills everything the program started.
`seal_filesystem` (run while the namespace's capabilities are held) makes every mount
read-only, puts a private writable tmpfs on /tmp (the only writable place), hides /var/tmp,
/dev/shm, /run, /root and /home under empty read-only tmpfs (mounting back read-only only the
folders the interpreter itself lives in) and mounts a /proc that shows only the namespace's
processes. `drop_privileges` leaves the process without any
capability, as the namespace's root (which is `nobody` outside when the tool runs as root).
"""

import ctypes
import errno
import os
import signal

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 28, 38, 47, 4
SECUREBITS_ROOT_IS_ORDINARY = 0x2F
"""NOROOT, NO_SETUID_FIXUP and KEEP_CAPS, each locked: uid 0 gains nothing from exec."""
LINUX_CAPABILITY_VERSION_3 = 0x20080522

HIDDEN_FOLDERS = ("/var/tmp", "/dev/shm", "/run", "/root", "/home")
WORKSPACE = "/tmp"

_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(OSError):
    """A step of the confinement failed (the kernel or the machine does not allow it)."""


def _check(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise ConfinementError(code, f"{what}: {os.strerror(code)}")


def _mount(source, target, fstype, flags, data=None):
    encode = lambda text: None if text is None else text.encode()  # noqa: E731
    result = _libc.mount(
        encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)
    )
    _check(result, f"mount {target}")


class _MountAttr(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clear", "propagation", "userns")]


def _make_read_only(path):
    """Every mount at and below `path` read-only, in one call (mount_setattr, Linux 5.12)."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    result = _libc.syscall(
        SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), AT_RECURSIVE, ctypes.byref(attr),
        ctypes.sizeof(attr),
    )  # fmt: skip
    _check(result, f"read-only {path}")


def _prctl(option, value, what):
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), what)


def enter_namespaces(sandbox_uid):
    """New user, mount, network, PID and IPC namespaces; returns in the namespace's PID 1.
    The user namespace maps its root to the calling user, or, when that is root, to
    `sandbox_uid` (so the sample counts against its own process limit, not root's)."""
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        _unshare_mapped_by_parent(flags, sandbox_uid)
    else:
        _check(_libc.unshare(flags), "unshare")
        maps = (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1"))
        for name, text in maps:
            with open(f"/proc/self/{name}", "w") as file:
                file.write(text)
    child = os.fork()
    if child:
        _wait_and_exit_like(child)
    # Killed with the outer process; were that to die before this line, PID 1 still shares
    # its process group, which the sandbox kills whole.
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, "parent-death signal")


def _unshare_mapped_by_parent(flags, sandbox_uid):
    """As root: a child unshares and this process, still root outside, writes its maps (only
    a privileged process outside may map another user); returns in the child."""
    ready_read, ready_write = os.pipe()
    go_read, go_write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_read)
        os.close(go_write)
        try:
            _check(_libc.unshare(flags), "unshare")
        except ConfinementError as error:
            os.write(2, f"sandbox: {error}\n".encode())
            os._exit(71)
        os.write(ready_write, b"1")
        if os.read(go_read, 1) != b"1":
            os._exit(71)
        os.close(ready_write)
        os.close(go_read)
        return
    os.close(ready_write)
    os.close(go_read)
    if os.read(ready_read, 1) == b"1":
        try:
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{child}/{name}", "w") as file:
                    file.write(f"0 {sandbox_uid} 1")
            os.write(go_write, b"1")
        except OSError as error:
            os.write(2, f"sandbox: mapping the sandbox user: {error}\n".encode())
    os.close(go_write)
    _wait_and_exit_like(child)


def _wait_and_exit_like(child):
    """The outer process: wait for PID 1 and end the same way (it holds nothing else)."""
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(70)
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


def seal_filesystem(workspace_bytes, keep_visible):
    """Read-only everything, a private tmpfs at /tmp, the hidden folders empty, a fresh /proc.
    `keep_visible`: folders (the interpreter's) mounted back read-only where a hidden folder
    covers them."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    kept = _folders_to_mount_back(keep_visible)
    handles = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in kept}
    _become_namespace_root()  # new files need an owner the namespace can name
    _make_read_only("/")
    for folder in HIDDEN_FOLDERS:
        if os.path.isdir(folder) and not os.path.islink(folder):
            _mount("hidden", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    for path, handle in handles.items():
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{handle}", path, None, MS_BIND | MS_REC)
        os.close(handle)
    for folder in HIDDEN_FOLDERS:
        if os.path.ismount(folder):
            _make_read_only(folder)
    _mount(
        "workspace", WORKSPACE, "tmpfs", MS_NOSUID | MS_NODEV,
        f"size={workspace_bytes},nr_inodes=4096,mode=1777",
    )  # fmt: skip
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except ConfinementError:  # a /proc showing the host's processes must not stay visible
        _mount("hidden", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k")
    os.chdir(WORKSPACE)


def _folders_to_mount_back(paths):
    """The real paths of `paths` that lie under a hidden folder, outermost only."""
    hidden = tuple(folder + os.sep for folder in HIDDEN_FOLDERS)
    found = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)}, key=len)
    kept = []
    for path in found:
        if path.startswith(hidden) and not any(path.startswith(k + os.sep) for k in kept):
            kept.append(path)
    return kept


def drop_privileges(become_namespace_root=False):
    """No capability left, no way to gain one by exec. `become_namespace_root`: first take the
    user namespace's root (the sandbox user) as every uid and gid, leaving root's own."""
    if become_namespace_root:
        _become_namespace_root()
    _prctl(PR_SET_SECUREBITS, SECUREBITS_ROOT_IS_ORDINARY, "securebits")
    with open("/proc/sys/kernel/cap_last_cap") as file:
        last = int(file.read())
    for capability in range(last + 1):
        _prctl(PR_CAPBSET_DROP, capability, "bounding set")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, "ambient capabilities")
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    _check(_libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
    _prctl(PR_SET_NO_NEW_PRIVS, 1, "no new privileges")


def _become_namespace_root():
    """As root outside, the process is nobody inside until it takes the namespace's uid 0
    (the sandbox user outside), keeping the namespace's capabilities."""
    if os.getuid() != 0:
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)


def forbid_inspection():
    """Other processes of the same user may not trace this one or open its /proc files (its
    file descriptors included)."""
    try:
        _prctl(PR_SET_DUMPABLE, 0, "dumpable")
    except ConfinementError as error:
        if error.errno != errno.EINVAL:
            raise
