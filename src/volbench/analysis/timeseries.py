"""Per-second time series of a test from its jobs' fio logs.

Jobs log separately; the test's series adds the jobs' IOPS and bandwidth at the
same log time and averages their latencies weighted by the jobs' IOPS there
(mean latency of all I/O completed in that second), or plainly when no IOPS are
known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from volbench.fio.logs import LogPoint

Series = dict[str, list[tuple[float, float]]]
"""direction -> [(time in s, value)], time ascending."""


def summed(jobs: Sequence[Sequence[LogPoint]]) -> Series:
    """IOPS or bandwidth of all jobs together, per log time and direction."""
    totals: dict[str, dict[int, float]] = {}
    for points in jobs:
        for p in points:
            per_time = totals.setdefault(p.direction, {})
            per_time[p.time_ms] = per_time.get(p.time_ms, 0.0) + p.value
    return {d: [(t / 1000, v) for t, v in sorted(s.items())] for d, s in totals.items()}


def weighted_latency(
    latency: Sequence[Sequence[LogPoint]], iops: Sequence[Sequence[LogPoint]] = ()
) -> Series:
    """Mean latency (ns) per log time and direction over the jobs, weighted by IOPS."""
    weights: Mapping[tuple[int, int, str], float] = {
        (job, p.time_ms, p.direction): p.value for job, points in enumerate(iops) for p in points
    }
    sums: dict[str, dict[int, list[float]]] = {}
    for job, points in enumerate(latency):
        for p in points:
            w = weights.get((job, p.time_ms, p.direction), 1.0) if weights else 1.0
            acc = sums.setdefault(p.direction, {}).setdefault(p.time_ms, [0.0, 0.0])
            acc[0] += w * p.value
            acc[1] += w
    return {
        d: [(t / 1000, a[0] / a[1]) for t, a in sorted(s.items()) if a[1] > 0]
        for d, s in sums.items()
    }
