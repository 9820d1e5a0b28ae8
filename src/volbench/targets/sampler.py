"""Once-a-second samples of the host and the target's block device, to tell apart
what limited a test (host CPU, queue, rate limiter, device).

Each sample costs four small file reads: ``/proc/stat``, ``/sys/class/block/DEV/stat``
and, where the kernel has PSI, ``/proc/pressure/memory`` and ``/proc/pressure/io``.
Rates are differences between two readings divided by the clock time between them
(:class:`Reading`, :func:`sample_between`: the same for another host's readings,
targets/remote_sampler.py).

Sources of the file formats:

- ``/proc/stat``: proc(5). A ``cpuN`` line holds USER_HZ ticks of user, nice, system,
  idle, iowait, irq, softirq, steal, guest, guest_nice; guest time is already in
  user and nice, so the total is the sum of the first eight. Idle is idle + iowait
  (a CPU waiting for I/O could run something else); steal counts as busy (the
  hypervisor gave the time to someone else).
- ``/sys/block/DEV/stat``: the kernel's Documentation/block/stat.rst. Fields 1 and 5
  are reads and writes completed, 9 ``in_flight`` (requests issued to the driver and
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
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from volbench.model import HostSample

PROC = Path("/proc")
SYS = Path("/sys")
INTERVAL_S = 1.0
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
MAX_PROCESSES = 4096
"""Descendants read at most per sample (fio starts one process per job)."""


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


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
        reads=v[0], writes=v[4], in_flight=v[8], io_ticks_ms=v[9], time_in_queue_ms=v[10]
    )


def device_busy_pct(before: DiskStat, after: DiskStat, elapsed_s: float) -> float:
    """Share (%) of ``elapsed_s`` the device had a request in flight (capped at 100)."""
    ticks = after.io_ticks_ms - before.io_ticks_ms
    return min(100.0, max(0.0, ticks / (10.0 * elapsed_s))) if elapsed_s > 0 else 0.0


def completion_rate(before: DiskStat, after: DiskStat, elapsed_s: float) -> float:
    """Reads and writes completed per second between two readings."""
    done = after.completions - before.completions
    return max(0.0, done / elapsed_s) if elapsed_s > 0 else 0.0


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
    try:
        tasks = os.listdir(proc_root / str(pid) / "task")
    except OSError:
        return found
    for tid in tasks:
        text = _read(proc_root / str(pid) / "task" / tid / "children")
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
    ticks = parse_process_ticks(_read(proc_root / str(pid) / "stat") or "")
    if ticks is None:
        return None
    threads = {}
    try:
        tasks = os.listdir(proc_root / str(pid) / "task")
    except OSError:
        tasks = []
    for tid in tasks:
        found = parse_schedstat(_read(proc_root / str(pid) / "task" / tid / "schedstat") or "")
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


@dataclass(frozen=True)
class Reading:
    """What one reading of a host gives: its clock (s), each CPU's ticks, the disk's
    counters, PSI of memory and I/O, and fio's processes' times (None: not read there)."""

    time_s: float
    cpus: dict[int, CpuTimes]
    disk: DiskStat | None = None
    memory: Pressure | None = None
    io: Pressure | None = None
    processes: dict[int, ProcessTimes] = field(default_factory=dict)


def sample_between(
    before: Reading, after: Reading, ticks_per_s: int = TICKS_PER_S
) -> HostSample | None:
    """The sample from ``before`` to ``after`` (None when the clock did not advance);
    the local sampler's and the remote one's (targets/remote_sampler.py) alike."""
    elapsed = after.time_s - before.time_s
    if elapsed <= 0:
        return None
    disk, was = after.disk, before.disk
    busy = rate = queue = None
    if was is not None and disk is not None:
        busy = device_busy_pct(was, disk, elapsed)
        rate = completion_rate(was, disk, elapsed)
        queue = queue_length(was, disk, elapsed)
    load = process_load(before.processes, after.processes, elapsed, ticks_per_s)
    memory, io = after.memory, after.io
    return HostSample(
        time_s=after.time_s,
        cpu_busy_pct=cpu_busy_pct(before.cpus, after.cpus),
        device_busy_pct=busy,
        in_flight=disk.in_flight if disk else None,
        iops=rate,
        memory_some_pct=memory.some_pct if memory else None,
        memory_full_pct=memory.full_pct if memory else None,
        io_some_pct=io.some_pct if io else None,
        io_full_pct=io.full_pct if io else None,
        fio_cpu_cores=load[0] if load else None,
        fio_busiest_pct=load[1] if load else None,
        fio_wait_threads=load[2] if load else None,
        queue_length=queue,
    )


class Sampler:
    """Samples the host (and ``device``, a sysfs block device name) every
    ``interval_s`` on a thread of its own: ``start()``, then ``stop()`` returns the
    samples. :meth:`sample` takes one reading by hand (tests, and the thread).
    ``clock`` gives seconds (``time.time`` by default, so samples line up with fio's
    timestamps); ``proc_root``/``sys_root`` are where /proc and /sys are read;
    ``parent``: whose descendant processes (fio) are sampled (None: none)."""

    def __init__(
        self,
        device: str | None = None,
        *,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.time,
        proc_root: Path = PROC,
        sys_root: Path = SYS,
        parent: int | None = None,
    ) -> None:
        self.device = device
        self.parent = parent
        self.interval_s = interval_s
        self._clock = clock
        self._proc = proc_root
        self._stat = sys_root / "class" / "block" / device / "stat" if device else None
        self.hw_queues = read_hw_queues(device, sys_root) if device else None
        self._last: Reading | None = None
        self._samples: list[HostSample] = []
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def samples(self) -> tuple[HostSample, ...]:
        return tuple(self._samples)

    def _pressure(self, resource: str) -> Pressure | None:
        text = _read(self._proc / "pressure" / resource)
        return parse_pressure(text) if text else None

    def _read_processes(self) -> dict[int, ProcessTimes]:
        if self.parent is None:
            return {}
        found = {}
        for pid in descendants(self.parent, self._proc):
            times = read_process(pid, self._proc)
            if times is not None:
                found[pid] = times
        return found

    def sample(self) -> HostSample | None:
        """Read now; the sample since the previous reading (None for the first one,
        or when the clock did not advance)."""
        now = self._clock()
        cpus = parse_proc_stat(_read(self._proc / "stat") or "")
        text = _read(self._stat) if self._stat else None
        disk = parse_disk_stat(text) if text else None
        processes = self._read_processes()
        memory, io = self._pressure("memory"), self._pressure("io")
        last, self._last = self._last, Reading(now, cpus, disk, memory, io, processes)
        found = sample_between(last, self._last) if last is not None else None
        if found is not None:
            self._samples.append(found)
        return found

    def _run(self) -> None:
        """Sample on the ticks origin + k x interval; a tick missed (a busy host) is
        skipped, not caught up, so every sample spans about one interval."""
        origin = self._clock()
        while True:
            now = self._clock()
            tick = origin + (int((now - origin) / self.interval_s) + 1) * self.interval_s
            if self._halt.wait(tick - now):
                return
            self.sample()

    def start(self) -> None:
        """Take the first reading and sample every ``interval_s`` until :meth:`stop`."""
        if self._thread is not None:
            raise RuntimeError("the sampler is already running")
        self.sample()
        self._thread = threading.Thread(target=self._run, name="volbench-sampler", daemon=True)
        self._thread.start()

    def stop(self, final: bool = False) -> tuple[HostSample, ...]:
        """Stop the thread (at once, not at the next tick) and return every sample;
        ``final``: with one more since the last tick (a test shorter than the interval
        then has one sample too)."""
        self._halt.set()
        if self._thread is not None:
            self._thread.join()
        if final:
            self.sample()
        return self.samples

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
