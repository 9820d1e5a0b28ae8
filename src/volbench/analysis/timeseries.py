"""Per-second time series of a test from its jobs' fio logs (as stored with each round).

Jobs log separately; the test's series adds the jobs' IOPS and bandwidth in the
same log window and averages their latencies weighted by the jobs' IOPS there
(mean latency of all I/O completed in that window), or plainly where some job's
IOPS are not logged. fio stamps a window's average at its end, give or take a
few ms (1000, 2000, 3001 ms), so points are put in windows of ``window_ms``
(volbench's ``log_avg_msec``) by rounding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from volbench.analysis.host_series import DIRECTION as HOST_DIRECTION
from volbench.fio.job import LOG_AVG_MSEC
from volbench.fio.logs import LogPoint
from volbench.model import LogSeries

Series = dict[str, list[tuple[float, float]]]
"""direction -> [(time in s, value)], time ascending."""

Logs = dict[tuple[str, str], list[list[LogPoint]]]
"""(test, kind) -> each job's points (every direction), jobs in the same order for
every kind of a test."""


def round_logs(series: Iterable[LogSeries]) -> dict[int, Logs]:
    """Stored series as each round's logs by test and kind, one list of points per job
    (by host and fio's job number; a job without a log of a kind has an empty list,
    so that a test's lists line up job by job across kinds)."""
    jobs: dict[tuple[int, str], set[tuple[str, int]]] = {}
    points: dict[tuple[int, str, str, str, int], list[LogPoint]] = {}
    for s in series:
        if s.direction == HOST_DIRECTION:  # the host's samples, not one of fio's logs
            continue
        job = (s.host or "", s.job)
        jobs.setdefault((s.round, s.test), set()).add(job)
        points.setdefault((s.round, s.test, s.kind, *job), []).extend(
            LogPoint(t, float(v), s.direction) for t, v in s.points
        )
    kinds: dict[tuple[int, str], set[str]] = {}
    for round_no, test, kind, _, _ in points:
        kinds.setdefault((round_no, test), set()).add(kind)
    by_round: dict[int, Logs] = {}
    for (round_no, test), found in sorted(jobs.items()):
        logs = by_round.setdefault(round_no, {})
        for kind in sorted(kinds[(round_no, test)]):
            logs[(test, kind)] = [
                sorted(points.get((round_no, test, kind, *job), []), key=lambda p: p.time_ms)
                for job in sorted(found)
            ]
    return by_round


def _window(point: LogPoint, window_ms: int) -> int:
    return round(point.time_ms / window_ms)


def summed(jobs: Sequence[Sequence[LogPoint]], window_ms: int = LOG_AVG_MSEC) -> Series:
    """IOPS or bandwidth of all jobs together, per window (end time, s) and direction."""
    totals: dict[str, dict[int, float]] = {}
    for points in jobs:
        for p in points:
            per_window = totals.setdefault(p.direction, {})
            w = _window(p, window_ms)
            per_window[w] = per_window.get(w, 0.0) + p.value
    return {d: [(w * window_ms / 1000, v) for w, v in sorted(s.items())] for d, s in totals.items()}


def weighted_latency(
    latency: Sequence[Sequence[LogPoint]],
    iops: Sequence[Sequence[LogPoint]] = (),
    window_ms: int = LOG_AVG_MSEC,
) -> Series:
    """Mean latency (ns) per window and direction over the jobs, weighted by the
    jobs' IOPS in that window (a plain mean where some job's IOPS are not logged)."""
    weights: Mapping[tuple[int, int, str], float] = {
        (job, _window(p, window_ms), p.direction): p.value
        for job, points in enumerate(iops)
        for p in points
    }
    entries: dict[str, dict[int, list[tuple[float, float | None]]]] = {}
    for job, points in enumerate(latency):
        for p in points:
            w = _window(p, window_ms)
            entries.setdefault(p.direction, {}).setdefault(w, []).append(
                (p.value, weights.get((job, w, p.direction)))
            )
    return {
        d: [(w * window_ms / 1000, _mean(values)) for w, values in sorted(s.items())]
        for d, s in entries.items()
    }


def _mean(values: Sequence[tuple[float, float | None]]) -> float:
    """IOPS-weighted mean where every job's IOPS are known and not all zero, else plain."""
    total = sum(w for _, w in values if w is not None)
    if total > 0 and all(w is not None for _, w in values):
        return sum(v * (w or 0.0) for v, w in values) / total
    return sum(v for v, _ in values) / len(values)


EPOCH_MS = 10**11
"""Log times above this (1973 in Unix time) are Unix-epoch ms (fio ``log_unix_epoch``)."""


def common_origin_ms(jobs: Iterable[Sequence[LogPoint]], window_ms: int = LOG_AVG_MSEC) -> int:
    """The zero of a common clock for logs: 0 for fio's own times (ms since each job
    started); for Unix-epoch times (several hosts or targets at once) one window
    before the earliest first point, so the first window reads ``window_ms`` as a
    job's own log would."""
    first = [points[0].time_ms for points in jobs if points]
    if not first or min(first) < EPOCH_MS:
        return 0
    return min(first) - window_ms


def shifted(jobs: Sequence[Sequence[LogPoint]], origin_ms: int) -> list[list[LogPoint]]:
    """Every point's time less ``origin_ms``."""
    return [
        [dataclasses.replace(p, time_ms=p.time_ms - origin_ms) for p in points] for points in jobs
    ]
