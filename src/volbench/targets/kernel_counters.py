"""Kernel counters of a host: CPU ticks, a block device's counters, PSI and fio's
processes' times, read from ``/proc`` and ``/sys`` and parsed into typed readings
(the once-a-second samples of targets/sampler.py take their differences).

Sources of the file formats:

- ``/proc/stat``: proc(5). A ``cpuN`` line holds USER_HZ ticks of user, nice, system,
  idle, iowait, irq, softirq, steal, guest, guest_nice; guest time is already in
  user and nice, so the total is the sum of the first eight. Idle is idle + iowait
  (a CPU waiting for I/O could run something else); steal counts as busy (the
  hypervisor gave the time to someone else).
- ``/sys/block/DEV/stat``: the kernel's Documentation/block/stat.rst. Fields 1 and 5
  are reads and writes completed (after merges, so one request may be several of
  fio's I/Os, and one of fio's I/Os split into several), 3 and 7 sectors read and
  written (512 bytes each whatever the device's block size: bytes do not change with
  merges or splits), 9 ``in_flight`` (requests issued to the driver and
  not completed), 10 ``io_ticks`` (ms with at least one request in flight) and 11
  ``time_in_queue`` (ms x requests in flight). Busy share = delta io_ticks / elapsed.
- ``/sys/block/DEV/mq/``: one directory per hardware queue of a blk-mq device;
  bio-based devices (zram, dm without blk-mq) have none.
- ``/proc/pressure/{memory,io}``: the kernel's Documentation/accounting/psi.rst:
  ``some`` = share of time at least one task stalled on the resource, ``full`` = all
  non-idle tasks stalled at once; ``avg10`` is that share (%) over the last 10 s.
- fio's processes are this process's descendants, found through
  ``/proc/PID/task/TID/children`` (proc(5), CONFIG_PROC_CHILDREN). Their CPU time is
  fields 14 and 15 of ``/proc/PID/stat`` (utime + stime in USER_HZ ticks, every thread
  of the process, io_uring's kernel workers included, exited ones too); each thread's
  time on a CPU and time runnable but waiting for one are the first two fields of
  ``/proc/PID/task/TID/schedstat`` (ns, the kernel's
  Documentation/scheduler/sched-stats.rst, CONFIG_SCHED_INFO). fio's own usr/sys in
  its JSON leaves out the kernel workers io_uring hands blocking I/O to.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from volbench.targets.kernel_file import kernel_text

PROC = Path("/proc")
SYS = Path("/sys")
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
MAX_PROCESSES = 4096
"""Descendants read at most per sample (fio starts one process per job)."""


@dataclass(frozen=True)
class CpuTimes:
    """One CPU's cumulative ticks (USER_HZ): not idle, and all."""

    busy: int
    total: int


def parse_proc_stat(text: str) -> dict[int, CpuTimes]:
    """The ``cpuN`` lines of /proc/stat text, by CPU number (the ``cpu`` sum is left out)."""
    cpus: dict[int, CpuTimes] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        ticks = [int(v) for v in rest.split()[:8] if v.isdigit()]
        if len(ticks) < 5:
            continue
        total = sum(ticks)
        cpus[int(name[3:])] = CpuTimes(busy=total - ticks[3] - ticks[4], total=total)
    return cpus


def cpu_busy_pct(before: dict[int, CpuTimes], after: dict[int, CpuTimes]) -> tuple[float, ...]:
    """Each CPU's busy share (%) between two readings, by CPU number; a CPU missing
    from either reading (taken offline) is left out, one with no ticks reads 0."""
    shares = []
    for cpu in sorted(before.keys() & after.keys()):
        total = after[cpu].total - before[cpu].total
        busy = after[cpu].busy - before[cpu].busy
        shares.append(min(100.0, max(0.0, 100.0 * busy / total)) if total > 0 else 0.0)
    return tuple(shares)


@dataclass(frozen=True)
class DiskStat:
    """The counters of one reading of /sys/block/DEV/stat that the sampler uses."""

    reads: int
    writes: int
    in_flight: int
    io_ticks_ms: int
    time_in_queue_ms: int
    read_sectors: int | None = None
    write_sectors: int | None = None
    """Sectors of :data:`SECTOR_BYTES` read and written (None: not read)."""

    @property
    def completions(self) -> int:
        """Reads and writes completed (discards and flushes are not counted)."""
        return self.reads + self.writes


