"""The dry run of a PTS run: every distinct cell's fio job file, phase by phase, with
the rounds and fio processes it takes and its duration, from the tests' own plans
(:mod:`volbench.plans.pts.catalog`: each test's ``phase_rounds`` and ``estimate``).

A steady-state phase repeats its round 5 to ``max_rounds`` times; WSAT repeats its
sample to its limit. Preconditioning (WIPC) and WSAT write a multiple of the active
range, so their time depends on the device's sequential write speed: a real run
measures it with a 2-second write probe, which a dry run may not do. Their time is
left out of the duration unless ``write_speed`` (bytes/s) is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.model import TargetInfo, Workload
from volbench.plans.placement.preview import PlacePreview
from volbench.plans.pts import catalog, driver, state
from volbench.plans.pts.estimate import estimate
from volbench.plans.pts.options import PtsOptions
from volbench.plans.runs.preview import FIO_START_S, DryRun, job_texts
from volbench.units import format_bytes

UNKNOWN_SPEED = 1e15
"""A write speed so high that size-based writes take no time (bytes/s)."""


def pts_dry_run(
    options: PtsOptions, place: PlacePreview, ioengine: str | None, runs_dir: Path
) -> DryRun:
    """The dry run of a PTS run of ``options`` where the look at its places found
    ``place`` (on several, the first): its tests fitted to the target's logical
    blocks, the ioengine it would use (``ioengine`` when given)."""
    engine, found = place.engine(ioengine)
    fitted = driver.fit_target(options, place.target, None)
    return pts_preview(fitted, place.target, engine, runs_dir, (*place.said, *found))


def pts_preview(
    options: PtsOptions,
    target: TargetInfo,
    engine: str,
    runs_dir: Path,
    notes: Sequence[str] = (),
    write_speed: float | None = None,
) -> DryRun:
    """What a PTS run of ``options`` on ``target`` would run (see the module docstring)."""
    active = state.active_bytes(options, target.capacity_bytes)
    rounds: list[tuple[str, Sequence[Workload]]] = []
    low = high = 0
    for test in catalog.tests_of(options):
        for phase in test.phases:
            for index, cells in enumerate(test.phase_rounds(options, active, phase)):
                at_least, at_most = test.repeats(options, phase)
                low += at_least * len(cells)
                high += at_most * len(cells)
                rounds += [
                    (f"{test.name} {phase.value} round {index + 1}: {w.name}", (w,)) for w in cells
                ]
    files = job_texts(rounds, target, engine, runs_dir)
    fewest = [f"fio processes: {low} if every test is steady in {WINDOW_ROUNDS} rounds"]
    fewest = fewest if high > low else []
    guess = estimate(options, active, write_speed or UNKNOWN_SPEED)
    extra = [
        f"active range {format_bytes(active)} of {format_bytes(target.capacity_bytes)};"
        f" each cell a fio process of its own; {_rounds(options)}",
    ]
    if write_speed is None:
        extra.append(
            "duration without preconditioning (2 x the active range of 128 KiB writes per"
            " test) and WSAT's writes: their time depends on the device's sequential write"
            " speed, which the run measures first with a short write"
        )
    return DryRun(
        "pts",
        target,
        engine,
        files,
        high,
        high,
        guess.low_s + FIO_START_S * low,
        guess.high_s + FIO_START_S * high,
        (*notes, *extra, *fewest),
    )


def _rounds(options: PtsOptions) -> str:
    """How many steady-state rounds a test runs: "5 to 25", or every one of fewer than a
    window's (no steady state can then be evaluated)."""
    least, most = options.fewest_rounds, options.max_rounds
    if most > least:
        return f"steady-state rounds {least} to {most} per test"
    if most >= WINDOW_ROUNDS:
        return f"steady-state rounds: {most} per test"
    return f"{most} round(s) per test: no steady state (it needs a {WINDOW_ROUNDS}-round window)"
