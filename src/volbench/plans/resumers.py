"""The ways a stored run goes on after it stopped, each the ``resume`` member of its
plan's row in :data:`volbench.plans.kinds.KINDS`: a :data:`Resumer`.

Most plans resume with :class:`Tests`: their planned tests that have no stored
result run again, each whole, numbered after the committed rounds. What is done is
what the store holds: the tests whose results were committed, read again from fio's
own JSON of each committed round (:func:`committed_tests`). A test cut short (by
Ctrl-C, a kill or a stall) has no stored result, so it runs again whole. An adaptive
plan is rebuilt from its recorded options (``Tests.rebuild``); a plan whose rounds
run their tests at once regroups its recorded tests (``Tests.together``). Plans that
go on otherwise (a PTS run after its last committed round, a QoS verification's
tenants again together) keep their resumer in their own package; a plan that cannot
go on has :func:`never`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import RunRecord, RunSettings, TargetInfo, TestResult, Workload
from volbench.plans.placement.placed import Resuming, placed_again
from volbench.plans.runs import fill
from volbench.plans.runs.engine import proceed, recorded_engine
from volbench.plans.runs.execution import Outcome, PlanSpec, RoundRunner, Session
from volbench.plans.runs.round import run_round

Resumer = Callable[[Session, RunRecord, Resuming], Outcome]
"""How a plan's stored run goes on: given the session, the run as stored (without
fio's outputs) and what ``volbench resume`` was told; the run's outcome."""

Rebuilder = Callable[[RunSettings], PlanSpec]
"""An adaptive plan (its next round chosen from results) from its run's settings."""

Regrouper = Callable[[RunSettings], tuple[tuple[Workload, ...], ...]]
"""A plan's rounds from its run's settings (its recorded tests in their rounds)."""


def committed_tests(run: RunRecord) -> list[TestResult]:
    """The run's tests with stored results, in run order, from fio's JSON of each round
    (the aggregate of a multi-place round)."""
    stored = {(r.round, r.test) for r in run.aggregate}
    tests: list[TestResult] = []
    for round_no, raw in enumerate(run.raw_outputs):
        output = parse(raw)
        found = place_tests(output)[0] if run.settings.places else group_tests(output)
        tests += [t for t in found if (round_no, t.name) in stored]
    return tests


@dataclass(frozen=True)
class Tests:
    """A run goes on with its planned tests that have no stored result, each whole."""

    rebuild: Rebuilder | None = None
    """For an adaptive plan: how it is rebuilt from its run's settings (None: its
    recorded rounds are all there is to resume)."""
    together: Regrouper | None = None
    """For a plan whose rounds run their tests at once (a job file's groups): its
    rounds from its settings (None: each recorded test is a round of its own)."""

    def plan(self, run: RunRecord) -> PlanSpec:
        """The plan of a stored run, to continue it; UsageError when it cannot be rebuilt."""
        planned = run.settings.planned
        if planned is None:
            raise UsageError(
                f"run {run.id} was recorded by a volbench that did not keep its plan: "
                "it cannot be resumed (start it again)"
            )
        together = self.together
        rounds = together(run.settings) if together else tuple((w,) for w in planned)
        next_round, rebuilt_together = None, False
        if run.settings.adaptive:
            if self.rebuild is None:
                raise UsageError(f"run {run.id}: {run.plan} runs cannot be resumed")
            rebuilt = self.rebuild(run.settings)
            next_round, rebuilt_together = rebuilt.next_round, rebuilt.together
            if next_round is not None and any(w.name == fill.NAME for w in planned):
                next_round = fill.hidden(next_round)  # as it ran: without seeing its fill
        return PlanSpec(
            run.plan,
            rounds,
            run.settings.options,
            run.non_compliant,
            next_round,
            together=together is not None or rebuilt_together,
        )

    def run_again(
        self,
        session: Session,
        run: RunRecord,
        target: TargetInfo,
        round_runner: RoundRunner = run_round,
    ) -> Outcome:
        """Continue ``run`` (read with its raw outputs) on ``target``, checked and ready:
        its unfinished tests, numbered after its committed rounds, in its own folder."""
        plan = self.plan(run)
        done = committed_tests(run)
        workdir = run.logs_dir(session.runs_dir)
        session.store.reopen_run(run.id)
        engine = recorded_engine(run)
        return proceed(
            session, run.id, plan, target, engine, workdir, round_runner=round_runner, done=done
        )

    def __call__(self, session: Session, record: RunRecord, how: Resuming) -> Outcome:
        """The planned tests of ``record`` without a stored result, on its places made
        ready again (:func:`volbench.plans.placement.placed.placed_again`)."""
        record = session.store.get_run(record.id)  # fio's outputs: which tests are done
        plan = self.plan(record)
        writes = any(w.rw.writes for round_ in plan.rounds for w in round_)
        with placed_again(session.reporter, record, writes, how) as place:
            done = len(committed_tests(record))
            session.reporter.note(f"resuming run {record.id}: {done} tests done")
            return self.run_again(session, record, place.target, place.round_runner)


PLANNED = Tests()
"""Most plans' resumer: their planned tests without a stored result, as recorded."""


def never(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """A run that cannot go on (an import, a capture: start it again)."""
    raise UsageError(f"run {record.id} is a {record.plan} run: it cannot be resumed")