def parse_disk_stat(text: str) -> DiskStat | None:
    """A block device's stat text (11, 15 or 17 fields), or None when malformed."""
    fields = text.split()
    if len(fields) < 11 or not all(f.isdigit() for f in fields[:11]):
        return None
    v = [int(f) for f in fields[:11]]
    return DiskStat(
        reads=v[0],
        writes=v[4],
        in_flight=v[8],
        io_ticks_ms=v[9],
        time_in_queue_ms=v[10],
        read_sectors=v[2],
        write_sectors=v[6],
    )


def device_busy_pct(before: DiskStat, after: DiskStat, elapsed_s: float) -> float:
    """Share (%) of ``elapsed_s`` the device had a request in flight (capped at 100)."""
    ticks = after.io_ticks_ms - before.io_ticks_ms
    return min(100.0, max(0.0, ticks / (10.0 * elapsed_s))) if elapsed_s > 0 else 0.0


def completion_rate(before: DiskStat, after: DiskStat, elapsed_s: float) -> float:
    """Reads and writes completed per second between two readings."""
    done = after.completions - before.completions
    return max(0.0, done / elapsed_s) if elapsed_s > 0 else 0.0


SECTOR_BYTES = 512
"""The unit of the stat file's sector counts (stat.rst: "standard UNIX 512-byte sectors")."""


def byte_rates(before: DiskStat, after: DiskStat, elapsed_s: float) -> tuple[float, float] | None:
    """Bytes read and written per second between two readings (None: a reading without
    sector counts, or no time between them)."""
    if elapsed_s <= 0 or None in (
        before.read_sectors,
        after.read_sectors,
        before.write_sectors,
        after.write_sectors,
    ):
        return None
    read = (after.read_sectors or 0) - (before.read_sectors or 0)
    written = (after.write_sectors or 0) - (before.write_sectors or 0)
    return (
        max(0.0, read * SECTOR_BYTES / elapsed_s),
        max(0.0, written * SECTOR_BYTES / elapsed_s),
    )


def queue_length(before: DiskStat, after: DiskStat, elapsed_s: float) -> float:
    """Requests in flight on average between two readings: delta time_in_queue (ms x
    requests) / elapsed ms (iostat(1)'s ``aqu-sz``)."""
    weighted = after.time_in_queue_ms - before.time_in_queue_ms
    return max(0.0, weighted / (1000.0 * elapsed_s)) if elapsed_s > 0 else 0.0


def count_hw_queues(entries: Iterable[str]) -> int | None:
    """Hardware queues from the entry names of /sys/block/DEV/mq (None: not blk-mq)."""
    count = sum(1 for name in entries if name.isdigit())
    return count or None


def read_hw_queues(device: str, sys_root: Path = SYS) -> int | None:
    """Hardware queues of ``device`` (a whole disk's sysfs name), None when unknown."""
    try:
        return count_hw_queues(os.listdir(sys_root / "class" / "block" / device / "mq"))
    except OSError:
        return None


@dataclass(frozen=True)
class Pressure:
    """PSI avg10 of one resource, % of the last 10 s (``full`` is absent on old kernels)."""

    some_pct: float
    full_pct: float | None


def parse_pressure(text: str) -> Pressure | None:
    """/proc/pressure/RESOURCE text, or None when it has no ``some`` line."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        for item in rest.split():
            key, _, value = item.partition("=")
            if key == "avg10":
                with contextlib.suppress(ValueError):
                    found[kind] = float(value)
    if "some" not in found:
        return None
    return Pressure(found["some"], found.get("full"))


def disk_of(path: str, sys_root: Path = SYS) -> str | None:
    """The whole disk (sysfs name) that ``path`` is, or whose filesystem holds it:
    the node's own major:minor for a block device, the filesystem's ``st_dev`` for
    a file, through /sys/dev/block/MAJOR:MINOR, a partition resolved to its parent.
    None when there is none (tmpfs, overlayfs, NFS: major 0) or ``path`` is missing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    number = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    link = sys_root / "dev" / "block" / f"{os.major(number)}:{os.minor(number)}"
    try:
        entry = Path(os.path.realpath(link, strict=True))
    except OSError:
        return None
    return entry.parent.name if (entry / "partition").exists() else entry.name


