"""Live figures from fio's interim status documents (``--status-interval``).

fio's interim documents are cumulative since each job started; the figure for
the last interval is the difference of two consecutive documents:
IOPS = d(total_ios) / dt, bandwidth = d(io_bytes) / dt, and mean latency over
the interval = d(lat mean x N) / d(N). These figures are for the progress
display only; stored results come from fio's final document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_DIRECTIONS = ("read", "write", "trim")


@dataclass(frozen=True)
class LiveSample:
    """One interval of the job that is running now."""

    job: str
    iops: float
    bw_bytes_per_s: float
    lat_mean_ns: float | None
    interval_s: float
    io_bytes: int = 0
    """fio's bytes of the job since it started (its ``io_bytes``, every direction)."""


@dataclass(frozen=True)
class JobTotals:
    """One job's cumulative figures in a status document (clones and hosts added up).

    ``ios`` is fio's ``total_ios`` (I/Os issued), ``lat_n`` the number of latency
    samples (I/Os completed; none during ``ramp_time``), ``runtime_ms`` fio's
    ``job_runtime`` (the longest clone's).
    """

    ios: int
    io_bytes: int
    lat_sum_ns: float
    lat_n: int
    runtime_ms: int = 0


def job_totals(document: Mapping[str, Any]) -> dict[str, JobTotals]:
    """Cumulative I/O counts per job name (clones of one job, and hosts, added up)."""
    totals: dict[str, JobTotals] = {}
    jobs = document.get("jobs") or [
        j for j in document.get("client_stats", []) if j.get("jobname") != "All clients"
    ]
    for job in jobs:
        name = str(job.get("jobname", ""))
        ios = io_bytes = lat_n = 0
        lat_sum = 0.0
        for direction in _DIRECTIONS:
            stats = job.get(direction) or {}
            ios += int(stats.get("total_ios", 0))
            io_bytes += int(stats.get("io_bytes", 0))
            lat = stats.get("lat_ns") or {}
            n = int(lat.get("N", 0))
            lat_n += n
            lat_sum += float(lat.get("mean", 0.0)) * n
        prev = totals.get(name, JobTotals(0, 0, 0.0, 0))
        totals[name] = JobTotals(
            prev.ios + ios,
            prev.io_bytes + io_bytes,
            prev.lat_sum_ns + lat_sum,
            prev.lat_n + lat_n,
            max(prev.runtime_ms, int(job.get("job_runtime", 0))),
        )
    return totals


class LiveSampler:
    """Turns successive interim documents into per-interval samples."""

    def __init__(self) -> None:
        self._previous: dict[str, JobTotals] = {}
        self._previous_ms: int | None = None

    def sample(self, document: Mapping[str, Any]) -> LiveSample | None:
        """The sample for the interval that ends with ``document`` (None for the first)."""
        now_ms = int(document.get("timestamp_ms", 0))
        totals = job_totals(document)
        previous, previous_ms = self._previous, self._previous_ms
        self._previous, self._previous_ms = totals, now_ms
        if previous_ms is None or now_ms <= previous_ms:
            return None
        dt = (now_ms - previous_ms) / 1000.0
        best: LiveSample | None = None
        for name, cur in totals.items():
            before = previous.get(name, JobTotals(0, 0, 0.0, 0))
            d_ios = cur.ios - before.ios
            if d_ios <= 0:
                continue
            d_n = cur.lat_n - before.lat_n
            lat = (cur.lat_sum_ns - before.lat_sum_ns) / d_n if d_n > 0 else None
            bw = (cur.io_bytes - before.io_bytes) / dt
            candidate = LiveSample(name, d_ios / dt, bw, lat, dt, cur.io_bytes)
            if best is None or candidate.iops > best.iops:
                best = candidate
        return best
