"""The quick profile (the UCloud RSSD post): six fio tests that size up a volume in
minutes.

4 KiB random write and read IOPS and 16 KiB random write and read throughput at
a deep queue (QD 64 x 1 job by default, as in the post's fio commands), then
4 KiB random write and read latency at QD 1 x 1 job.

The ``diskmark`` profile is the layout of CrystalDiskMark's default profile
(crystalmark.info, CrystalDiskMark 8: "SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K
Q1T1") and of KDiskMark, its Linux counterpart built on fio (github.com/JonMagon/
KDiskMark): 1 MiB sequential at QD 8 and QD 1, 4 KiB random at QD 32 and QD 1, one
thread each, read then write. The default profile has no sequential test.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.model import RW, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object

NAME = "quick"


@dataclass(frozen=True)
class QuickOptions:
    """Options of the quick profile; times in seconds, sizes in bytes.

    ``iodepth`` and ``numjobs`` apply to the IOPS and throughput tests; the two
    latency tests always run at QD 1 x 1 job. ``profile`` is a key of :data:`PROFILES`
    (``diskmark``'s queue depths and threads are its own).
    """

    runtime_s: float = 30.0
    ramp_time_s: float = 2.0
    size_bytes: int | None = None
    iodepth: int = 64
    numjobs: int = 1
    ioengine: str | None = None
    profile: str = "default"


@dataclass(frozen=True)
class Row:
    """One test of a profile: its name, direction, block size (bytes) and queue; a
    ``depth`` of None is the deep queue the options give (``--iodepth`` x
    ``--numjobs``), else that depth with one job. ``label`` names it in the
    profile's own table (diskmark: its pair of tests, read and write)."""

    name: str
    rw: RW
    bs_bytes: int
    depth: int | None
    label: str = ""

    def workload(self, options: QuickOptions) -> Workload:
        deep = self.depth is None
        return Workload(
            self.name,
            self.rw,
            bs_bytes=self.bs_bytes,
            iodepth=options.iodepth if deep else (self.depth or 1),
            numjobs=options.numjobs if deep else 1,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
            size_bytes=options.size_bytes,
            ioengine=options.ioengine,
        )


def _pair(key: str, label: str, read: RW, write: RW, bs: int, depth: int) -> tuple[Row, Row]:
    """A diskmark line: the test read, then written (``KEY-read``, ``KEY-write``)."""
    return (
        Row(f"{key}-read", read, bs, depth, label),
        Row(f"{key}-write", write, bs, depth, label),
    )


PROFILES: dict[str, tuple[Row, ...]] = {
    "default": (  # the UCloud RSSD post's six, in its order
        Row("randwrite-4k-iops", RW.RANDWRITE, 4096, None),
        Row("randread-4k-iops", RW.RANDREAD, 4096, None),
        Row("randwrite-16k-throughput", RW.RANDWRITE, 16384, None),
        Row("randread-16k-throughput", RW.RANDREAD, 16384, None),
        Row("randwrite-4k-latency", RW.RANDWRITE, 4096, 1),
        Row("randread-4k-latency", RW.RANDREAD, 4096, 1),
    ),
    "diskmark": (  # CrystalDiskMark's default layout, each read then written
        *_pair("seq1m-q8t1", "SEQ1M Q8T1", RW.READ, RW.WRITE, 1 << 20, 8),
        *_pair("seq1m-q1t1", "SEQ1M Q1T1", RW.READ, RW.WRITE, 1 << 20, 1),
        *_pair("rnd4k-q32t1", "RND4K Q32T1", RW.RANDREAD, RW.RANDWRITE, 4096, 32),
        *_pair("rnd4k-q1t1", "RND4K Q1T1", RW.RANDREAD, RW.RANDWRITE, 4096, 1),
    ),
}
"""Every quick profile, a row per test in run order: a profile is its rows."""


def workloads(options: QuickOptions) -> tuple[Workload, ...]:
    """The workloads of ``options.profile``, in its order."""
    return tuple(row.workload(options) for row in PROFILES[options.profile])


def plan(options: QuickOptions) -> PlanSpec:
    """The quick profile as one round of six stonewalled fio jobs."""
    return PlanSpec(name=NAME, rounds=(workloads(options),), options={NAME: json_object(options)})