def children(pid: int, proc_root: Path = PROC) -> list[int]:
    """The child processes of ``pid`` (of every one of its threads)."""
    found: list[int] = []
    folder = f"{proc_root}/{pid}/task"  # strings: a sample reads some 50 of these paths
    try:
        tasks = os.listdir(folder)
    except OSError:
        return found
    for tid in tasks:
        text = kernel_text(f"{folder}/{tid}/children")
        found += [int(v) for v in (text or "").split() if v.isdigit()]
    return found


def descendants(pid: int, proc_root: Path = PROC) -> list[int]:
    """Every process below ``pid`` (children, their children ...), at most
    :data:`MAX_PROCESSES` of them."""
    found: list[int] = []
    todo = children(pid, proc_root)
    while todo and len(found) < MAX_PROCESSES:
        child = todo.pop()
        found.append(child)
        todo += children(child, proc_root)
    return found


def parse_process_ticks(text: str) -> int | None:
    """utime + stime (USER_HZ ticks) from /proc/PID/stat text; None when malformed.
    The command name (field 2) may hold spaces and parentheses: fields are counted
    after its last ``)``."""
    fields = text[text.rfind(")") + 1 :].split()
    if len(fields) < 13 or not (fields[11].isdigit() and fields[12].isdigit()):
        return None
    return int(fields[11]) + int(fields[12])


def parse_schedstat(text: str) -> tuple[int, int] | None:
    """(ns on a CPU, ns waiting on a run queue) of a thread, from
    /proc/PID/task/TID/schedstat text."""
    fields = text.split()
    if len(fields) < 2 or not (fields[0].isdigit() and fields[1].isdigit()):
        return None
    return int(fields[0]), int(fields[1])


@dataclass(frozen=True)
class ProcessTimes:
    """One process's CPU ticks (every thread, exited ones too) and each live thread's
    (ns on a CPU, ns waiting for one)."""

    ticks: int
    threads: dict[int, tuple[int, int]]


def read_process(pid: int, proc_root: Path = PROC) -> ProcessTimes | None:
    """:class:`ProcessTimes` of ``pid`` now; None when it is gone."""
    folder = f"{proc_root}/{pid}"
    ticks = parse_process_ticks(kernel_text(f"{folder}/stat") or "")
    if ticks is None:
        return None
    threads = {}
    try:
        tasks = os.listdir(f"{folder}/task")
    except OSError:
        tasks = []
    for tid in tasks:
        found = parse_schedstat(kernel_text(f"{folder}/task/{tid}/schedstat") or "")
        if found is not None and tid.isdigit():
            threads[int(tid)] = found
    return ProcessTimes(ticks, threads)


def process_load(
    before: dict[int, ProcessTimes],
    after: dict[int, ProcessTimes],
    elapsed_s: float,
    ticks_per_s: int = TICKS_PER_S,
) -> tuple[float, float, float] | None:
    """(CPU cores used, busiest thread's share of one core (%), threads waiting for a
    CPU on average) of the processes of the second reading (one that started since
    the first counts from zero: all its time is in between); None when there are none.
    ``ticks_per_s``: USER_HZ of the host the readings are from."""
    if not after or elapsed_s <= 0:
        return None
    start = ProcessTimes(0, {})
    ticks = sum(max(0, t.ticks - before.get(p, start).ticks) for p, t in after.items())
    busiest = wait = 0.0
    for p, times in after.items():
        old = before.get(p, start).threads
        for tid, (run_ns, wait_ns) in times.threads.items():
            was = old.get(tid, (0, 0))
            busiest = max(busiest, (run_ns - was[0]) / 1e9)
            wait += max(0, wait_ns - was[1]) / 1e9
    share = min(100.0, 100.0 * busiest / elapsed_s)
    return ticks / ticks_per_s / elapsed_s, share, wait / elapsed_s
