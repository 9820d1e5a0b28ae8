"""A lab guest as recorded in its folder (``guests/NAME/guest.json``), and its qemu
process: found by the pid QEMU writes (``-pidfile``), and only ever signalled after
``/proc/PID/cmdline`` shows that it is a ``qemu-system-*`` started with this guest's
own pidfile (a pid reused by another process is left alone).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from volbench import records
from volbench.errors import UsageError
from volbench.lab.home import check_name, guest_dir, guests_dir, write_private
from volbench.lab.throttle import Limits

RECORD = "guest.json"
PIDFILE = "qemu.pid"
SERIAL = "serial.log"
QMP = "qmp.sock"
DISK = "disk.img"
DISK_CACHES = ("none", "writeback")
"""QEMU's cache modes a guest's disk takes (QEMU's documentation, "-drive ...
cache=cache": ``none`` is ``cache.direct=on``, ``writeback`` ``cache.direct=off``)."""


@dataclass(frozen=True)
class Lent:
    """A guest's own disk limits while a process holds others on it (``qos verify``
    sets the plan's, then none for the alpha fit): given back when that process ends,
    or by the next volbench that finds it gone (killed): ``holder`` is it, as
    :meth:`volbench.store.owner.Owner.text`."""

    limits: Limits
    holder: str


@dataclass(frozen=True)
class Guest:
    """One guest: its name, where fio's server (``fio_port``) and the shell channel
    (``shell_port``, :mod:`volbench.lab.shell`) are forwarded on this machine
    (``address``, a 127.0.0.X of its own), the accelerator it booted with (``kvm``
    or ``tcg``), its disk's limits, its disk image (``disk_bytes``), the kernel's
    release, seconds from qemu's start to fio's first answer, and qemu's pid."""

    name: str
    address: str
    fio_port: int
    shell_port: int
    accel: str
    limits: Limits
    disk: str
    disk_bytes: int
    kernel: str
    boot_seconds: float
    pid: int
    lent: Lent | None = None
    """Its own limits while a process holds others on it (None: ``limits`` are its own)."""
    disk_cache: str | None = None
    """QEMU's cache mode of its disk (:data:`DISK_CACHES`): ``none``, the image opened
    with O_DIRECT; ``writeback``, through this machine's page cache. None: a guest
    recorded by a volbench that did not say."""
    filesystem: str | None = None
    """The filesystem volbench made on its disk (:data:`volbench.lab.filesystem.FILESYSTEMS`),
    mounted in the guest at ``mount``; None: a raw disk."""
    mount: str | None = None
    """Where the guest mounted its disk's filesystem (None: a raw disk)."""
    memory_mib: int | None = None
    """The guest's memory, MiB (None: recorded by a volbench that did not say)."""

    @property
    def folder(self) -> Path:
        return guest_dir(self.name)

    @property
    def place(self) -> str:
        """The guest as a ``--hosts`` value."""
        return f"lab://{self.name}"


def save(guest: Guest) -> None:
    """Write ``guest.json`` in the guest's folder (its owner's alone)."""
    path = guest.folder / RECORD
    partial = path.with_suffix(".partial")
    write_private(partial, json.dumps(records.json_object(guest), indent=1))
    partial.replace(path)


def load(name: str) -> Guest:
    """The guest recorded as ``name``; UsageError when there is none."""
    path = guest_dir(name) / RECORD
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"no lab guest {name}: start it with `volbench lab up {name}`") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc} (`volbench lab down {name}`)") from None
    return records.structure(data, Guest, str(path))


def names() -> list[str]:
    """The names of every guest folder, booted or not, sorted."""
    root = guests_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _valid(p.name))


def _valid(name: str) -> bool:
    try:
        check_name(name)
    except UsageError:
        return False
    return True


def recorded_pid(folder: Path) -> int | None:
    """The pid in the folder's qemu pidfile (None: none, or not a number)."""
    try:
        return int((folder / PIDFILE).read_text().strip())
    except (OSError, ValueError):
        return None


def command_line(pid: int) -> list[str]:
    """A process's arguments (``/proc/PID/cmdline``); empty when it is gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def is_guest_qemu(arguments: list[str], folder: Path) -> bool:
    """Whether a command line is the qemu of the guest in ``folder``: a
    ``qemu-system-*`` program given ``-pidfile FOLDER/qemu.pid``."""
    if not arguments or not Path(arguments[0]).name.startswith("qemu-system-"):
        return False
    pidfile = str(folder / PIDFILE)
    return any(a == "-pidfile" and b == pidfile for a, b in itertools.pairwise(arguments))


def running_pid(folder: Path) -> int | None:
    """The pid of the guest's qemu when it runs (checked: :func:`is_guest_qemu`)."""
    pid = recorded_pid(folder)
    if pid is None or not is_guest_qemu(command_line(pid), folder):
        return None
    return pid


def stop(pid: int, folder: Path, wait_s: float = 5.0) -> None:
    """End the guest's qemu: SIGTERM, then SIGKILL after ``wait_s``; only while its
    command line is still that guest's qemu."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not is_guest_qemu(command_line(pid), folder):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)  # checked above: this guest's own qemu
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and is_guest_qemu(command_line(pid), folder):
            time.sleep(0.05)


def exists(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]
