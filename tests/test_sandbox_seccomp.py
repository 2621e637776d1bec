"""The sandbox's own seccomp filter (execution/seccomp.py): each denied system call answered
differently without the filter answers EPERM with it (so the filter, not a missing privilege,
refuses it), the architecture is checked, and ordinary work (threads, fork, subprocess) goes on.

The filter is never installed in the test process: a fresh interpreter installs it and probes
the calls before and after.
"""

from __future__ import annotations

import errno
import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from cloneprobe.execution import seccomp

SECCOMP_PATH = Path(seccomp.__file__)
PROBE = r"""
import ctypes, errno, json, os, sys, threading
sys.path.insert(0, sys.argv[1])
import seccomp
numbers = seccomp.ARCHITECTURES[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
PROBES = {  # arguments that fail harmlessly (or succeed harmlessly) without the filter
    "keyctl": (L(0x7FFF),), "add_key": (None, None, None, 0, L(0)),
    "request_key": (None, None, None, L(0)), "io_uring_setup": (L(0), None),
    "bpf": (L(-1), None, L(0)), "perf_event_open": (None, L(0), L(-1), L(-1), L(0)),
    "userfaultfd": (L(-1),), "ptrace": (L(-1), L(0), None, None),
    "process_vm_readv": (L(os.getpid()), None, L(0), None, L(0), L(0)),
    "kexec_load": (L(0), L(0), None, L(-1)), "reboot": (L(0), L(0), L(0), None),
    "mount": (None, None, None, L(0), None), "umount2": (b"/nonexistent-probe", L(0)),
    "pivot_root": (b"/nonexistent-probe", b"/nonexistent-probe"), "unshare": (L(0),),
    "setns": (L(-1), L(0)), "memfd_create": (b"probe", L(0)), "clone3": (None, L(0)),
    "clone": (L(0x10000000 | 17), None, None, None, None), "inotify_init1": (L(0),),
    "fanotify_init": (L(0x200), L(0)),  # FAN_REPORT_FID: allowed unprivileged since 5.13
    "pidfd_getfd": (L(-1), L(0), L(0)),
}
FAMILIES = {"unix": 1, "inet": 2, "inet6": 10, "netlink": 16, "packet": 17, "alg": 38,
            "vsock": 40}
def sockets():
    found = {}
    for name, family in FAMILIES.items():
        kind = 3 if name in ("netlink", "packet") else 5 if name == "alg" else 1
        result = libc.syscall(numbers["socket"], L(family), L(kind), L(0))
        found[name] = "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
    pair = (ctypes.c_int * 2)()
    for name, family in (("unix pair", 1), ("vsock pair", 40)):
        result = libc.syscall(numbers["socketpair"], L(family), L(1), L(0), pair)
        found[name] = "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
    return found
def probe():
    found = {}
    for name, args in PROBES.items():
        result = libc.syscall(numbers[name], *args)
        if result == 0 and name == "clone":
            os._exit(0)  # the child a clone without the filter made
        found[name] = "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
    x32_getpid = libc.syscall(L(0x40000000 | 39)) if os.uname().machine == "x86_64" else -1
    found["x32"] = "ok" if x32_getpid >= 0 else errno.errorcode[ctypes.get_errno()]
    return found
def core_limits():
    import resource
    limit = resource.getrlimit(resource.RLIMIT_CORE)
    lower = (ctypes.c_ulong * 2)(0, limit[1] & 0xFFFFFFFFFFFFFFFF)
    same = (ctypes.c_ulong * 2)(*resource.getrlimit(resource.RLIMIT_NOFILE))
    calls = {
        "set": lambda: libc.setrlimit(4, lower), "prlimit": lambda: libc.prlimit(0, 4, lower, None),
        "other limit": lambda: libc.setrlimit(7, same),  # RLIMIT_NOFILE
    }
    found = {"get": limit}
    for name, call in calls.items():
        found[name] = "ok" if call() == 0 else errno.errorcode[ctypes.get_errno()]
    found["prlimit read"] = resource.prlimit(0, resource.RLIMIT_CORE)
    return found
before, sockets_before = probe(), sockets()
seccomp.install_filter()
after, sockets_after, core_after = probe(), sockets(), core_limits()
worked = []
thread = threading.Thread(target=worked.append, args=("thread",))
thread.start(); thread.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
worked.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
import subprocess
worked.append(subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True,
                             text=True).stdout.strip())
print(json.dumps({"before": before, "after": after, "worked": worked,
                  "sockets": sockets_after, "sockets_before": sockets_before,
                  "core": core_after}))
"""


