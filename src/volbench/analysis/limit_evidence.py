"""The inputs of a limit verdict (analysis/limit_verdict.py): typed records of what is
known about one test, all pure data.

:class:`MeasuredTest` comes from fio's own output (:func:`measured_test`, over the merged
test of analysis/aggregate.py and the fio jobs it merged); a host sample is a
:class:`~volbench.model.HostSample` (taken by targets/sampler.py, or read back from the
store by analysis/host_series.py);
:class:`DriveTemperatures` is made by targets/smart.py's ``temperatures`` from two
readings of the drive; :class:`KnownCap` is a limit from the catalogue or a cgroup.
A :class:`Verdict` names the :class:`Limit` with its evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from volbench.analysis.burst_series import Burst
from volbench.model import HostSample, JobResult, StoredResult, TestResult
from volbench.targets.smart import DriveTemperatures


@dataclass(frozen=True)
class MeasuredTest:
    """One test: IOPS, bandwidth (bytes/s), I/O-weighted mean total latency (ns),
    the configured iodepth and numjobs, each fio job's usr + sys CPU (% of one CPU),
    the IOPS of its reads and of its writes (None: not known apart), and whether its
    offsets were sequential (fio's read, write, rw; False: random or not known)."""

    name: str
    iops: float
    bw_bytes_per_s: float
    lat_mean_ns: float | None
    iodepth: int
    numjobs: int
    job_cpu_pct: tuple[float, ...] = ()
    direct: bool = True
    read_iops: float | None = None
    write_iops: float | None = None
    sequential: bool = False
    bs_bytes: int | None = None
    """The block size the test asked for (None: not known; bandwidth / IOPS then)."""

    def direction_iops(self, direction: str) -> float | None:
        """The IOPS of ``direction`` ("read" or "write"), None when not known apart."""
        return self.read_iops if direction == "read" else self.write_iops

    @property
    def mixed(self) -> bool:
        """Both reads and writes were done."""
        return bool(self.read_iops) and bool(self.write_iops)

    @property
    def outstanding(self) -> int:
        return self.iodepth * self.numjobs

    @property
    def label(self) -> str:
        return f"QD {self.iodepth} x {self.numjobs} job{'s' * (self.numjobs != 1)}"


def measured_test(
    result: TestResult, jobs: Sequence[JobResult], iodepth: int, numjobs: int, direct: bool = True
) -> MeasuredTest:
    """The figures of a merged test and the fio jobs it merged (analysis/aggregate.py)."""
    timed = [d for d in result.directions.values() if d.latency is not None and d.iops > 0]
    weight = sum(d.iops for d in timed)
    lat = sum(d.iops * d.latency.mean_ns for d in timed if d.latency) / weight if weight else None
    cpu = tuple(j.usr_cpu_pct + j.sys_cpu_pct for j in jobs)
    read, write = result.directions.get("read"), result.directions.get("write")
    return MeasuredTest(
        result.name,
        result.iops,
        result.bw_bytes_per_s,
        lat,
        iodepth,
        numjobs,
        cpu,
        direct,
        read.iops if read else 0.0,
        write.iops if write else 0.0,
    )


SEQUENTIAL = frozenset({"read", "write", "rw", "readwrite", "trim", "trimwrite"})
"""fio's sequential ``rw`` patterns."""


def stored_test(results: Sequence[StoredResult], cpu: tuple[float, ...]) -> MeasuredTest:
    """A stored test's figures from its result rows (one per direction) and its jobs'
    usr + sys CPU (% of one CPU; empty: the stored mean for each job): IOPS and
    bandwidth summed, latency the IOPS-weighted mean of the directions' means."""
    first = results[0]
    work = first.workload
    timed = [r for r in results if r.lat_mean_ns is not None and r.iops > 0]
    weight = sum(r.iops for r in timed)
    lat = sum(r.iops * (r.lat_mean_ns or 0.0) for r in timed) / weight if weight else None
    jobs = work.numjobs or first.jobs or 1
    if not cpu:  # fio's output unreadable: the stored mean, for each job
        cpu = (first.usr_cpu_pct + first.sys_cpu_pct,) * jobs
    return MeasuredTest(
        name=first.test,
        iops=sum(r.iops for r in results),
        bw_bytes_per_s=sum(r.bw_bytes_per_s for r in results),
        lat_mean_ns=lat,
        iodepth=(work.iodepth or 1) * max(1, work.places),
        numjobs=jobs,
        job_cpu_pct=cpu,
        direct=work.direct is not False,
        read_iops=sum(r.iops for r in results if r.direction == "read"),
        write_iops=sum(r.iops for r in results if r.direction == "write"),
        sequential=work.rw in SEQUENTIAL,
        bs_bytes=work.bs_bytes,
    )


def fmt_rate(value: float, unit: str) -> str:
    """``12.1 MB/s``, ``3,000 IOPS``: MB/s under 100 with a decimal."""
    return f"{value:,.1f} {unit}" if unit == "MB/s" and value < 100 else f"{value:,.0f} {unit}"


@dataclass(frozen=True)
class KnownCap:
    """A limit the test could meet: a catalogue product's or instance's, or a cgroup's;
    with a ``direction`` ("read" or "write"), a cap of that direction alone, which the
    I/O of that direction of a mixed test meets (IOPS only)."""

    label: str
    iops: float | None = None
    bw_bytes_per_s: float | None = None
    direction: str | None = None
    unit_bytes: int | None = None
    """The vendor counts an I/O of up to this many bytes as one (AWS: 256 KiB): a larger
    request counts as ``ceil(size / unit)`` I/Os against :attr:`iops`."""
    fitted: bool = False
    """Fitted to the volume by a limits run (:mod:`volbench.analysis.fitted_caps`), not
    promised: where a test stays under it, the limiter did not bind and the verdict says
    so."""
    kind: Literal["cap", "burst", "ceiling"] = "cap"
    """A limiter's cap, a burst's ceiling (met only while credits last), or the device's
    own ceiling where no limiter was found (a test there is held by the device)."""
    bs_bytes: int | None = None
    """It holds for tests of this request size only (bytes): the device's own rate at a
    size of a limits run's size ladder (None: every size)."""
    least_outstanding: int = 1
    """It holds for tests with at least this many I/Os in flight: the device's own rate
    measured at a deep queue says nothing of a shallower one's."""
    cpu_bound: bool = False
    """The device's own rate, measured while fio was short of CPU (a loop device's work
    is the host's CPUs'): the host's CPUs' rate as much as the device's."""

    def phrase(self, shown: str) -> str:
        """The cap (``shown``: its figure, "3,000 IOPS") named in a sentence: "the read
        IOPS cap (limits run 12), 3,000 IOPS", or "the gp3 volume's cap of 3,000 IOPS"."""
        return f"{self.label}, {shown}" if self.fitted else f"{self.label}'s cap of {shown}"

    def counted(self, test: MeasuredTest) -> tuple[float, int]:
        """``test``'s IOPS as this cap counts them, and I/Os per request."""
        size = test.bs_bytes or (test.bw_bytes_per_s / test.iops if test.iops > 0 else 0.0)
        count = max(1, math.ceil(size / self.unit_bytes - 1e-9)) if self.unit_bytes else 1
        return test.iops * count, count


@dataclass(frozen=True)
class Context:
    """What else is known about the test; every field is optional.

    ``host``: samples taken while the test ran, one a second; ``neighbours``: the same
    workload at other iodepth x numjobs in the same run; ``direct_twin``: a buffered
    test's direct twin (plans/cache_mode.py); ``stall_s``: the longest stall fio's
    stall watch recorded in the test (``model.Stall.seconds``); ``cpu_quota_cores``:
    the CPU quota of the cgroup fio ran in (cpu.max quota / period), None without one;
    ``throttled_pct``: share (%) of that cgroup's CFS periods in which the quota
    throttled it during the test (cpu.stat); ``caps``: limits the test could meet;
    ``min_latency_ns``: the lowest mean latency the target's kind can give (a network
    volume's round trip): below it, a cache; ``read_again``: the same region read
    again after this test read it first (plans/firsttouch.py); ``burst``: the burst
    found in the test's per-second series (analysis/burst_series.py);
    ``after_bursts``: (name, baseline IOPS after its burst) of the neighbours that
    burst.
    """

    host: tuple[HostSample, ...] = ()
    neighbours: tuple[MeasuredTest, ...] = ()
    direct_twin: MeasuredTest | None = None
    temperatures: DriveTemperatures | None = None
    stall_s: float = 0.0
    cpu_quota_cores: float | None = None
    throttled_pct: float | None = None
    caps: tuple[KnownCap, ...] = ()
    min_latency_ns: float | None = None
    read_again: MeasuredTest | None = None
    burst: Burst | None = None
    after_bursts: tuple[tuple[str, float], ...] = ()
    paced_sizes: tuple[tuple[MeasuredTest, float], ...] = ()
    """The same workload at the same queue but other block sizes whose pacing by a
    limiter the run showed (QD 1 and deeper at one rate), with that rate (IOPS)."""


class Limit(StrEnum):
    """What set a test's figure (issue 15's verdicts)."""

    STALL = "stall"
    CACHE = "cache"
    DEVICE_THERMAL = "device, thermal"
    HOST_CPU = "host CPU"
    RATE_LIMITER = "rate limiter"
    QUEUE = "queue"
    DEVICE = "device"
    NOT_DETERMINED = "not determined"


@dataclass(frozen=True)
class Verdict:
    """A test's limit, the sentences (with numbers) it rests on, and the other limits
    whose signs were also present."""

    limit: Limit
    evidence: tuple[str, ...]
    also: tuple[Limit, ...] = ()
