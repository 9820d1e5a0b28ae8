"""Queue-depth x jobs scaling: the saturation knee, saturation, latency targets.

Pure functions over measured points. Outstanding I/O = iodepth x numjobs (what
fio keeps in flight). With Little's law (L = IOPS x W), once a volume is
saturated every extra outstanding I/O only adds waiting time: IOPS stays flat
while mean latency grows in proportion to the outstanding I/O (the UCloud RSSD post: QD 64 x
32 jobs gave the same 104k IOPS as QD 64 x 1, at 19.7 ms instead of 0.6 ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

KNEE_FRACTION = 0.95
"""The knee is the smallest outstanding I/O reaching this fraction of the peak IOPS."""

SAME_IOPS_TOLERANCE = 0.05
"""Two IOPS figures within 5% of each other count as "the same" throughput."""


@dataclass(frozen=True)
class ScalingPoint:
    """One measured point of a sweep; latency in ns, bandwidth in bytes/s."""

    iodepth: int
    numjobs: int
    iops: float
    bw_bytes_per_s: float
    lat_mean_ns: float | None
    lat_p99_ns: float | None
    tag: str = ""  # e.g. "buffered": points of one series share a tag

    @property
    def outstanding(self) -> int:
        return self.iodepth * self.numjobs

    @property
    def label(self) -> str:
        base = f"QD{self.iodepth}x{self.numjobs}"
        return f"{base} {self.tag}" if self.tag else base


def peak(points: Sequence[ScalingPoint]) -> ScalingPoint:
    """The point with the highest IOPS (ties: fewer outstanding I/Os)."""
    return max(points, key=lambda p: (p.iops, -p.outstanding))


def knee(points: Sequence[ScalingPoint], fraction: float = KNEE_FRACTION) -> ScalingPoint:
    """Smallest outstanding I/O reaching ``fraction`` of the peak IOPS.

    Ties in outstanding I/O go to the higher IOPS. Raises ValueError when empty.
    """
    if not points:
        raise ValueError("no points")
    top = peak(points).iops
    reaching = [p for p in points if p.iops >= fraction * top]
    return min(reaching, key=lambda p: (p.outstanding, -p.iops))


def saturation_sentence(points: Sequence[ScalingPoint]) -> str | None:
    """One sentence when more outstanding I/O only raised latency at the same IOPS.

    Compares the knee with the point of most outstanding I/O whose IOPS is within
    5% of the knee's; says nothing unless mean latency at least doubled there. Flat
    from QD 1 on is a limiter's pacing (analysis/limiter_signs.py), else saturation.
    """
    if len(points) < 2:
        return None
    base = knee(points)
    same = [
        p
        for p in points
        if p.outstanding > base.outstanding
        and abs(p.iops - base.iops) <= SAME_IOPS_TOLERANCE * base.iops
        and p.lat_mean_ns is not None
    ]
    if not same or base.lat_mean_ns is None:
        return None
    far = max(same, key=lambda p: p.outstanding)
    assert far.lat_mean_ns is not None
    if far.lat_mean_ns < 2 * base.lat_mean_ns:
        return None
    why = (
        "flat from 1 I/O in flight on, a rate limiter paces the I/O (a device that serves "
        "several I/Os at once gains from more queue)"
        if base.outstanding == 1
        else "the volume is saturated there"
    )
    return (
        f"Raising outstanding I/O from {base.outstanding} ({base.label}) to "
        f"{far.outstanding} ({far.label}) raised mean latency from "
        f"{_ms(base.lat_mean_ns)} to {_ms(far.lat_mean_ns)} at the same "
        f"~{_k(base.iops)} IOPS: {why}, extra queue only waits."
    )


def best_under_latency(
    points: Sequence[ScalingPoint], target_ns: float, percentile: str = "mean"
) -> ScalingPoint | None:
    """Highest-IOPS point whose mean (or p99) latency stays under ``target_ns``."""

    def latency(p: ScalingPoint) -> float | None:
        return p.lat_p99_ns if percentile == "p99" else p.lat_mean_ns

    meeting = [p for p in points if (lat := latency(p)) is not None and lat < target_ns]
    return peak(meeting) if meeting else None


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms"


def _k(iops: float) -> str:
    return f"{iops / 1000:,.1f}k" if iops >= 1000 else f"{iops:,.0f}"
