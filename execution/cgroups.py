"""Limits for a whole sample (every process it starts together): one control group per run.

Used by the tool's side of the sandbox (`sandbox.py`); the fork server's child writes itself
into its group's `cgroup.procs` before it forks anything (`fork_server.start_run`), so the
harness, the sample and everything the sample forks count against one memory limit (memfds
and tmpfs pages included: the kernel charges them to the group) and one process limit, and
their CPU time is counted together (v2's `cpu.stat`, or v1's `cpuacct.usage` where that
hierarchy is writable), which the tool reads during the run to end a sample over its budget.

Where: cgroup v2 when the tool's own group has the memory and pids controllers delegated to
its children (or is the root of the hierarchy, as root); otherwise cgroup v1's memory and pids
hierarchies when they are writable (as root on a machine with v1 controllers). Where neither
is possible, `find_limiter` says None and the sandbox falls back to per-process rlimits,
named "rlimits" in what it records (see docs/sandbox.md for what that does not cover).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_serial = itertools.count()
_token = secrets.token_hex(4)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cgroup:
    """One run's group(s): `folders` to join, `memory` the folder whose OOM count says whether
    the kernel killed a process for memory."""

    folders: tuple[Path, ...]
    memory: Path
    version: int
    cpu: Path | None = None
    """The file counting the CPU time of the group's processes together (v2: `cpu.stat`, v1:
    `cpuacct.usage`); None where no group can count it (v1 without a writable cpuacct)."""

    def cpu_seconds(self) -> float | None:
        """CPU seconds the group's processes have used together, dead ones included (None: not
        counted here, or unreadable)."""
        if self.cpu is None:
            return None
        try:
            text = self.cpu.read_text()
        except OSError:
            return None
        if self.version == 1:
            return int(text) / 1e9 if text.strip().isdigit() else None
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec" and value.strip().isdigit():
                return int(value) / 1e6
        return None

    def out_of_memory(self) -> bool:
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self.memory / name).read_text()
        except OSError:
            return False
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(counts.get("oom_kill", 0)) > 0

    def try_remove(self) -> bool:
        """Remove the group if its processes are gone (True), else leave it (False)."""
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                _kill_members(folder)
                return False
        return True

    def remove(self) -> None:
        """Kill whatever is left in the group and remove it."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                (folder / "cgroup.kill").write_text("1")
            for attempt in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    _kill_members(folder)
                    time.sleep(0.002 * (attempt + 1))


def _kill_members(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)


@dataclass(frozen=True)
class CgroupLimiter:
    """Makes a group per run under `parents` (one per hierarchy)."""

    version: int
    parents: tuple[Path, ...]

    @property
    def name(self) -> str:
        return f"cgroup v{self.version}"

    def create(self, memory_bytes: int, processes: int) -> Cgroup:
        # a random part: a group left by a process killed earlier with the same pid, or a
        # second copy of this module in the process, never holds the name
        name = f"cloneprobe-{os.getpid()}-{_token}-{next(_serial)}"
        folders = tuple(parent / name for parent in self.parents)
        made = []
        try:
            for folder in folders:
                folder.mkdir()
                made.append(folder)
            if self.version == 2:
                (group,) = folders
                _write(group / "memory.max", memory_bytes)
                _write(group / "memory.swap.max", 0, optional=True)
                _write(group / "pids.max", processes)
                return Cgroup(folders, group, 2, group / "cpu.stat")
            # hierarchies may be mounted together: each file in whichever folder has it
            memory = next(f for f in folders if (f / "memory.limit_in_bytes").exists())
            pids = next(f for f in folders if (f / "pids.max").exists())
            cpu = next((f / "cpuacct.usage" for f in folders if (f / "cpuacct.usage").exists()),
                       None)  # fmt: skip
            _write(memory / "memory.limit_in_bytes", memory_bytes)
            _write(memory / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
            _write(pids / "pids.max", processes)
            return Cgroup(folders, memory, 1, cpu)
        except BaseException:  # no half-made group left on the host (empty: rmdir takes it)
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's group path."""
    groups = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                groups[controller] = path
    return groups


def _v2_limiter(mounts, groups) -> CgroupLimiter | None:
    if "" not in groups:
        return None
    for point, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        parent = Path(point + groups[""].rstrip("/"))
        try:
            available = set((parent / "cgroup.controllers").read_text().split())
            delegated = set((parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        if not {"memory", "pids"} <= available or not os.access(parent, os.W_OK):
            continue
        if not {"memory", "pids"} <= delegated:
            if groups[""] != "/":  # a group holding processes cannot delegate (v2's rule)
                continue
            try:
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
            except OSError:
                continue
        return CgroupLimiter(2, (parent,))
    return None


def _v1_limiter(mounts, groups) -> CgroupLimiter | None:
    """The memory and pids hierarchies (both needed), and cpuacct's where it is writable (the
    CPU time of the whole sample; without it, CPU is limited per process only)."""
    parents = {}
    for controller in ("memory", "pids", "cpuacct"):
        for point, kind, options in mounts:
            if kind == "cgroup" and controller in options and controller in groups:
                parent = Path(point + groups[controller].rstrip("/"))
                if os.access(parent, os.W_OK) and (parent / "cgroup.procs").exists():
                    parents[controller] = parent
                    break
    if "memory" not in parents or "pids" not in parents:
        return None
    return CgroupLimiter(1, tuple(dict.fromkeys(parents.values())))  # one folder a hierarchy


PROBE_LIMIT = 32 << 20
"""The memory limit of the group `find_limiter` tries, and four times it is what its child
touches: a limit that holds ends the child well before."""


@functools.cache
def find_limiter() -> CgroupLimiter | None:
    """The best way this machine offers to limit a whole sample, tried once: a group made,
    a child put in it and seen ended by its memory limit, the group removed. None where there
    is none (a group whose limit did not hold is not counted on)."""
    mounts, groups = _mounts(), _own_groups()
    for make in (_v2_limiter, _v1_limiter):
        limiter = make(mounts, groups)
        if limiter is None:
            continue
        try:
            group = limiter.create(PROBE_LIMIT, 16)
        except OSError:
            continue
        try:
            held = _limit_holds(group)
        finally:
            group.remove()
        if held:
            return limiter
        logger.warning(
            "%s: a process in a group with a %d MiB memory limit touched %d MiB and was not "
            "ended, so the sandbox does not count on control groups here.",
            limiter.name, PROBE_LIMIT >> 20, (4 * PROBE_LIMIT) >> 20,
        )
    return None


def _limit_holds(group: Cgroup) -> bool:
    """Whether a child in `group` that touches four times the group's limit is ended."""
    probe = Path(__file__).with_name("cgroup_probe.py")
    procs = [str(folder / "cgroup.procs") for folder in group.folders]
    try:
        child = subprocess.run(
            [sys.executable, "-I", "-S", str(probe), str(4 * PROBE_LIMIT), *procs],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return child.returncode != 0 and (child.returncode < 0 or group.out_of_memory())
