"""Continuing a run that did not finish: the plan and what it has done, from the store.

Every plan started by :func:`volbench.plans.execution.execute` records its tests in
run order (``planned``, one fio process each) and whether it is adaptive; an
adaptive plan is rebuilt from its recorded options by :data:`ADAPTIVE`. What is
done is what the store holds: the tests whose results were committed, read again
from fio's own JSON of each committed round. A test cut short (by Ctrl-C, a kill
or a stall) has no stored result, so it runs again whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import RW, RunRecord, TargetInfo, TestResult, Workload
from volbench.plans import sweep
from volbench.plans.execution import (
    Outcome,
    PlanSpec,
    RoundRunner,
    Session,
    proceed,
    run_round,
)

ADAPTIVE: dict[str, Callable[[Mapping[str, Any]], PlanSpec]] = {
    sweep.NAME: lambda settings: sweep.find_max_plan(sweep.options_from(settings["sweep"])),
}
"""Plans whose next round depends on results: plan name -> the plan from its settings."""


def workload_from_record(record: Mapping[str, Any]) -> Workload:
    """A workload as :func:`volbench.plans.execution.workload_record` stored it."""
    known = set(Workload.__dataclass_fields__)
    values = {k: v for k, v in record.items() if k in known}
    values["rw"] = RW(values["rw"])
    values["bssplit"] = tuple(tuple(pair) for pair in values.get("bssplit", ()))
    return Workload(**values)


def resumable_plan(run: RunRecord) -> PlanSpec:
    """The plan of a stored run, to continue it; UsageError when it cannot be rebuilt."""
    planned = run.settings.get("planned")
    if not isinstance(planned, list):
        raise UsageError(
            f"run {run.id} was recorded by a volbench that did not keep its plan: "
            "it cannot be resumed (start it again)"
        )
    rounds = tuple((workload_from_record(record),) for record in planned)
    next_round = None
    if run.settings.get("adaptive"):
        if run.plan not in ADAPTIVE:
            raise UsageError(f"run {run.id}: {run.plan} runs cannot be resumed")
        next_round = ADAPTIVE[run.plan](run.settings).next_round
    return PlanSpec(run.plan, rounds, run.settings, run.non_compliant, next_round)


def committed_tests(run: RunRecord) -> list[TestResult]:
    """The run's tests with stored results, in run order, from fio's JSON of each round
    (the aggregate of a multi-place round)."""
    stored = {(r.round, r.test) for r in run.results if r.hostname is None}
    tests: list[TestResult] = []
    for round_no, raw in enumerate(run.raw_outputs):
        output = parse(raw)
        found = place_tests(output)[0] if run.settings.get("places") else group_tests(output)
        tests += [t for t in found if (round_no, t.name) in stored]
    return tests


def resume_run(
    session: Session, run: RunRecord, target: TargetInfo, round_runner: RoundRunner = run_round
) -> Outcome:
    """Continue ``run`` (read with its raw outputs) on ``target``, checked and ready:
    its unfinished tests, numbered after its committed rounds, in its own folder."""
    plan = resumable_plan(run)
    done = committed_tests(run)
    workdir = run.logs_dir(session.runs_dir)
    session.store.reopen_run(run.id)
    engine = str(run.settings["ioengine"])
    return proceed(
        session, run.id, plan, target, engine, workdir, round_runner=round_runner, done=done
    )
