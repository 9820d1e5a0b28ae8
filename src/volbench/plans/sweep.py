"""The scaling sweep (seeds 001, 002): one workload over a grid of iodepth x numjobs.

Every grid point is one fio job, ordered by jobs then queue depth; the engine runs
each in a fio process of its own, committed as it ends (so a kill loses at most
the point that was running; the idle time between points is in BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volbench.analysis.peak_search import next_point
from volbench.errors import UsageError
from volbench.fio.bounds import MAX_IODEPTH, MAX_NUMJOBS, MAX_POINTS
from volbench.model import RW, TestResult, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object, section

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
    find_max: bool = False


def point_name(iodepth: int, numjobs: int) -> str:
    return f"qd{iodepth}-jobs{numjobs}"


def point_workload(options: SweepOptions, qd: int, jobs: int) -> Workload:
    """The workload of grid point (qd, jobs)."""
    return Workload(
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


def workloads(options: SweepOptions) -> tuple[Workload, ...]:
    """One workload per grid point, jobs-major, each in its own stonewall group."""
    bounds = (("iodepth", options.iodepths, MAX_IODEPTH), ("numjobs", options.numjobs, MAX_NUMJOBS))
    for label, values, most in bounds:
        if not values or any(not 1 <= v <= most for v in values):
            raise UsageError(f"--{label} needs values from 1 to {most:,}, e.g. 1,2,4,8")
    points = len(set(options.iodepths)) * len(set(options.numjobs))
    if points > MAX_POINTS:
        raise UsageError(
            f"the sweep would have {points:,} points (--iodepth x --numjobs): at most"
            f" {MAX_POINTS:,}; give fewer values"
        )
    return tuple(
        point_workload(options, qd, jobs)
        for jobs in sorted(set(options.numjobs))
        for qd in sorted(set(options.iodepths))
    )


def _measured(tests: Sequence[TestResult]) -> dict[tuple[int, int], float]:
    """(iodepth, numjobs) -> IOPS of the direct points measured so far."""
    found: dict[tuple[int, int], float] = {}
    for test in tests:
        match = _POINT.match(test.name)
        if match:
            found[(int(match.group(1)), int(match.group(2)))] = test.iops
    return found


_POINT = re.compile(r"^qd(\d+)-jobs(\d+)\Z")


def options_from(options: Mapping[str, Any]) -> SweepOptions | None:
    """The sweep options in a plan's recorded options (``RunSettings.options``; None: none)."""
    return section(options, NAME, SweepOptions)


def find_max_plan(options: SweepOptions) -> PlanSpec:
    """The adaptive peak search: one fio process per point, chosen from the results
    so far (analysis/peak_search.py)."""
    workloads(options)  # validates the grid

    def next_round(tests: Sequence[TestResult]) -> tuple[Workload, ...] | None:
        point = next_point(options.iodepths, options.numjobs, _measured(tests))
        return None if point is None else (point_workload(options, *point),)

    return PlanSpec(NAME, rounds=(), options={NAME: json_object(options)}, next_round=next_round)


def plan(options: SweepOptions, points: Sequence[Workload] | None = None) -> PlanSpec:
    """The sweep as one round of stonewalled grid points."""
    return PlanSpec(
        name=NAME,
        rounds=(tuple(points or workloads(options)),),
        options={NAME: json_object(options)},
    )
