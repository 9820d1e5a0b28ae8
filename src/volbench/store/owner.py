"""Who runs a run, and whether that process still lives.

A run is stored as ``running`` by the volbench process that records it. When that
process dies without finishing the run (SIGKILL, a crash, power loss), nothing
marks the run finished. So each run keeps its *owner* (host name, boot id, pid and
the process's start time) and a *heartbeat* the owner refreshes every
:data:`HEARTBEAT_S` seconds:

- on the owner's own host and boot, the owner lives while ``/proc/PID`` exists
  with the same start time (a pid reused by another process has another one;
  proc(5), ``/proc/PID/stat`` field 22, in clock ticks since boot) and has not
  ended (a zombie, state ``Z``, has);
- anywhere else (a shared PostgreSQL store), while its heartbeat is younger than
  :data:`STALE_S` seconds.

A ``running`` run whose owner is gone is shown as ``interrupted``.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

HEARTBEAT_S = 10.0
"""How often the owner of a running run refreshes its heartbeat, seconds."""
STALE_S = 60.0
"""A heartbeat older than this (seconds) means the owner on another host is gone."""

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Owner:
    """The process that runs a run."""

    host: str
    boot_id: str
    pid: int
    start_ticks: int

    def text(self) -> str:
        """As stored: ``HOST BOOT_ID PID START_TICKS``."""
        return f"{self.host} {self.boot_id} {self.pid} {self.start_ticks}"

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        """An owner as stored; None for runs stored before owners were recorded."""
        parts = (text or "").split(" ")
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]), int(parts[3]))

    def describe(self) -> str:
        """For messages: ``pid 1234 on HOST``."""
        return f"pid {self.pid} on {self.host}"


def _start_ticks(pid: int) -> int | None:
    """Field 22 of ``/proc/PID/stat`` (after the parenthesised name), or None (also for
    a process that has ended and waits for its parent to collect it: state ``Z``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if fields[:1] == ["Z"]:
        return None
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


@cache
def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def current() -> Owner:
    """This process as a run's owner."""
    pid = os.getpid()
    return Owner(socket.gethostname(), _boot_id(), pid, _start_ticks(pid) or 0)


def alive(owner: Owner | None, heartbeat_at: str | None, now: datetime | None = None) -> bool:
    """Whether the owner of a ``running`` run still lives (see the module docstring).

    A run without a recorded owner (stored by an older volbench) counts as alive:
    nothing says otherwise.
    """
    if owner is None:
        return True
    here = current()
    if owner.host == here.host and owner.boot_id == here.boot_id:
        return _start_ticks(owner.pid) == owner.start_ticks
    if heartbeat_at is None:
        return False
    beat = datetime.fromisoformat(heartbeat_at)
    return ((now or datetime.now(UTC)) - beat).total_seconds() < STALE_S
