"""The check "a mixed average": the test's figure averages parts that differ.

From the test's per-second IOPS (fio's own logs, every job and direction added:
analysis/stored_bursts.py), by analysis/step_series.py:

- a burst: a ceiling, then a lower baseline (a credit bucket drained: AWS gp2, Azure
  bursting, QEMU's ``iops-total-max``; analysis/burst_series.py measures its credits);
  the figure is neither the burst's nor the baseline's;
- a step: the rate changed level inside the test (a limiter's cap changed, a neighbour
  came or went): each part's figure is named;
- drift: no step, but the test never settled: its last third differs from its first
  beyond their spread; the runtime that would settle it is suggested.

A test shorter than two levels' worth of windows (``MIN_PLATEAU_S`` each) cannot show a
step, and one shorter than three cannot show drift: it is not checked, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from volbench.analysis.burst_series import MIN_PLATEAU_S, find_burst
from volbench.analysis.step_series import SETTLE_BAND, Drift, Level, drift, levels, min_windows
from volbench.analysis.validity import Checked, Mark, MarkKind, Part
from volbench.analysis.validity_facts import TestFacts

UNIT = "IOPS"


def _parts(found: Sequence[Level]) -> tuple[Part, ...]:
    """Each level as a part; all but the last are the marked ones (the last is where the
    volume ended up)."""
    last = len(found) - 1
    return tuple(
        Part(
            level.start_s,
            level.end_s,
            level.level,
            UNIT,
            "burst"
            if len(found) == 2 and i == 0 and level.level > found[1].level
            else ("after the change" if i == last else f"part {i + 1}"),
            marked=i != last,
        )
        for i, level in enumerate(found)
    )


def _average(facts: TestFacts) -> float:
    return sum(r.iops for r in facts.rows)


def _stepped(facts: TestFacts, found: Sequence[Level]) -> Mark:
    average = _average(facts)
    parts = _parts(found)
    described = "; ".join(
        f"{level.level:,.0f} {UNIT} from {level.start_s:,.0f} s to {level.end_s:,.0f} s"
        for level in found
    )
    evidence = [f"its per-second rate held {len(found)} levels: {described}"]
    figures = {
        **{f"iops_part{i + 1}": level.level for i, level in enumerate(found)},
        **{f"start_s_part{i + 1}": level.start_s for i, level in enumerate(found)},
        "iops_average": average,
    }
    burst = find_burst(facts.rates, UNIT) if len(found) == 2 else None
    if burst is not None and found[0].level > found[1].level:
        evidence.append(burst.sentence())
        needed = burst.credits / (SETTLE_BAND * burst.baseline) if burst.baseline > 0 else 0.0
        figures.update(
            burst_iops=burst.ceiling,
            burst_s=burst.seconds,
            baseline_iops=burst.baseline,
            credits_ios=burst.credits,
        )
        problem = (
            f"the rate fell inside the test, from {burst.ceiling:,.0f} to"
            f" {burst.baseline:,.0f} {UNIT} (a burst's credits ran out, or a cap was lowered):"
            f" the average {average:,.0f} is neither"
        )
        advice = (
            f"for the baseline, drain the burst first (volbench run limits does) or run at"
            f" least {needed:,.0f} s, so it is within {SETTLE_BAND:.0%} of the average; for"
            f" the burst, a test within its {burst.seconds:,.0f} s; if a cap changed, run"
            " again when it holds"
        )
    else:
        problem = (
            "the rate changed level inside the test, "
            + ", then ".join(f"{p.value:,.0f}" for p in parts)
            + f" {UNIT}: the average {average:,.0f} is none of them"
        )
        advice = (
            "each part's figure is named: run the test again when the rate holds (a limiter"
            " changed its cap, or other work on the volume came or went), or take the part"
            " that matches what you meant to measure"
        )
    evidence.append(f"fio's figure, {average:,.0f} {UNIT}, is their average")
    return Mark(MarkKind.MIXED, problem, tuple(evidence), advice, figures, parts)


def _unsettled(facts: TestFacts, found: Drift) -> Mark:
    average = _average(facts)
    runtime = facts.runtime_s
    evidence = [
        f"its first third ran at {found.first:,.0f} {UNIT} and its last at"
        f" {found.last:,.0f} (a median of each second; their spread {found.noise:,.0f})"
    ]
    figures = {
        "iops_first_third": found.first,
        "iops_last_third": found.last,
        "spread_iops": found.noise,
        "iops_average": average,
    }
    parts: tuple[Part, ...] = ()
    if found.settled_s is not None and found.settled_level is not None:
        suggested = max(found.runtime_s or 0.0, runtime)
        evidence.append(
            f"it held {found.settled_level:,.0f} {UNIT} from {found.settled_s:,.0f} s on"
        )
        figures.update(
            settled_s=found.settled_s,
            settled_iops=found.settled_level,
            suggested_runtime_s=suggested,
        )
        parts = (
            Part(0.0, found.settled_s, found.first, UNIT, "before it settled"),
            Part(found.settled_s, runtime, found.settled_level, UNIT, "settled", marked=False),
        )
        advice = (
            f"leave out its first {found.settled_s:,.0f} s (--ramp-time, fio ramp_time) or"
            f" run at least {suggested:,.0f} s, so the part before it settled is within"
            f" {SETTLE_BAND:.0%} of the average"
        )
    else:
        suggested = 3 * runtime
        figures["suggested_runtime_s"] = suggested
        advice = (
            f"it was still moving at its end: run at least {suggested:,.0f} s (three times"
            " as long), or to steady state (volbench pts)"
        )
    problem = (
        f"the test never settled: {average:,.0f} {UNIT} averages a rate that moved from"
        f" {found.first:,.0f} to {found.last:,.0f}"
    )
    return Mark(MarkKind.MIXED, problem, tuple(evidence), advice, figures, parts)


def check(facts: TestFacts) -> Checked:
    """The mixed mark of ``facts`` (module docstring), or none; what it could not check."""
    points = facts.rates
    if not points:
        return Checked(unchecked=(f"a mixed average: {facts.rates_note or 'no per-second log'}",))
    need = 2 * min_windows(points)
    if need == 0 or len(points) < need:
        return Checked(
            unchecked=(
                f"a mixed average: {len(points)} s of per-second log; a step shows in"
                f" {2 * MIN_PLATEAU_S:.0f} s at least",
            )
        )
    found = levels(points)
    if len(found) > 1:
        return Checked((_stepped(facts, found),))
    moved = drift(points)
    return Checked((_unsettled(facts, moved),)) if moved is not None else Checked()
