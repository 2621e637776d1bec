"""Whether the process that started a run is still alive: its pid and start time on the same
host (a reused pid has another start time), else a heartbeat that is recent enough."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

STALE_AFTER = 600.0
"""Seconds without a heartbeat after which a run on another host counts as interrupted."""


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or
    None if there is no such process (or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass(frozen=True)
class Owner:
    """Who runs a run: pid, its start time, and the host."""

    pid: int
    started: str | None
    host: str

    @classmethod
    def this_process(cls) -> Owner:
        return cls(os.getpid(), process_start(os.getpid()), host_name())


def host_name() -> str:
    import socket  # here: the CLI imports this module at start-up

    return socket.gethostname()


def is_alive(pid: int | None, started: str | None, host: str | None,
             heartbeat: float | None, now: float) -> bool:  # fmt: skip
    """Whether a run's owner still runs (a run without an owner, from an older store, is not)."""
    if pid is None:
        return False
    if host == host_name():
        if Path("/proc/self/stat").exists():
            return started is not None and process_start(pid) == started
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return heartbeat is not None and now - heartbeat < STALE_AFTER
