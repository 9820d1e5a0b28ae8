"""Throttle fingerprint: does a volume behave as if a rate limiter caps it?

Pure functions over points of one workload measured at several outstanding I/O
counts (iodepth x numjobs). A rate limiter shows two signs together:

1. IOPS plateau: from some queue depth on, IOPS no longer changes with the
   outstanding I/O (every plateau point within ``PLATEAU_TOLERANCE`` of the
   plateau mean, over at least a doubling of outstanding I/O);
2. Little's law (L = lambda x W, Little 1961): with a fixed completion rate
   lambda = cap, mean latency W = L / cap grows linearly with the outstanding
   I/O L, with slope 1 / cap. The least-squares slope of W against L over the
   plateau is compared with 1 / cap and its fit quality R^2 reported.

The cap estimate is the plateau's mean IOPS; its uncertainty the standard error
(sample stddev / sqrt(n)). Confidence (0-1) is the product of flatness
(1 - CV / tolerance), the Little's-law fit R^2, the slope agreement
(min(s, 1/cap) / max(s, 1/cap)) and a point-count factor (n - 1) / 3 capped at 1.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

PLATEAU_TOLERANCE = 0.05
"""Plateau points lie within 5% of the plateau mean IOPS."""

MIN_SPAN = 2.0
"""The plateau spans at least a doubling of outstanding I/O."""


@dataclass(frozen=True)
class Point:
    """One measurement: outstanding I/O, total IOPS and mean latency (ns), and
    how much IOPS varied between fio's samples within the measurement."""

    outstanding: int
    iops: float
    lat_mean_ns: float
    source: str = ""
    sample_spread: float | None = None  # fio iops_stddev / iops_mean within the test


@dataclass(frozen=True)
class Fingerprint:
    """The verdict of :func:`fingerprint` with the figures it rests on."""

    limited: bool
    cap_iops: float | None
    cap_stderr_iops: float | None
    confidence: float
    plateau: tuple[Point, ...]
    slope_ns_per_io: float | None  # latency added per extra outstanding I/O
    r_squared: float | None
    reason: str


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """Least-squares line y = a + b x: (a, b, R^2)."""
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx if sxx else 0.0
    intercept = mean_y - slope * mean_x
    ss_tot = sum((y - mean_y) ** 2 for y in ys)
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return intercept, slope, 1.0 - ss_res / ss_tot if ss_tot else 1.0


def _plateau(points: Sequence[Point]) -> list[Point]:
    """The longest run of highest-QD points whose IOPS stay within tolerance."""
    ordered = sorted(points, key=lambda p: p.outstanding)
    best: list[Point] = []
    for start in range(len(ordered)):
        tail = ordered[start:]
        mean = statistics.fmean(p.iops for p in tail)
        if all(abs(p.iops - mean) <= PLATEAU_TOLERANCE * mean for p in tail):
            best = tail
            break
    return best


def fingerprint(points: Sequence[Point]) -> Fingerprint:
    """Detect a rate limiter in ``points`` (one workload at several queue depths)."""
    depths = sorted({p.outstanding for p in points})
    if len(depths) < 3:
        return Fingerprint(
            False,
            None,
            None,
            0.0,
            (),
            None,
            None,
            f"need 3 or more queue depths, got {len(depths)}",
        )
    plateau = _plateau(points)
    low, high = (
        (min(p.outstanding for p in plateau), max(p.outstanding for p in plateau))
        if plateau
        else (0, 0)
    )
    if not plateau or high < MIN_SPAN * low or len({p.outstanding for p in plateau}) < 2:
        seen = ", ".join(
            f"QD {p.outstanding}: {p.iops:,.0f}"
            for p in sorted(points, key=lambda p: p.outstanding)
        )
        return Fingerprint(
            False,
            None,
            None,
            0.0,
            tuple(plateau),
            None,
            None,
            f"IOPS still change with queue depth ({seen}): no plateau, no cap reached",
        )
    values = [p.iops for p in plateau]
    cap = statistics.fmean(values)
    stdev = statistics.stdev(values) if len(values) > 1 else 0.0
    stderr = stdev / math.sqrt(len(values))
    _, slope, r2 = _fit([p.outstanding for p in plateau], [p.lat_mean_ns for p in plateau])
    expected_slope = 1e9 / cap
    agreement = min(slope, expected_slope) / max(slope, expected_slope) if slope > 0 else 0.0
    flatness = max(0.0, 1.0 - (stdev / cap) / PLATEAU_TOLERANCE)
    count = min(1.0, (len(plateau) - 1) / 3)
    confidence = flatness * max(r2, 0.0) * agreement * count
    limited = agreement >= 0.7 and r2 >= 0.9
    if limited:
        reason = (
            f"behaves as if limited to ~{cap:,.0f} IOPS: flat within"
            f" {stdev / cap:.1%} from QD {low} to {high}, latency +{slope / 1e3:,.1f} µs"
            f" per queued I/O (Little's law 1/cap = {expected_slope / 1e3:,.1f} µs,"
            f" R² {r2:.3f})"
        )
    else:
        reason = (
            f"IOPS flat at ~{cap:,.0f} from QD {low} to {high} but latency does not grow"
            f" as Little's law predicts for a cap (slope {slope / 1e3:,.1f} µs vs"
            f" {expected_slope / 1e3:,.1f} µs, R² {r2:.3f})"
        )
    return Fingerprint(limited, cap, stderr, confidence, tuple(plateau), slope, r2, reason)


def shared_budget(read_cap: float, write_cap: float, mixed_read: float, mixed_write: float) -> str:
    """Do reads and writes share one budget? From the read-only and write-only
    caps and the read and write IOPS of a mixed workload at its plateau.

    One budget: mixed total ~ the single-direction cap. Separate budgets: each
    direction of the mix is bounded by its own cap, so the total exceeds both
    (reaching read_cap + write_cap when neither side is idle).
    """
    total = mixed_read + mixed_write
    single = max(read_cap, write_cap)
    if total <= (1 + PLATEAU_TOLERANCE) * single:
        return (
            f"reads and writes share one budget: the mix totals {total:,.0f} IOPS,"
            f" as a single direction's cap ({single:,.0f})"
        )
    return (
        f"reads and writes have separate budgets: the mix totals {total:,.0f} IOPS"
        f" ({mixed_read:,.0f} read + {mixed_write:,.0f} write), above either cap"
        f" ({read_cap:,.0f} read, {write_cap:,.0f} write)"
    )