@pytest.fixture(scope="module")
def probed():
    if platform.machine() not in seccomp.ARCHITECTURES:
        pytest.skip(f"no filter for {platform.machine()}")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(SECCOMP_PATH.parent)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_each_denied_call_is_refused_by_the_filter_itself(probed):
    for name, answer in probed["after"].items():
        expected = {"clone3": "ENOSYS", "x32": "EPERM"}.get(name, "EPERM")
        assert answer == expected, (name, answer)
        # without the filter the same call answered otherwise: the filter decided
        assert probed["before"][name] != answer, (name, probed["before"][name])


def test_only_unix_ip_and_netlink_sockets_can_be_opened(probed):
    """Other families answer EAFNOSUPPORT, as if this kernel had none: AF_VSOCK's ports are
    shared by the whole (virtual) machine whatever the network namespace."""
    assert probed["sockets"] == {
        "unix": "ok", "inet": "ok", "inet6": "ok", "netlink": "ok", "packet": "EAFNOSUPPORT",
        "alg": "EAFNOSUPPORT", "vsock": "EAFNOSUPPORT", "unix pair": "ok",
        "vsock pair": "EAFNOSUPPORT",
    }  # fmt: skip
    # the filter refused them, not the kernel: without it, packet opens as root, vsock where
    # the machine has a transport, alg where the kernel has its crypto interface
    before = probed["sockets_before"]
    assert any(before[name] == "ok" for name in ("packet", "alg", "vsock")), before


def test_the_core_dump_limit_cannot_be_changed_but_is_read_and_others_set(probed):
    """A limit of 0 does not stop a core_pattern that pipes to a helper; the sandbox's 1 does,
    so no process of the sample may lower it (soft or hard, setrlimit or prlimit)."""
    core = probed["core"]
    limit = core["get"]
    assert (core["set"], core["prlimit"], core["other limit"]) == ("EPERM", "EPERM", "ok")
    assert core["prlimit read"] == limit


def test_threads_fork_and_subprocesses_work_under_the_filter(probed):
    assert probed["worked"] == ["thread", 7, "42"]


def test_the_filter_checks_the_architecture_first():
    for machine, numbers in seccomp.ARCHITECTURES.items():
        program = seccomp.build_filter(machine)
        first = [program[i : i + 8] for i in range(0, 16, 8)]
        assert first[0] == seccomp._statement(seccomp.LD_W_ABS, seccomp.OFFSET_ARCH)
        assert int.from_bytes(first[1][4:], sys.byteorder) == numbers["audit_arch"]
        assert program[-8:] == seccomp._statement(seccomp.RET_K, seccomp.RET_KILL_PROCESS)
    assert seccomp.build_filter("x86_64") != seccomp.build_filter("aarch64")


def test_an_unknown_architecture_is_refused_with_the_known_ones():
    with pytest.raises(seccomp.SeccompError, match=r"riscv64.*x86_64, aarch64") as raised:
        seccomp.build_filter("riscv64")
    assert raised.value.errno == errno.ENOSYS


def test_both_tables_name_every_denied_call():
    for numbers in seccomp.ARCHITECTURES.values():
        assert set(seccomp.DENIED) <= set(numbers)
