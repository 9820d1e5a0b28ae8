"""HD Tune-style tests (the EC2/Azure disk article): the surface scan and the file benchmark.

Scan (HD Tune "Benchmark"): sequential reads in ``zones`` equal zones across the
whole target (each zone read from its start for ``zone_seconds`` or until its
end), then the access time (mean latency of random 4 KiB reads at QD 1 over the
whole range) and the burst rate (the first 64 KiB read over and over: what the
device serves from its cache). Read-only: allowed on any device.

File benchmark (HD Tune "File Benchmark", the EC2/Azure disk article's table): sequential read and
write, 4 KiB random read and write at QD 1 and at QD 32.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.model import RW, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object

SCAN = "scan"
FILEBENCH = "filebench"

BURST_BYTES = 65536
"""The region re-read for the burst rate: 64 KiB (one HD Tune block)."""

ZONE_READ_MAX_BYTES = 256 << 20
"""At most this much is read per zone (a zone is read for zone_seconds or this)."""


@dataclass(frozen=True)
class ScanOptions:
    capacity_bytes: int
    zones: int = 100
    zone_seconds: float = 0.5
    block_bytes: int = 65536
    access_seconds: float = 3.0
    burst_seconds: float = 1.0
    ioengine: str | None = None


def zone_name(index: int) -> str:
    return f"zone-{index:04d}"


def scan_workloads(options: ScanOptions) -> tuple[Workload, ...]:
    """``zones`` sequential zone reads, then access time, then burst rate."""
    if options.zones < 1:
        raise UsageError("--zones must be at least 1")
    zone = options.capacity_bytes // options.zones
    zone -= zone % 4096
    if zone < options.block_bytes:
        raise UsageError(
            f"{options.zones} zones of a {options.capacity_bytes}-byte target are smaller "
            f"than one {options.block_bytes}-byte block: use fewer --zones"
        )
    reads = tuple(
        Workload(
            zone_name(i),
            RW.READ,
            bs_bytes=options.block_bytes,
            offset_bytes=i * zone,
            size_bytes=min(zone, ZONE_READ_MAX_BYTES),
            runtime_s=options.zone_seconds,
            time_based=False,
            ioengine=options.ioengine,
            refill_buffers=False,
        )
        for i in range(options.zones)
    )
    access = Workload(
        "access-time",
        RW.RANDREAD,
        bs_bytes=4096,
        size_bytes=zone * options.zones,
        runtime_s=options.access_seconds,
        ioengine=options.ioengine,
        refill_buffers=False,
    )
    burst = Workload(
        "burst-rate",
        RW.READ,
        bs_bytes=BURST_BYTES,
        size_bytes=BURST_BYTES,
        runtime_s=options.burst_seconds,
        ioengine=options.ioengine,
        refill_buffers=False,
    )
    return (*reads, access, burst)


def scan_plan(options: ScanOptions) -> PlanSpec:
    return PlanSpec(
        name=SCAN, rounds=(scan_workloads(options),), options={SCAN: json_object(options)}
    )


@dataclass(frozen=True)
class FilebenchOptions:
    runtime_s: float = 10.0
    ramp_time_s: float = 1.0
    sequential_bytes: int = 1 << 20
    size_bytes: int | None = None
    ioengine: str | None = None


FILEBENCH_TESTS = (
    ("sequential-read", RW.READ, "sequential", 1),
    ("sequential-write", RW.WRITE, "sequential", 1),
    ("random-read-4k", RW.RANDREAD, "random", 1),
    ("random-write-4k", RW.RANDWRITE, "random", 1),
    ("random-read-4k-qd32", RW.RANDREAD, "random", 32),
    ("random-write-4k-qd32", RW.RANDWRITE, "random", 32),
)
"""Seed 003's file benchmark columns, in its order."""


def filebench_plan(options: FilebenchOptions) -> PlanSpec:
    loads = tuple(
        Workload(
            name,
            rw,
            bs_bytes=options.sequential_bytes if kind == "sequential" else 4096,
            iodepth=qd,
            size_bytes=options.size_bytes,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
            ioengine=options.ioengine,
        )
        for name, rw, kind, qd in FILEBENCH_TESTS
    )
    return PlanSpec(name=FILEBENCH, rounds=(loads,), options={FILEBENCH: json_object(options)})
