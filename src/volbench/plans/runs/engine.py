"""The one run lifecycle every plan uses: record, steps, commit, finish, resume.

A plan under way is a :class:`Course`: asked for its next :class:`Step` from what
is committed, told of every round committed. The engine runs each test of a step
as a fio process of its own (a round of the store, committed as it ends: a test
fio finished is stored within about a second, whatever is killed afterwards), or
all of a step's tests at once where the plan needs that (QoS verification's
tenants, :attr:`Step.together`); the next test of a step is started ahead and held
until the one before ends (:class:`volbench.plans.runs.execution.Ahead`), so a step's
tests run back to back. It owns the run's heartbeat and its end:
``completed``, ``interrupted`` (Ctrl-C, with what was cut) or ``failed`` (the
error's one line stored, re-raised with how to continue the run). Starting a run
and resuming one are the same loop over what the store holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from volbench.errors import RunFailed, StoreError, UsageError, VolbenchError
from volbench.fio.job import planned_seconds
from volbench.model import RunRecord, RunSettings, RunStatus, TargetInfo, TestResult, Workload
from volbench.plans.runs.execution import (
    Ahead,
    Outcome,
    PlanSpec,
    RoundContext,
    RoundRunner,
    Session,
    new_workdir,
    os_failure,
    prepare_runs_dir,
)
from volbench.plans.runs.round import run_round
from volbench.plans.runs.round_watch import watch_for
from volbench.store.heartbeat import Heartbeat
from volbench.targets.hold import Hold
from volbench.targets.host import collect_host
from volbench.targets.identity import check_same
from volbench.targets.safety import check_round


@dataclass(frozen=True)
class Step:
    """What a plan runs next: its tests, and what comes before them.

    ``note`` is shown first, then ``prepare`` runs (a purge, cgroups to apply);
    ``together``: every test in one call of the round runner (at the same time).
    """

    workloads: tuple[Workload, ...]
    note: str | None = None
    prepare: Callable[[], None] | None = None
    together: bool = False


class Course(Protocol):
    """A plan under way: its next step from what is committed (None: done)."""

    def next_step(self) -> Step | None: ...

    def committed(self, round_no: int, tests: Sequence[TestResult]) -> None:
        """Rounds from ``round_no`` on were committed with these tests."""

    def foreseen(self) -> tuple[Workload, ...]:
        """A guess at the tests of the step after the current one, asked once the
        current step is known: the engine starts the first one's fio ahead, held until
        its round starts (killed unused when the guess was wrong). Empty: no guess."""


class PlanCourse:
    """A :class:`PlanSpec` under way: its rounds in order, then what ``next_round``
    asks for; the tests in ``done`` (already committed) are not run again."""

    def __init__(self, plan: PlanSpec, done: Sequence[TestResult] = ()) -> None:
        self.tests: list[TestResult] = list(done)
        self._finished = {t.name for t in done}
        self._rounds = _rounds(plan, self.tests)
        self._together = plan.together

    def next_step(self) -> Step | None:
        for workloads in self._rounds:
            todo = tuple(w for w in workloads if w.name not in self._finished)
            if todo:
                return Step(todo, together=self._together and len(todo) > 1)
        return None

    def committed(self, round_no: int, tests: Sequence[TestResult]) -> None:
        self.tests += tests
        self._finished |= {t.name for t in tests}

    def foreseen(self) -> tuple[Workload, ...]:
        """No guess: nothing is started ahead across its steps (within a step, the
        engine starts each next test's fio ahead)."""
        return ()


def _rounds(plan: PlanSpec, tests: Sequence[TestResult]) -> Iterator[Sequence[Workload]]:
    """The fixed rounds, then what ``next_round`` asks for (it sees ``tests`` as they grow)."""
    yield from plan.rounds
    while plan.next_round is not None:
        workloads = plan.next_round(tests)
        if not workloads:
            return
        yield workloads


def open_run(
    session: Session,
    plan: str,
    target: TargetInfo,
    labels: Mapping[str, str],
    settings: RunSettings,
    non_compliant: bool = False,
) -> tuple[int, Path]:
    """Record a new run (nothing runs yet) with a folder of its own for fio's files;
    return its id and that folder. The runs folder is checked first: a refusal is
    one line and nothing is stored."""
    prepare_runs_dir(session.runs_dir)
    workdir = new_workdir(session.runs_dir)
    settings = dataclasses.replace(settings, logs_dir=str(workdir))
    host = collect_host(session.runner.version())
    run_id = session.store.create_run(plan, target, host, labels, settings, non_compliant)
    engine = f"ioengine {settings.ioengine}, " if settings.ioengine else ""
    session.reporter.note(f"run {run_id}: {engine}logs in {workdir}")
    return run_id, workdir


def recorded_engine(run: RunRecord) -> str:
    """The ioengine a stored run used, to go on with it; UsageError when not recorded."""
    if not run.settings.ioengine:
        raise UsageError(
            f"run {run.id} recorded no ioengine: it cannot be resumed (start it again)"
        )
    return run.settings.ioengine


def drive(
    session: Session,
    run_id: int,
    course: Course,
    target: TargetInfo,
    engine: str,
    workdir: Path,
    *,
    round_runner: RoundRunner = run_round,
    note: Callable[[], str | None] = lambda: None,
) -> Outcome:
    """Run ``course``'s steps on run ``run_id`` until it has none left; return the outcome.

    New rounds are numbered after the committed ones. ``round_runner`` runs and
    commits one round (several places at once: :mod:`volbench.plans.placement.fleet`; a
    QoS plan's tenants: :mod:`volbench.plans.qos.verify`). ``note`` is stored with a
    completed run (e.g. hosts lost on the way), with the run's warnings. A
    :class:`VolbenchError` or an OS error marks the run failed and is raised again
    with the run's id and how to continue it.
    """
    tests: list[TestResult] = []
    try:
        record = session.store.get_run(run_id, raw=False)
        guard = Guard(local_targets(record), read_only(record))
        with Heartbeat(session.store, run_id), _releasing(session), guard.hold:
            while (step := course.next_step()) is not None:
                if step.note:
                    session.reporter.note(step.note)
                if step.prepare is not None:  # a purge writes, cgroups bind the device
                    session.runner.release()  # a fio started ahead on a wrong guess
                    guard.check(writes=True)
                    guard.release()  # blkdiscard opens the device exclusively itself
                    step.prepare()
                context = RoundContext(run_id, 0, target, engine, workdir)
                interruption = _run_step(session, context, course, step, round_runner, tests, guard)
                if interruption:
                    return _end(session, run_id, RunStatus.INTERRUPTED, tests, interruption)
    except KeyboardInterrupt:
        return _end(session, run_id, RunStatus.INTERRUPTED, tests, "interrupted by the user")
    except VolbenchError as exc:
        raise type(exc)(f"{exc} ({_failed(session, run_id, str(exc))})") from exc
    except OSError as exc:
        failure = os_failure(exc, session.runs_dir)
        raise RunFailed(f"{failure} ({_failed(session, run_id, str(failure))})") from exc
    message = "; ".join(m for m in (note(), *session.warnings) if m) or None
    return _end(session, run_id, RunStatus.COMPLETED, tests, message)


def _run_step(
    session: Session,
    run: RoundContext,
    course: Course,
    step: Step,
    round_runner: RoundRunner,
    tests: list[TestResult],
    guard: Guard,
) -> str | None:
    """Run one step's tests (one fio process each, or all in one call when together),
    each committed and told to ``course``; add them to ``tests``. ``run``: the context
    every round of the run shares (its own number and what comes after it are set for
    each). Returns what the user should be told when Ctrl-C cut the step short (else
    None). Before each, ``guard`` checks the targets; the host and the target's disk
    are watched while each runs (:mod:`volbench.plans.runs.round_watch`)."""
    batches = [step.workloads] if step.together else [(w,) for w in step.workloads]
    label = step.note or step.workloads[0].name
    shown = len(batches) > 1  # one progress line for the step's tests
    if shown:
        session.reporter.step_started(label, step.workloads, planned_seconds(step.workloads))
    ended = False
    try:
        for index, workloads in enumerate(batches):
            # checked again even when its fio was started ahead: a held fio's gate
            # opens only at its round, or after the check just before (upcoming_check)
            checked = any(w.rw.writes for w in workloads)
            guard.check(writes=checked)
            last = index + 1 == len(batches)
            upcoming = _guess(course, step) if last else batches[index + 1]
            writes = any(w.rw.writes for w in upcoming)
            if upcoming and writes and not checked:  # a check for writes covers reads
                guard.check(writes=writes)
            check = functools.partial(guard.check, writes=writes)
            ahead = Ahead(upcoming, last, check) if upcoming else None
            round_no = session.store.round_count(run.run_id)
            watch = watch_for(run.target)
            context = dataclasses.replace(run, round_no=round_no, ahead=ahead, watch=watch)
            try:
                if watch is not None:
                    watch.start()
                new, interruption = round_runner(session, context, workloads)
            finally:
                if watch is not None:
                    watch.stop()
            tests += new
            course.committed(round_no, new)
            if interruption:
                return interruption
        ended = True
    finally:
        if not ended:
            session.runner.release()
        if shown:
            session.reporter.step_done(label)
    return None


def _guess(course: Course, step: Step) -> tuple[Workload, ...]:
    """The first test of the course's guess at its next step (:meth:`Course.foreseen`):
    its fio is started ahead and held until its round starts."""
    return () if step.together else course.foreseen()[:1]


@contextlib.contextmanager
def _releasing(session: Session) -> Iterator[None]:
    """Kill the fio started ahead that no round took over, however the block ends."""
    try:
        yield
    finally:
        session.runner.release()


def local_targets(run: RunRecord) -> tuple[TargetInfo, ...]:
    """The targets of ``run`` on this machine: its places' (several at once), the files
    and devices its job file names, or its own."""
    if run.settings.places:
        return tuple(p.target for p in run.settings.places if p.target and p.host is None)
    if run.settings.named:
        return tuple(n.target for n in run.settings.named)
    return (run.target,)


def read_only(run: RunRecord) -> frozenset[str]:
    """The paths of ``run``'s targets its jobs only read (a job file's)."""
    return frozenset(n.target.path for n in run.settings.named if not n.writes)


@dataclass(frozen=True)
class Guard:
    """The run's targets on this machine, checked before every round and purge
    (:func:`volbench.targets.safety.check_round`): a target that is no longer what
    the run started on, or a device the running system took in the meantime, stops
    the run before fio opens it. From then on each is held open
    (:mod:`volbench.targets.hold`), until :meth:`release`: a block device checked for
    writing exclusively (the kernel refuses a mount or mkfs of it while fio writes), a
    file always; fio reaches what is held through the holding descriptor
    (:func:`~volbench.targets.hold.reach`), whatever its path names by then."""

    targets: tuple[TargetInfo, ...]
    read_only: frozenset[str] = frozenset()
    """Targets no test writes (checked as read, never held exclusively)."""
    hold: Hold = field(default_factory=Hold)

    def check(self, writes: bool) -> None:
        for info in self.targets:
            written = writes and info.path not in self.read_only
            check_round(info, written)
            identity = info.identity
            # opened now: what the path names is still what was checked, and is held;
            # held already: fio reaches it through the hold (reach), and check_round
            # has just compared what the path names with it
            if identity is None or not (written or identity.kind == "file"):
                continue
            if self.hold.take(identity):
                check_same(identity)

    def release(self) -> None:
        """Give the devices back (a purge's own tool claims the device: blkdiscard)."""
        self.hold.release()


def _end(
    session: Session, run_id: int, status: RunStatus, tests: list[TestResult], message: str | None
) -> Outcome:
    session.store.finish_run(run_id, status, message)
    return Outcome(run_id, status, tuple(tests), message)


def _failed(session: Session, run_id: int, error: str) -> str:
    """Store run ``run_id`` as failed; how that went, for the message ("stored as
    failed", or why the store could not take even that: it then shows as interrupted)."""
    try:
        session.store.finish_run(run_id, RunStatus.FAILED, error)
    except StoreError as exc:
        return f"run {run_id} could not be marked failed either: {exc}"
    return f"run {run_id} stored as failed; `volbench resume {run_id}` continues it"


def execute(
    session: Session,
    plan: PlanSpec,
    target: TargetInfo,
    labels: Mapping[str, str],
    ioengine: str | None = None,
    *,
    round_runner: RoundRunner = run_round,
    places: RunSettings | None = None,
    note: Callable[[], str | None] = lambda: None,
) -> Outcome:
    """Record a new run of ``plan`` on ``target`` and run it (:func:`drive`).

    The settings record the planned tests (``planned``, one fio process each) and
    whether more are chosen from results (``adaptive``), so ``volbench resume`` can
    continue the run (:mod:`volbench.plans.resumption`); ``places`` the targets of a
    run on several at once
    (:attr:`volbench.plans.placement.fleet_preparation.PreparedFleet.settings`).
    """
    engine = ioengine or session.runner.engine(Path(target.path))
    settings = dataclasses.replace(
        places or RunSettings(),
        ioengine=engine,
        planned=tuple(w for round_ in plan.rounds for w in round_),
        adaptive=plan.next_round is not None,
        options=plan.options,
    )
    run_id, workdir = open_run(session, plan.name, target, labels, settings, plan.non_compliant)
    course = PlanCourse(plan.one_test_per_round())
    return drive(
        session, run_id, course, target, engine, workdir, round_runner=round_runner, note=note
    )


def proceed(
    session: Session,
    run_id: int,
    plan: PlanSpec,
    target: TargetInfo,
    engine: str,
    workdir: Path,
    *,
    round_runner: RoundRunner = run_round,
    done: Sequence[TestResult] = (),
) -> Outcome:
    """Continue run ``run_id`` of ``plan``: the tests not in ``done``, one fio process each."""
    course = PlanCourse(plan.one_test_per_round(), done)
    return drive(session, run_id, course, target, engine, workdir, round_runner=round_runner)
