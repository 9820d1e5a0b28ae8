"""First-touch penalty (the EC2/Azure disk article): read a region twice, at the same offsets.

Volumes restored from a snapshot (AWS EBS, and others that load blocks lazily)
serve the first read of each block from the snapshot store: AWS documents up to
50% lower performance on first access ("Initialize Amazon EBS volumes"). The
first pass reads every block of the region once, sequentially; the second pass
reads the same blocks again. Penalty = 1 - first-pass bandwidth / second-pass
bandwidth. Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.model import RW, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object

PASSES = ("first-pass", "second-pass")
"""The two passes over the target, in order: the first touches every block, the
second reads them again."""

NAME = "firsttouch"


@dataclass(frozen=True)
class FirstTouchOptions:
    region_bytes: int
    offset_bytes: int = 0
    bs_bytes: int = 1 << 20
    iodepth: int = 4
    ioengine: str | None = None


def plan(options: FirstTouchOptions) -> PlanSpec:
    """Two stonewalled sequential reads of the same region, each once through."""
    loads = tuple(
        Workload(
            name,
            RW.READ,
            bs_bytes=options.bs_bytes,
            iodepth=options.iodepth,
            offset_bytes=options.offset_bytes,
            size_bytes=options.region_bytes,
            runtime_s=None,
            time_based=False,
            ioengine=options.ioengine,
            refill_buffers=False,
        )
        for name in PASSES
    )
    return PlanSpec(name=NAME, rounds=(loads,), options={NAME: json_object(options)})
