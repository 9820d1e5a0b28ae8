"""The dry run of a ``run`` plan (a :class:`PlanSpec`): what it would run, as a
:class:`~volbench.plans.runs.preview.DryRun`, and the estimate printed before it starts.

It stays at the top of ``plans/``: an adaptive sweep's bound is read from the sweep's
own options (:func:`volbench.plans.sweep.options_from`). The record, the job files and
the costs are :mod:`volbench.plans.runs.preview`'s, shared with PTS and QoS.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from volbench.fio.job import planned_seconds
from volbench.model import TargetInfo
from volbench.plans.placement.preview import PlacePreview
from volbench.plans.runs import fill
from volbench.plans.runs.execution import PlanSpec
from volbench.plans.runs.preview import FIO_START_S, DryRun, JobText, job_texts
from volbench.plans.sweep import options_from


def plan_preview(
    plan: PlanSpec,
    target: TargetInfo,
    engine: str,
    runs_dir: Path,
    notes: Sequence[str] = (),
    texts: bool = True,
    named: Sequence[str] = (),
) -> DryRun:
    """The dry run of ``plan``: each test a fio process of its own, as the engine runs
    it (a plan whose rounds run ``together``: each round); an adaptive plan's later
    tests are chosen from results (its grid bounds them, when its settings name one).
    ``texts`` False: the figures without the job files (the estimate before a run).
    ``named``: the files a job file's tests open themselves."""
    rounds = list(plan.rounds)
    searching = plan.next_round is not None
    if plan.next_round is not None and all(w.name == fill.NAME for r in rounds for w in r):
        rounds.append(tuple(plan.next_round(()) or ()))  # a search: its first tests
    tests = [w for round_ in rounds for w in round_]
    units = (
        [(" + ".join(w.name for w in r), tuple(r)) for r in rounds]
        if plan.together
        else [(w.name, (w,)) for w in tests]
    )
    if texts:
        files = job_texts(units, target, engine, runs_dir, files=named)
    else:
        files = tuple(JobText(label, "", planned_seconds(ws)) for label, ws in units)
    low = sum(f.seconds for f in files) + FIO_START_S * len(files)
    high, extra = low, []
    processes = len(files)
    if searching:
        searched = [f for f in files if f.label != fill.NAME]  # the fill is not a search's
        more = _adaptive_bound(plan, len(searched))
        per_test = (
            sum(f.seconds for f in searched) / len(searched) + FIO_START_S if searched else 0.0
        )
        if plan.budget is not None:  # its own bound, each test's time its own
            high = plan.budget[1] + FIO_START_S * plan.budget[0]
            processes += more
        elif more:
            high = low + more * per_test
            processes += more
        extra.append(
            f"then more tests chosen from the results (adaptive), {more} at most"
            if more
            else "then more tests chosen from the results (adaptive)"
        )
    return DryRun(
        plan.name,
        target,
        engine,
        files,
        processes,
        len(tests) + (processes - len(files)),
        low,
        high,
        (*notes, *extra),
    )


def _adaptive_bound(plan: PlanSpec, known: int) -> int:
    """How many more tests an adaptive plan may run: within its budget, or the rest of
    a sweep's grid."""
    if plan.budget is not None:
        return max(0, plan.budget[0] - known)
    options = options_from(plan.options)
    if options is None:
        return 0
    return max(0, len(options.iodepths) * len(options.numjobs) - known)


def plan_dry_run(
    spec: PlanSpec, place: PlacePreview, ioengine: str | None, runs_dir: Path
) -> DryRun:
    """The dry run of ``spec`` where the look at its places found ``place``: its job
    files with logs under ``runs_dir``, the ioengine it would use (``ioengine`` when
    given) and what is said of the place, the fill and the ioengine."""
    filling = fill.note(spec)
    engine, found = place.engine(ioengine)
    notes = (*place.said, *([filling] if filling else []), *found)
    return plan_preview(spec, place.target, engine, runs_dir, notes, named=place.named)
