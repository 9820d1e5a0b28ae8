"""Tracing one block device through the kernel's tracepoints, in a tracefs instance
of volbench's own.

Linux ``Documentation/trace/ftrace.rst`` ("Instances"): a folder made under
``instances/`` is a trace buffer with its own events, filters, clock and on/off
switch, so enabling ``block_rq_issue``/``block_rq_complete`` there, filtered to
one device (``dev == (MAJOR << 20) | MINOR``, the kernel's ``dev_t``), changes
nothing of the host's other tracing. volbench never writes the top-level files.
When no tracefs is mounted, one is mounted on a private folder for the capture
and unmounted after it (a second mount shows the same tracing, nothing else
changes).

The device is never opened: its number comes from ``stat`` (a read-only or busy
device traces the same). ``trace_pipe`` is read by a thread into a scratch file
as the kernel formats it (parsing later keeps the traced workload's CPU free); a
full buffer drops events, which ``trace_pipe`` reports (``[LOST N EVENTS]``) and
the capture counts. :meth:`TraceInstance.close` always disables the events, closes
the pipe and removes the instance, also after an error or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from volbench.errors import TargetError

EVENTS = ("block_rq_issue", "block_rq_complete")
BUFFER_KB = 16384
"""Per-CPU buffer of the instance: 16 MiB holds ~160k events between two reads."""
INSTANCE_PREFIX = "volbench-"
_KNOWN_MOUNTS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")


def device_number(device: str) -> tuple[int, int]:
    """(major, minor) of block device ``device``, from ``stat`` (never opened)."""
    try:
        info = os.stat(device)
    except OSError as exc:
        raise TargetError(f"cannot trace {device}: {exc.strerror or exc}") from None
    if not stat.S_ISBLK(info.st_mode):
        raise TargetError(f"cannot trace {device}: not a block device (give /dev/NAME)")
    return os.major(info.st_rdev), os.minor(info.st_rdev)


@dataclass(frozen=True)
class Traced:
    """Where a device's requests show in the block tracepoints: a whole disk under its
    own number; a partition's on its disk (requests reach the driver there, sectors
    counted from the disk's start), from ``start_sector`` for ``sectors``."""

    major: int
    minor: int
    start_sector: int = 0
    sectors: int | None = None

    def filter(self) -> str:
        """The events' filter (ftrace.rst, "Event filtering")."""
        found = f"dev == {(self.major << 20) | self.minor}"
        if self.sectors is not None:
            end = self.start_sector + self.sectors
            found += f" && sector >= {self.start_sector} && sector < {end}"
        return found


def traced_device(device: str) -> Traced:
    """Where ``device``'s requests show (sysfs ``/sys/dev/block/MAJ:MIN``; not opened)."""
    major, minor = device_number(device)
    sysfs = Path(f"/sys/dev/block/{major}:{minor}")
    try:
        if not (sysfs / "partition").exists():
            return Traced(major, minor)
        disk = (sysfs.resolve().parent / "dev").read_text().strip()
        start, size = (int((sysfs / name).read_text()) for name in ("start", "size"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"cannot trace {device}: its partition in sysfs: {exc}") from None
    disk_major, _, disk_minor = disk.partition(":")
    return Traced(int(disk_major), int(disk_minor), start, size)


def mounted_tracefs() -> Path | None:
    """Where tracefs is mounted (``/proc/mounts``), or None."""
    try:
        mounts = Path("/proc/mounts").read_text()
    except OSError:
        return None
    found = []
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "tracefs":
            found.append(parts[1].replace("\\040", " "))
    for known in _KNOWN_MOUNTS:
        if known in found:
            return Path(known)
    return Path(found[0]) if found else None


class TraceInstance:
    """A tracefs instance tracing one device's requests into a scratch file."""

    def __init__(self, device: str, output: Path, buffer_kb: int = BUFFER_KB) -> None:
        self.device = device
        self.traced = traced_device(device)
        self.output = output
        self.buffer_kb = buffer_kb
        self.root: Path | None = None
        self.path: Path | None = None
        self._private: Path | None = None
        self._fd: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._error: OSError | None = None
        self.bytes_read = 0
        self.leftover: Path | None = None
        """An instance the kernel would not let go of (it says so; rmdir it later)."""

    def __enter__(self) -> TraceInstance:
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def open(self) -> None:
        """Mount tracefs if needed, make the instance, filter and enable the events,
        start reading; TargetError with what to do when the kernel refuses."""
        self.root = mounted_tracefs() or self._mount()
        instances = self.root / "instances"
        if not (self.root / "events" / "block" / EVENTS[0]).exists():
            raise TargetError(f"this kernel has no block tracepoints in {self.root}/events/block")
        self.path = instances / f"{INSTANCE_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            self.path.mkdir()
        except OSError as exc:
            self.path = None
            raise TargetError(
                f"cannot make a trace instance in {instances}: {exc.strerror or exc}"
            ) from None
        self._write("buffer_size_kb", str(self.buffer_kb))
        with contextlib.suppress(OSError):  # a clock all CPUs share; else the default
            self._write("trace_clock", "mono")
        for event in EVENTS:
            self._write(f"events/block/{event}/filter", self.traced.filter())
        self._fd = os.open(self.path / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._read, name="trace-pipe", daemon=True)
        self._thread.start()
        for event in EVENTS:
            self._write(f"events/block/{event}/enable", "1")
        self._write("tracing_on", "1")

    def _mount(self) -> Path:
        where = Path(tempfile.mkdtemp(prefix="volbench-tracefs-"))
        done = subprocess.run(
            ["mount", "-t", "tracefs", "nodev", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            where.rmdir()
            raise TargetError(
                "no tracefs is mounted and mounting one failed"
                f" ({done.stderr.strip() or done.returncode}): run as root"
            )
        self._private = where
        return where

    def _write(self, name: str, value: str) -> None:
        assert self.path is not None
        (self.path / name).write_text(value)

    def _read(self) -> None:
        assert self._fd is not None
        try:
            with self.output.open("wb") as out:
                while True:
                    ready, _, _ = select.select([self._fd], [], [], 0.2)
                    chunk = b""
                    if ready:
                        with contextlib.suppress(BlockingIOError):
                            chunk = os.read(self._fd, 1 << 20)
                    if chunk:
                        out.write(chunk)
                        self.bytes_read += len(chunk)
                    elif self._stop.is_set():
                        return
        except OSError as exc:
            self._error = exc

    def stop(self) -> None:
        """Stop tracing and read what the buffer still holds."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                self._write("tracing_on", "0")
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise TargetError(f"reading the trace failed: {self._error}")

    def close(self) -> None:
        """Disable the events, close the pipe, remove the instance and a private mount
        (each step also when an earlier one failed)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self.path is not None:
            for event in EVENTS:
                with contextlib.suppress(OSError):
                    self._write(f"events/block/{event}/enable", "0")
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.path is not None:
            for _ in range(50):  # the kernel lets go of a pipe's readers shortly after
                try:
                    self.path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                self.leftover = self.path
            self.path = None
        if self._private is not None:
            subprocess.run(["umount", str(self._private)], capture_output=True, check=False)
            with contextlib.suppress(OSError):
                self._private.rmdir()
            self._private = None
