"""Confinement by the kernel for the sandbox's child: namespaces, the root, keyring, privileges.

Runs only inside the child process the sandbox starts (imported by `guard.py`), before any
untrusted code; the standard library only (`ctypes` for the system calls Python 3.11 lacks:
unshare, mount, mount_setattr, pivot_root, keyctl, capset, prctl).

`enter_namespaces` gives the process new user, mount, network, PID and IPC namespaces (the
user namespace's root is the calling user, or `nobody` when that is root) and forks: the
caller's copy waits for the new namespace's first process (PID 1) and exits with its status,
and PID 1 carries on. Its death kills everything the program started.
`build_root` (run while the namespace's capabilities are held) puts together a fresh tmpfs
root of read-only binds (the standard library, the shared libraries it loads; site-packages
covered empty), a /dev of four devices, a size-limited tmpfs at /tmp and a /proc of the PID
namespace, then pivots into it and detaches the host's root. `join_new_session_keyring` leaves
the host's keyring behind. `drop_privileges` leaves the process without any capability, as the
namespace's root (which is `nobody` outside when the tool runs as root).
"""

import ctypes
import errno
import os
import platform
import signal

import seccomp  # beside this file: the child runs with this folder on its path

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 1
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 28, 38, 47, 4
SECUREBITS_ROOT_IS_ORDINARY = 0x2F
"""NOROOT, NO_SETUID_FIXUP and KEEP_CAPS, each locked: uid 0 gains nothing from exec."""
LINUX_CAPABILITY_VERSION_3 = 0x20080522

WORKSPACE = "/tmp"
STAGING = "/tmp"
"""Where the new root is put together (covering the host's /tmp in this mount namespace only)."""
DEVICES = ("null", "zero", "random", "urandom")
PACKAGE_FOLDERS = ("site-packages", "dist-packages")
MNT_DETACH, KEYCTL_JOIN_SESSION_KEYRING = 2, 1

_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(OSError):
    """A step of the confinement failed (the kernel or the machine does not allow it)."""


def syscall_number(name: str) -> int:
    """`name`'s system call number on this machine (seccomp's table, the one list of them)."""
    table = seccomp.ARCHITECTURES.get(platform.machine())
    if table is None:
        raise ConfinementError(errno.ENOSYS, f"no system call table for {platform.machine()}; "
                               f"the sandbox knows {', '.join(seccomp.ARCHITECTURES)}")
    return table[name]


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
        syscall_number("mount_setattr"), AT_FDCWD, path.encode(), AT_RECURSIVE, ctypes.byref(attr),
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


def build_root(workspace_bytes, folders, files):
    """Make a fresh root and move into it: an empty read-only tmpfs holding read-only binds of
    `folders` and `files` (the interpreter's standard library and the shared libraries it
    loads, each at its own path, with any symbolic link on the way recreated), their
    `site-packages` and `dist-packages` covered empty, a read-only /dev of null, zero, random
    and urandom only, a size-limited tmpfs at /tmp (the only writable place) and a /proc of this PID
    namespace. The host's root is detached: nothing else of it can be reached."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    sources = {}
    for path in (*folders, *files):
        real = os.path.realpath(path)
        if real not in sources and os.path.exists(real):
            covered = [n for n in PACKAGE_FOLDERS if os.path.isdir(f"{real}/{n}")]
            links = _links_on(path)
            handle = os.open(real, os.O_PATH)  # before /tmp is covered
            sources[real] = (links, handle, os.path.isdir(real), covered)
    devices = {name: os.open(f"/dev/{name}", os.O_PATH) for name in DEVICES}
    # opened as the caller (root outside may read /root); from here on as the namespace's root
    _become_namespace_root()  # new files need an owner the namespace can name
    root = STAGING
    _mount("root", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=755")
    for real, (links, handle, is_folder, covered) in sources.items():
        for link, target in links:
            if not os.path.lexists(root + link):
                os.makedirs(os.path.dirname(root + link), mode=0o755, exist_ok=True)
                os.symlink(target, root + link)
        _bind_read_only(handle, root + real, is_folder)
        for name in covered:
            _mount("hidden", f"{root}{real}/{name}", "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY,
                   "size=4k")  # fmt: skip
    os.makedirs(root + "/dev", mode=0o755)
    _mount("dev", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=4k,nr_inodes=16,mode=755")
    for name, handle in devices.items():
        _bind_read_only(handle, f"{root}/dev/{name}", False, read_only=False)
    # the devices stay writable (they are mounts of their own); /dev itself does not: /tmp
    # is the only place a sample can make a file
    _mount(None, root + "/dev", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    # exist_ok: a tool whose environment lives under /tmp (a venv there) has its links there
    os.makedirs(root + WORKSPACE, mode=0o755, exist_ok=True)
    _mount(
        "workspace", root + WORKSPACE, "tmpfs", MS_NOSUID | MS_NODEV,
        f"size={workspace_bytes},nr_inodes=4096,mode=1777",
    )  # fmt: skip
    os.makedirs(root + "/proc", mode=0o555)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(root)
    _check(_libc.syscall(syscall_number("pivot_root"), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detaching the host's root")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(WORKSPACE)


def _links_on(path):
    """(link, its target) for each symbolic link on `path` (such as /lib -> usr/lib)."""
    links, current = [], "/"
    for part in path.strip("/").split("/"):
        current = os.path.join(current, part)
        if os.path.islink(current):
            links.append((current, os.readlink(current)))
            current = os.path.realpath(current)
    return links


def _bind_read_only(handle, target, is_folder, read_only=True):
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if is_folder:
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.exists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(f"/proc/self/fd/{handle}", target, None, MS_BIND | MS_REC)
    os.close(handle)
    if read_only:
        _make_read_only(target)


def join_new_session_keyring():
    """A new, empty session keyring for this process and its children: no key of the host's
    session (the tool's, its user's) is reachable, and nothing added reaches the host."""
    number = syscall_number("keyctl")
    _libc.syscall.restype = ctypes.c_long
    if _libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        code = ctypes.get_errno()
        raise ConfinementError(code, f"a new session keyring: {os.strerror(code)}")


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
