"""Burst ceilings: how far above its baseline a volume or an instance may go.

A volume with burst credits (AWS gp2 I/O credits, st1/sc1 throughput credits,
Azure P1-P20 and E1-E30) or a burstable instance (AWS ``*`` types: the maximum
for 30 minutes at least once a day, catalogue src A6) may exceed its sustained
cap for a while. Pure functions over an :class:`Expectation` and
:class:`InstanceCaps`, used by :mod:`volbench.analysis.promise`.
"""

from __future__ import annotations

from volbench.specs.expectation import Expectation, InstanceCaps


def tighter(
    cap: float | None, ceiling: float | None, other: float | None, other_ceiling: float | None
) -> tuple[float | None, float | None, bool]:
    """The tighter sustained cap and burst ceiling; True when ``other`` lowered the cap."""
    lowered = other is not None and (cap is None or other < cap)
    new_cap = other if lowered else cap
    ceilings = [c for c in (ceiling, other_ceiling) if c is not None]
    new_ceiling = min(ceilings) if ceilings else None
    if new_cap is not None and (new_ceiling is None or new_ceiling < new_cap):
        new_ceiling = new_cap
    return new_cap, new_ceiling, lowered


def average_ceiling(
    baseline: float | None, burst: float | None, seconds: float | None, runtime: float | None
) -> float | None:
    """The best average rate over ``runtime`` seconds starting with a full bucket
    that lasts ``seconds`` at the burst rate: the burst while it lasts, then the
    baseline, ``baseline + (burst - baseline) x seconds / runtime``."""
    if baseline is None or burst is None or seconds is None or runtime is None:
        return burst
    if runtime <= seconds:
        return burst
    return baseline + (burst - baseline) * seconds / runtime


def burst_notes(expectation: Expectation, instance: InstanceCaps | None, metric: str) -> list[str]:
    """Why a figure above the sustained cap may still meet the promise."""
    notes = []
    if metric == "IOPS" and expectation.burst_iops is not None:
        notes.append(
            f"volume bursting: up to {expectation.burst_iops:,.0f} IOPS"
            f" (baseline {expectation.iops or 0:,.0f}){_lasting(expectation.burst_seconds)}"
        )
    if metric == "MB/s" and expectation.burst_throughput_bytes_per_s is not None:
        base = (expectation.throughput_bytes_per_s or 0) / 1e6
        notes.append(
            f"volume bursting: up to {expectation.burst_throughput_bytes_per_s / 1e6:,.1f} MB/s"
            f" (baseline {base:,.1f}){_lasting(expectation.burst_throughput_seconds)}"
        )
    if instance is not None and instance.burst_minutes is not None:
        notes.append(
            f"instance bursting: {instance.source} runs at its maximum"
            f" {instance.burst_minutes:g} min at least once per 24 h, then at its baseline"
        )
    return notes


def _lasting(seconds: float | None) -> str:
    return "" if seconds is None else f" for {seconds:,.0f} s on a full bucket"
