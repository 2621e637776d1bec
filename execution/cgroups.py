"""Limits for a whole sample (every process it starts together): one control group per run.

Used by the tool's side of the sandbox (`sandbox.py`); the fork server's child writes itself
into its group's `cgroup.procs` before it forks anything (`fork_server.start_run`), so the
harness, the sample and everything the sample forks count against one memory limit (memfds
and tmpfs pages included: the kernel charges them to the group) and one process limit.

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
import os
import time
from dataclasses import dataclass
from pathlib import Path

_serial = itertools.count()


@dataclass(frozen=True)
class Cgroup:
    """One run's group(s): `folders` to join, `memory` the folder whose OOM count says whether
    the kernel killed a process for memory."""

    folders: tuple[Path, ...]
    memory: Path
    version: int

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
        name = f"cloneprobe-{os.getpid()}-{next(_serial)}"
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
                return Cgroup(folders, group, 2)
            memory, pids = folders
            _write(memory / "memory.limit_in_bytes", memory_bytes)
            _write(memory / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
            _write(pids / "pids.max", processes)
            return Cgroup(folders, memory, 1)
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
    parents = []
    for controller in ("memory", "pids"):
        for point, kind, options in mounts:
            if kind == "cgroup" and controller in options and controller in groups:
                parent = Path(point + groups[controller].rstrip("/"))
                if os.access(parent, os.W_OK) and (parent / "cgroup.procs").exists():
                    parents.append(parent)
                    break
    return CgroupLimiter(1, tuple(parents)) if len(parents) == 2 else None


@functools.cache
def find_limiter() -> CgroupLimiter | None:
    """The best way this machine offers to limit a whole sample, tried once (a group made and
    removed); None where there is none."""
    mounts, groups = _mounts(), _own_groups()
    for make in (_v2_limiter, _v1_limiter):
        limiter = make(mounts, groups)
        if limiter is None:
            continue
        try:
            limiter.create(1 << 30, 16).remove()
        except OSError:
            continue
        return limiter
    return None
