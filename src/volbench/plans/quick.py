"""The quick profile (seed 001): six fio tests that size up a volume in minutes.

4 KiB random write and read IOPS and 16 KiB random write and read throughput at
a deep queue (QD 64 x 1 job by default, as in seed 001's fio commands), then
4 KiB random write and read latency at QD 1 x 1 job.

The ``diskmark`` profile is the layout of CrystalDiskMark's default profile
(crystalmark.info, CrystalDiskMark 8: "SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K
Q1T1") and of KDiskMark, its Linux counterpart built on fio (github.com/JonMagon/
KDiskMark): 1 MiB sequential at QD 8 and QD 1, 4 KiB random at QD 32 and QD 1, one
thread each, read then write. The seed 001 profile has no sequential test.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.model import RW, Workload
from volbench.plans.execution import PlanSpec
from volbench.records import json_object

NAME = "quick"


@dataclass(frozen=True)
class QuickOptions:
    """Options of the quick profile; times in seconds, sizes in bytes.

    ``iodepth`` and ``numjobs`` apply to the IOPS and throughput tests; the two
    latency tests always run at QD 1 x 1 job. ``profile`` is one of :data:`PROFILES`
    (``diskmark``'s queue depths and threads are its own).
    """

    runtime_s: float = 30.0
    ramp_time_s: float = 2.0
    size_bytes: int | None = None
    iodepth: int = 64
    numjobs: int = 1
    ioengine: str | None = None
    profile: str = "default"


PROFILES = ("default", "diskmark")


def diskmark_workloads(options: QuickOptions) -> tuple[Workload, ...]:
    """CrystalDiskMark's default layout: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 and RND4K
    Q1T1, each read then written (eight tests)."""
    layout = (
        ("seq1m-q8t1", RW.READ, RW.WRITE, 1 << 20, 8),
        ("seq1m-q1t1", RW.READ, RW.WRITE, 1 << 20, 1),
        ("rnd4k-q32t1", RW.RANDREAD, RW.RANDWRITE, 4096, 32),
        ("rnd4k-q1t1", RW.RANDREAD, RW.RANDWRITE, 4096, 1),
    )
    return tuple(
        Workload(
            f"{name}-{'read' if rw.reads else 'write'}",
            rw,
            bs_bytes=bs,
            iodepth=depth,
            numjobs=1,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
            size_bytes=options.size_bytes,
            ioengine=options.ioengine,
        )
        for name, read, write, bs, depth in layout
        for rw in (read, write)
    )


def workloads(options: QuickOptions) -> tuple[Workload, ...]:
    """The quick-profile workloads: seed 001's six in its order, or the diskmark eight."""
    if options.profile == "diskmark":
        return diskmark_workloads(options)

    def job(name: str, rw: RW, bs_bytes: int, deep: bool) -> Workload:
        return Workload(
            name,
            rw,
            bs_bytes=bs_bytes,
            iodepth=options.iodepth if deep else 1,
            numjobs=options.numjobs if deep else 1,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
            size_bytes=options.size_bytes,
            ioengine=options.ioengine,
        )

    return (
        job("randwrite-4k-iops", RW.RANDWRITE, 4096, deep=True),
        job("randread-4k-iops", RW.RANDREAD, 4096, deep=True),
        job("randwrite-16k-throughput", RW.RANDWRITE, 16384, deep=True),
        job("randread-16k-throughput", RW.RANDREAD, 16384, deep=True),
        job("randwrite-4k-latency", RW.RANDWRITE, 4096, deep=False),
        job("randread-4k-latency", RW.RANDREAD, 4096, deep=False),
    )


def plan(options: QuickOptions) -> PlanSpec:
    """The quick profile as one round of six stonewalled fio jobs."""
    return PlanSpec(name=NAME, rounds=(workloads(options),), options={NAME: json_object(options)})
