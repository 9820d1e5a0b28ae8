"""The scaling sweep (seeds 001, 002): one workload over a grid of iodepth x numjobs.

Every grid point is one fio job; all points run stonewalled in one fio process
(one round), ordered by jobs then queue depth, so the volume never idles between
points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from volbench.errors import UsageError
from volbench.model import RW, Workload
from volbench.plans.execution import PlanSpec

NAME = "sweep"


@dataclass(frozen=True)
class SweepOptions:
    """What to sweep; times in seconds, sizes in bytes.

    ``latency_target_ns`` with ``latency_percentile`` ("mean" or "p99") asks for
    the highest IOPS whose latency stays under the target.
    """

    rw: RW
    bs_bytes: int
    iodepths: tuple[int, ...]
    numjobs: tuple[int, ...]
    runtime_s: float = 10.0
    ramp_time_s: float = 1.0
    size_bytes: int | None = None
    rwmixread_pct: int | None = None
    ioengine: str | None = None
    direct: bool = True
    latency_target_ns: float | None = None
    latency_percentile: str = "mean"


def point_name(iodepth: int, numjobs: int) -> str:
    return f"qd{iodepth}-jobs{numjobs}"


def workloads(options: SweepOptions) -> tuple[Workload, ...]:
    """One workload per grid point, jobs-major, each in its own stonewall group."""
    for label, values in (("iodepth", options.iodepths), ("numjobs", options.numjobs)):
        if not values or any(v < 1 for v in values):
            raise UsageError(f"--{label} needs values of at least 1, e.g. 1,2,4,8")
    return tuple(
        Workload(
            point_name(qd, jobs),
            options.rw,
            bs_bytes=options.bs_bytes,
            rwmixread_pct=options.rwmixread_pct,
            iodepth=qd,
            numjobs=jobs,
            direct=options.direct,
            ioengine=options.ioengine,
            size_bytes=options.size_bytes,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
        )
        for jobs in sorted(set(options.numjobs))
        for qd in sorted(set(options.iodepths))
    )


def parse_int_list(text: str) -> tuple[int, ...]:
    """``1,2,4`` or a doubling range ``1-256`` (1,2,4,...,256) -> integers."""
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        low, sep, high = part.partition("-")
        try:
            if sep:
                start, end = int(low), int(high)
                if start < 1 or end < start:
                    raise ValueError
                value = start
                while value <= end:
                    values.append(value)
                    value *= 2
            else:
                values.append(int(part))
        except ValueError:
            raise UsageError(
                f"invalid list {text!r}: use numbers like 1,2,4,8 or a doubling range like 1-256"
            ) from None
    return tuple(values)


def plan(options: SweepOptions, points: Sequence[Workload] | None = None) -> PlanSpec:
    """The sweep as one round of stonewalled grid points."""
    settings = asdict(options)
    settings["rw"] = options.rw.value
    return PlanSpec(
        name=NAME, rounds=(tuple(points or workloads(options)),), settings={"sweep": settings}
    )
