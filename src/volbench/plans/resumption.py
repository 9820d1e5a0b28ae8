"""Continuing a run that did not finish: the plan and what it has done, from the store.

Every plan started by :func:`volbench.plans.runs.engine.execute` records its tests in
run order (``planned``, one fio process each) and whether it is adaptive; an
adaptive plan is rebuilt from its recorded options by its row in the table of
plans (:data:`volbench.plans.kinds.KINDS`), which also says how each plan resumes.
What is done is what the store holds: the tests whose results were committed, read
again from fio's own JSON of each committed round. A test cut short (by Ctrl-C, a
kill or a stall) has no stored result, so it runs again whole. A PTS run continues
after its last committed round (:func:`volbench.plans.pts.driver.run`), a QoS
verification runs its tenants again together; :func:`resume` serves every plan.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.errors import TargetError, UsageError
from volbench.fio.parser import parse
from volbench.model import RunRecord, RunStatus, TargetInfo, TestResult
from volbench.plans import kinds
from volbench.plans.kinds import Resumes
from volbench.plans.placement.fleet_preparation import stored_fleet
from volbench.plans.placement.job_targets import NamedPath
from volbench.plans.placement.placed import Placement, placed
from volbench.plans.pts import driver
from volbench.plans.pts.options import PtsSetup
from volbench.plans.qos import verify as qos_verify
from volbench.plans.runs import fill
from volbench.plans.runs.engine import local_targets, proceed, recorded_engine
from volbench.plans.runs.execution import Outcome, PlanSpec, RoundRunner, Session
from volbench.plans.runs.round import run_round
from volbench.targets.identity import describe, identify, same
from volbench.targets.safety import check_round


def resumable_plan(run: RunRecord) -> PlanSpec:
    """The plan of a stored run, to continue it; UsageError when it cannot be rebuilt."""
    planned = run.settings.planned
    if planned is None:
        raise UsageError(
            f"run {run.id} was recorded by a volbench that did not keep its plan: "
            "it cannot be resumed (start it again)"
        )
    together = kinds.kind(run.plan).together
    rounds = together(run.settings) if together else tuple((w,) for w in planned)
    next_round, rebuilt_together = None, False
    if run.settings.adaptive:
        rebuild = kinds.kind(run.plan).rebuild
        if rebuild is None:
            raise UsageError(f"run {run.id}: {run.plan} runs cannot be resumed")
        rebuilt = rebuild(run.settings)
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


def resume_run(
    session: Session, run: RunRecord, target: TargetInfo, round_runner: RoundRunner = run_round
) -> Outcome:
    """Continue ``run`` (read with its raw outputs) on ``target``, checked and ready:
    its unfinished tests, numbered after its committed rounds, in its own folder."""
    plan = resumable_plan(run)
    done = committed_tests(run)
    workdir = run.logs_dir(session.runs_dir)
    session.store.reopen_run(run.id)
    engine = recorded_engine(run)
    return proceed(
        session, run.id, plan, target, engine, workdir, round_runner=round_runner, done=done
    )


@dataclass(frozen=True)
class Resuming:
    """What ``volbench resume`` was told: how PTS purges, and the safety options."""

    purging: driver.PurgeSettings
    destroy_data: Sequence[str] = ()
    force: bool = False


def resume(
    session: Session,
    run_ref: str,
    purging: driver.PurgeSettings,
    destroy_data: Sequence[str] = (),
    force: bool = False,
    same_volume: bool = False,
) -> Outcome:
    """Continue the stored run ``run_ref`` (an id or ``latest``) from its last committed
    work, the way its plan's row of :data:`volbench.plans.kinds.KINDS` says: a PTS run
    after its last committed round, a QoS verification's tenants again together, any
    other plan with the tests it has not finished. UsageError when the run is
    completed, still running (a live owner), measured its targets alone (``--solo``),
    cannot be rebuilt, or its target changed (TargetError: not the same file or device,
    :mod:`volbench.targets.identity`; UsageError: size; PTS: logical block size). The
    target is prepared as for a new run (safety checks: ``destroy_data``, ``force``);
    a run on several places at once reconnects them all, tunnels open until it ends.
    ``same_volume``: a target whose identity changed is recorded as it is now, when its
    kind and size are those the run started on (:func:`_same_volume`)."""
    store = session.store
    record = store.get_run(run_ref, raw=False)
    if record.status is RunStatus.COMPLETED:
        raise UsageError(f"run {record.id} is completed: nothing to resume")
    owner = store.running_owner(record.id)
    if owner is not None:
        raise UsageError(
            f"run {record.id} is still running ({owner}): stop it first, then resume it"
        )
    if same_volume:
        record = _same_volume(session, record)
    for info in local_targets(record):  # before anything touches it (purge, cgroups)
        try:
            check_round(info, writes=False)
        except TargetError as exc:
            if "no longer what the run started on" not in str(exc):
                raise
            raise TargetError(
                f"{exc}. If it is the same volume attached again (a new device number or"
                f" diskseq), `volbench resume {record.id} --same-volume` goes on with it"
            ) from exc
    if record.settings.solo:
        raise UsageError(f"run {record.id} measured targets alone (--solo): start it again")
    how = Resuming(purging, tuple(destroy_data), force)
    return _RESUMERS[kinds.kind(record.plan).resumes](session, record, how)


def _same_volume(session: Session, record: RunRecord) -> RunRecord:
    """``record`` with its target recorded as the path names it now, on the user's word
    that it is the same volume (a device removed and attached again gets a new diskseq,
    a reconnected disk a new number). Refused in one line unless the run has one target
    on this machine, of the same kind and size, and with the same source where both
    name one (a WWID or serial, a loop device's backing file and offset): a different
    source is a different volume. The change is said now and stored with the run's end."""
    then = record.target.identity
    if record.settings.places or record.settings.named or then is None:
        raise UsageError(
            f"run {record.id}: --same-volume takes a run on one target on this machine"
        )
    now = identify(then.path)
    if same(then, now):
        return record
    other_source = bool(now.source and then.source and now.source != then.source)
    if other_source or (now.kind, now.capacity_bytes) != (then.kind, then.capacity_bytes):
        raise UsageError(
            f"run {record.id}: {then.path} is now {describe(now)}, not the same kind,"
            f" size and source as {describe(then)}: it cannot be the same volume (start a"
            " new run)"
        )
    target = dataclasses.replace(record.target, identity=now)
    session.store.retarget_run(record.id, target)
    said = (
        f"target {then.path} recorded again as {describe(now)} (was {describe(then)}):"
        " the same volume, as --same-volume said"
    )
    session.reporter.note(f"run {record.id}: {said}")
    session.warn(said)
    return dataclasses.replace(record, target=target)


@contextlib.contextmanager
def _placed_again(
    session: Session, record: RunRecord, writes: bool, how: Resuming
) -> Iterator[Placement]:
    """The places of ``record`` ready again, as they were (UsageError: a size changed)."""
    fleet = stored_fleet(record.settings) if record.settings.places else None
    path = record.target.path
    named = [NamedPath(n.target.path, n.writes) for n in record.settings.named]
    with placed(
        fleet, path, writes, session.reporter, None, how.destroy_data, how.force, named
    ) as place:
        then = [n.target for n in record.settings.named] or [record.target]
        now = [n.target for n in place.named] or [place.target]
        for before, after in zip(then, now, strict=True):
            if after.capacity_bytes != before.capacity_bytes:
                raise UsageError(
                    f"{before.path} changed size since run {record.id} started: cannot resume"
                )
        yield place


def _resume_tests(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """The planned tests without a stored result, each run again whole."""
    record = session.store.get_run(record.id)  # fio's outputs: which tests are done
    plan = resumable_plan(record)
    writes = any(w.rw.writes for round_ in plan.rounds for w in round_)
    with _placed_again(session, record, writes, how) as place:
        done = len(committed_tests(record))
        session.reporter.note(f"resuming run {record.id}: {done} tests done")
        return resume_run(session, record, place.target, place.round_runner)


def _resume_rounds(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """A PTS run after its last committed round (:func:`volbench.plans.pts.driver.run`)."""
    with _placed_again(session, record, True, how) as place:
        planned = record.setup(PtsSetup).options.logical_block_bytes
        if driver.logical_block_bytes(place.target, place.fleet) != planned:
            raise UsageError(
                f"{record.target.path} no longer has the {planned}-byte logical blocks run "
                f"{record.id} was planned for: cannot resume"
            )
        session.store.reopen_run(record.id)
        committed = session.store.round_count(record.id)
        session.reporter.note(f"resuming run {record.id} after {committed} committed cells")
        return driver.run(session, record.id, place.target, how.purging, places=place.fleet)


def _resume_together(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """A QoS verification's tenants again, together, in their cgroups."""
    session.reporter.note(f"resuming run {record.id}: its tenants run again together")
    return qos_verify.resume(session, session.store.get_run(record.id))


def _never(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    raise UsageError(f"run {record.id} is a {record.plan} run: it cannot be resumed")


_RESUMERS: Mapping[Resumes, Callable[[Session, RunRecord, Resuming], Outcome]] = {
    Resumes.TESTS: _resume_tests,
    Resumes.ROUNDS: _resume_rounds,
    Resumes.TOGETHER: _resume_together,
    Resumes.NEVER: _never,
}
"""How each way of resuming of :class:`volbench.plans.kinds.Resumes` goes."""
