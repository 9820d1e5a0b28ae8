"""Once-a-second samples of the host and the target's block device, to tell apart
what limited a test (host CPU, queue, rate limiter, device).

Each sample costs four small file reads: ``/proc/stat``, ``/sys/class/block/DEV/stat``
and, where the kernel has PSI, ``/proc/pressure/memory`` and ``/proc/pressure/io``.
Rates are differences between two readings divided by the clock time between them
(:class:`Reading`, :func:`sample_between`: the same for another host's readings,
targets/remote_sampler.py).

The file formats and their sources: targets/kernel_counters.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from volbench.model import HostSample
from volbench.targets.kernel_counters import (
    PROC,
    SYS,
    TICKS_PER_S,
    CpuTimes,
    DiskStat,
    Pressure,
    ProcessTimes,
    byte_rates,
    completion_rate,
    cpu_busy_pct,
    descendants,
    device_busy_pct,
    parse_disk_stat,
    parse_pressure,
    parse_proc_stat,
    process_load,
    queue_length,
    read_hw_queues,
    read_process,
)
from volbench.targets.kernel_file import kernel_text

INTERVAL_S = 1.0


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
    moved: tuple[float, float] | None = None
    if was is not None and disk is not None:
        busy = device_busy_pct(was, disk, elapsed)
        rate = completion_rate(was, disk, elapsed)
        queue = queue_length(was, disk, elapsed)
        moved = byte_rates(was, disk, elapsed)
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
        read_bytes_per_s=moved[0] if moved else None,
        write_bytes_per_s=moved[1] if moved else None,
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
        # paths as strings, made once: a sample reads them each second
        self._proc_stat = str(proc_root / "stat")
        self._pressures = {r: str(proc_root / "pressure" / r) for r in ("memory", "io")}
        self._stat = str(sys_root / "class" / "block" / device / "stat") if device else None
        self.hw_queues = read_hw_queues(device, sys_root) if device else None
        self._last: Reading | None = None
        self._samples: list[HostSample] = []
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def samples(self) -> tuple[HostSample, ...]:
        return tuple(self._samples)

    def _pressure(self, resource: str) -> Pressure | None:
        text = kernel_text(self._pressures[resource])
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
        cpus = parse_proc_stat(kernel_text(self._proc_stat) or "")
        text = kernel_text(self._stat) if self._stat else None
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
