"""Replaying a captured workload on a candidate volume (plan ``replay``).

Two ways, each one test (one fio process, committed as any round, so results,
series, limit verdicts and ``volbench compare`` work as for every plan):

- ``replay``: the exact trace through fio's iolog replay (``read_iolog``), its
  offsets mapped onto the target (:mod:`volbench.fio.iolog`), at the trace's own
  pace, scaled by ``--speed`` (fio ``replay_time_scale``), or as fast as possible in
  the trace's order (``replay_no_stall``). fio may keep as many requests in flight
  as the trace ever had (its highest queue depth).
- ``synthetic``: the fitted job (:mod:`volbench.analysis.workload_fit`) for a chosen
  duration, at the fitted queue depth, over the trace's span (or the target, when
  smaller).

The iolog is written into the runs folder (scratch space) before the run starts;
a replay writes when its trace does, so the target passes the usual safety
checks first (:func:`volbench.plans.placement.preparation.prepare_target`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.analysis.workload_fit import SyntheticFit
from volbench.analysis.workload_profile import WorkloadProfile
from volbench.errors import UsageError
from volbench.fio.iolog import write_iolog
from volbench.model import RW, TargetInfo, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object
from volbench.trace.events import IoTrace

NAME = "replay"
EXACT = "replay"
SYNTHETIC = "synthetic"


@dataclass(frozen=True)
class ReplayOptions:
    """How to replay capture ``workload`` (run ``capture_run``)."""

    workload: str
    capture_run: int
    synthetic: bool = False
    speed_pct: int | None = None
    as_fast_as_possible: bool = False
    mapping: str = "scale"
    duration_s: float | None = None
    size_bytes: int | None = None
    ioengine: str | None = None

    def record(self) -> dict[str, Any]:
        """What a replay run records of its options (with its mode, by name)."""
        return {**json_object(self), "mode": SYNTHETIC if self.synthetic else EXACT}


def parse_speed(text: str) -> int:
    """``2x`` -> 200, ``0.5x`` -> 50, ``150%`` -> 150 (fio's replay_time_scale, %)."""
    value = text.strip().lower()
    try:
        if value.endswith("x"):
            pct = round(float(value[:-1]) * 100)
        elif value.endswith("%"):
            pct = round(float(value[:-1]))
        else:
            raise ValueError(value)
    except ValueError:
        raise UsageError(f"invalid speed {text!r}: use e.g. 2x, 0.5x or 150%") from None
    if not 1 <= pct <= 100_000:
        raise UsageError(f"speed {text!r} is out of range (0.01x .. 1000x)")
    return pct


def writes(profile: WorkloadProfile, synthetic: bool, found: SyntheticFit) -> bool:
    """Whether the replay writes the target (the safety checks run when it does)."""
    if synthetic:
        return found.rwmixread_pct < 100
    return bool(profile.counts["write"] or profile.counts["trim"])


def exact_plan(
    trace: IoTrace,
    profile: WorkloadProfile,
    options: ReplayOptions,
    target: TargetInfo,
    folder: Path,
) -> PlanSpec:
    """The exact replay of ``trace`` on ``target`` (its iolog written into ``folder``)."""
    if not len(trace):
        raise UsageError(f"workload {options.workload} holds no requests to replay")
    folder.mkdir(parents=True, exist_ok=True)
    usable = min(target.capacity_bytes, options.size_bytes or target.capacity_bytes)
    iolog = folder / f"{options.workload}.iolog"
    summary = write_iolog(
        trace, target.path, usable, target.logical_block_bytes or 512, iolog, options.mapping
    )
    reads = summary.counts["read"]
    written = summary.counts["write"] + summary.counts["trim"]
    rw = RW.RANDRW if reads and written else RW.RANDREAD if reads else RW.RANDWRITE
    workload = Workload(
        EXACT,
        rw,
        bs_bytes=max(summary.largest_bytes, 512),
        iodepth=max(1, profile.qd_max),
        ioengine=options.ioengine,
        runtime_s=None,
        time_based=False,
        read_iolog=str(iolog),
        replay_speed_pct=options.speed_pct if not options.as_fast_as_possible else None,
        replay_no_stall=options.as_fast_as_possible,
    )
    settings = {
        NAME: {
            **options.record(),
            "iolog": str(iolog),
            "requests": summary.counts,
            "offsets": summary.mapping,
            "usable_bytes": usable,
            "resized": summary.resized,
        }
    }
    return PlanSpec(name=NAME, rounds=((workload,),), options=settings)


def synthetic_workload(found: SyntheticFit, options: ReplayOptions, usable: int) -> Workload:
    """The fitted job as a workload of ``options.duration_s`` on ``usable`` bytes."""
    if not found.read_bssplit and not found.write_bssplit:
        raise UsageError(f"workload {options.workload} has no reads or writes to synthesise")
    largest = max(size for size, _ in (*found.read_bssplit, *found.write_bssplit))
    span = max(found.span_bytes, largest)
    return Workload(
        SYNTHETIC,
        RW.RANDRW,
        bs_bytes=largest,
        bssplit=found.read_bssplit,
        write_bssplit=found.write_bssplit,
        rwmixread_pct=found.rwmixread_pct,
        iodepth=found.iodepth,
        ioengine=options.ioengine,
        size_bytes=min(span, usable),
        runtime_s=options.duration_s or 60.0,
        random_distribution=found.random_distribution,
        random_pct=found.read_random_pct,
        write_random_pct=found.write_random_pct,
    )


def synthetic_plan(found: SyntheticFit, options: ReplayOptions, target: TargetInfo) -> PlanSpec:
    """The fitted synthetic workload on ``target``."""
    usable = min(target.capacity_bytes, options.size_bytes or target.capacity_bytes)
    workload = synthetic_workload(found, options, usable)
    settings = {NAME: {**options.record(), "match_pct": round(found.match_pct, 2)}}
    return PlanSpec(name=NAME, rounds=((workload,),), options=settings)
