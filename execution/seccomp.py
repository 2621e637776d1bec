"""A seccomp filter of the sandbox's own: a small classic-BPF program, installed with prctl.

Runs only inside the sandbox's child (imported by `guard.py`), once the sandbox is set up and
before any untrusted code; the standard library only (`ctypes` for prctl). No binding of
libseccomp is installable for every interpreter the tool runs on, so the program is built here:
it checks the architecture first (a call of another ABI, such as x32 or a 32-bit compat call,
is refused with EPERM), then answers EPERM to every system call in `DENIED` and to `clone` with
a namespace flag, ENOSYS to `clone3` (whose flags sit in memory a filter cannot read; the C
library then falls back to `clone`), EAFNOSUPPORT to `socket` and `socketpair` of a family
other than Unix, IPv4, IPv6 and netlink (AF_VSOCK reaches the host of a virtual machine from
any network namespace), EPERM to any change of RLIMIT_CORE (`setrlimit`, `prlimit64` with new
limits: the sandbox's 1 is what keeps a crash from starting the host's core dump helper), and
allows the rest.
"""

import ctypes
import errno
import platform
import struct

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16
X32_SYSCALL_BIT = 0x40000000
RLIMIT_CORE = 4
CLONE_NAMESPACE_FLAGS = (
    0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
    | 0x00000080
)  # fmt: skip
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME."""

DENIED = (
    "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "bpf", "perf_event_open", "userfaultfd", "ptrace", "process_vm_readv",
    "process_vm_writev", "kexec_load", "kexec_file_load", "reboot", "mount", "umount2",
    "pivot_root", "chroot", "unshare", "setns", "mount_setattr", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "memfd_create", "memfd_secret", "init_module",
    "finit_module", "delete_module", "swapon", "swapoff", "acct", "syslog", "quotactl", "kcmp",
    "name_to_handle_at", "open_by_handle_at", "settimeofday", "clock_settime", "adjtimex",
    "vhangup", "inotify_init1", "fanotify_init", "pidfd_getfd",
)  # fmt: skip
"""Denied with EPERM: the keyring, io_uring, tracing and reading other processes, the
kernel's own controls, and every way to change mounts or namespaces once the sandbox is set
up (memfd_create too: memory a per-process limit would not count); inotify and fanotify
(unprivileged since Linux 5.13, with inode marks): either would show the sample every access
of the host's processes and of other samples to the files its root shares with them; and
`pidfd_getfd`, which would take a descriptor of the harness (its job, its verdict pipe) were
the harness ever dumpable again."""
DENIED_WHERE_PRESENT = ("inotify_init",)
"""Denied on the architectures that have them (x86_64's older calls)."""
SOCKET_FAMILIES = (1, 2, 10, 16)
"""AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK: the families `socket` and `socketpair` may
open (all of them confined to the sample's own network namespace); any other answers
EAFNOSUPPORT. AF_VSOCK above all is not: its ports are one space for the whole machine (a
virtual machine's, shared with its host), whatever network namespace a process is in."""


ARCHITECTURES = {
    "x86_64": {
        "audit_arch": 0xC000003E, "keyctl": 250, "add_key": 248, "request_key": 249,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "kexec_load": 246, "kexec_file_load": 320, "reboot": 169,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
        "setns": 308, "mount_setattr": 442, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "memfd_create": 319,
        "memfd_secret": 447, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "swapon": 167, "swapoff": 168, "acct": 163, "syslog": 103, "quotactl": 179,
        "kcmp": 312, "name_to_handle_at": 303, "open_by_handle_at": 304,
        "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "vhangup": 153,
        "clone": 56, "clone3": 435,
        "inotify_init1": 294, "inotify_init": 253, "fanotify_init": 300, "pidfd_getfd": 438,
        "socket": 41, "socketpair": 53, "setrlimit": 160, "prlimit64": 302,
    },
    "aarch64": {
        "audit_arch": 0xC00000B7, "keyctl": 219, "add_key": 217, "request_key": 218,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "kexec_load": 104, "kexec_file_load": 294, "reboot": 142,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97,
        "setns": 268, "mount_setattr": 442, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "memfd_create": 279,
        "memfd_secret": 447, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "swapon": 224, "swapoff": 225, "acct": 89, "syslog": 116, "quotactl": 60,
        "kcmp": 272, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "settimeofday": 170, "clock_settime": 112, "adjtimex": 171, "vhangup": 58,
        "clone": 220, "clone3": 435,
        "inotify_init1": 26, "fanotify_init": 262, "pidfd_getfd": 438, "socket": 198,
        "socketpair": 199, "setrlimit": 164, "prlimit64": 261,
    },
}  # fmt: skip


class SeccompError(OSError):
    """The filter could not be built or installed here (unknown architecture, old kernel)."""


def _statement(code, k, jt=0, jf=0):
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine=None):
    """The BPF program (bytes, 8 per instruction) for `machine` (this one by default)."""
    machine = machine or platform.machine()
    if machine not in ARCHITECTURES:
        raise SeccompError(
            errno.ENOSYS, f"no seccomp filter for the {machine} architecture (x86_64, aarch64)"
        )
    numbers = ARCHITECTURES[machine]
    denied = sorted({numbers[name] for name in (*DENIED, *DENIED_WHERE_PRESENT) if name in numbers})
    # (code, k, where to jump when true, when false): a label, or None for the next statement
    program = [(LD_W_ABS, OFFSET_ARCH, None, None), (JEQ_K, numbers["audit_arch"], None, "kill")]
    program.append((LD_W_ABS, OFFSET_NR, None, None))
    if machine == "x86_64":
        program.append((JGE_K, X32_SYSCALL_BIT, "eperm", None))
    program += [(JEQ_K, number, "eperm", None) for number in denied]
    program.append((JEQ_K, numbers["clone3"], "enosys", None))
    program += [(JEQ_K, numbers[name], "socket", None) for name in ("socket", "socketpair")]
    program.append((JEQ_K, numbers["setrlimit"], "setrlimit", None))
    program.append((JEQ_K, numbers["prlimit64"], "prlimit64", None))
    program.append((JEQ_K, numbers["clone"], None, "allow"))
    # clone: deny when any namespace flag is set
    program.append((LD_W_ABS, OFFSET_ARG0, None, None))
    program.append((JSET_K, CLONE_NAMESPACE_FLAGS, "eperm", "allow"))
    # setrlimit(RLIMIT_CORE, ...) and prlimit64(pid, RLIMIT_CORE, new, old) with a new value
    labels = {"setrlimit": len(program)}
    program.append((LD_W_ABS, OFFSET_ARG0, None, None))
    program.append((JEQ_K, RLIMIT_CORE, "eperm", "allow"))
    labels["prlimit64"] = len(program)
    program.append((LD_W_ABS, OFFSET_ARG0 + 8, None, None))
    program.append((JEQ_K, RLIMIT_CORE, None, "allow"))
    program.append((LD_W_ABS, OFFSET_ARG0 + 16, None, None))  # the new limits' address
    program.append((JEQ_K, 0, None, "eperm"))
    program.append((LD_W_ABS, OFFSET_ARG0 + 20, None, None))
    program.append((JEQ_K, 0, "allow", "eperm"))
    # socket and socketpair: only the families in SOCKET_FAMILIES
    labels["socket"] = len(program)
    program.append((LD_W_ABS, OFFSET_ARG0, None, None))
    program += [(JEQ_K, family, "allow", None) for family in SOCKET_FAMILIES]
    exits = [("eafnosupport", RET_ERRNO | errno.EAFNOSUPPORT), ("eperm", RET_ERRNO | errno.EPERM),
             ("enosys", RET_ERRNO | errno.ENOSYS), ("allow", RET_ALLOW),
             ("kill", RET_KILL_PROCESS)]  # fmt: skip
    for name, value in exits:
        labels[name] = len(program)
        program.append((RET_K, value, None, None))
    if len(program) > 255:
        raise SeccompError(errno.E2BIG, "the seccomp filter is too long for short jumps")

    def offset(label, index):
        return 0 if label is None else labels[label] - index - 1

    return b"".join(
        _statement(code, k, offset(true, index), offset(false, index))
        for index, (code, k, true, false) in enumerate(program)
    )


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_filter():
    """Install the filter in this process (inherited by every child, and never removable);
    sets no_new_privs first, as the kernel requires of an unprivileged process."""
    code = build_filter()
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    for option, args in (
        (PR_SET_NO_NEW_PRIVS, (1, 0, 0, 0)),
        (PR_SET_SECCOMP, (SECCOMP_MODE_FILTER, ctypes.addressof(program), 0, 0)),
    ):
        values = [ctypes.c_ulong(a) for a in args]
        if libc.prctl(option, *values) != 0:
            code = ctypes.get_errno()
            raise SeccompError(code, f"installing the seccomp filter: {errno.errorcode[code]}")
