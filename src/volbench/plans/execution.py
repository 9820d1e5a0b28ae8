"""Running a plan: rounds of stonewalled workloads, each committed when it ends.

A plan is a sequence of rounds; each round is one fio process whose sections
are the round's workloads with ``stonewall`` between them (no idle gaps from
process start-up). When a round ends, its verbatim fio JSON and the merged
per-test results are committed before the next round starts, so a crash or
Ctrl-C loses at most the round that was running, and Ctrl-C keeps even that
round's finished cells (fio prints what it measured when interrupted).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from volbench.analysis.aggregate import group_tests
from volbench.errors import (
    FioError,
    RunFailed,
    RunStalled,
    StoreError,
    UsageError,
    VolbenchError,
)
from volbench.fio.job import LOG_AVG_MSEC, JobFile, planned_seconds, render
from volbench.fio.live import LiveSampler
from volbench.fio.logs import missing_logs
from volbench.fio.parser import parse
from volbench.fio.runner import RawRun, Runner, SubprocessRunner
from volbench.fio.stall import StallPolicy, StallWatch, stall_reason, utc_text
from volbench.model import FioOutput, RunStatus, Stall, TargetInfo, TestResult, Workload
from volbench.plans.reporter import Reporter
from volbench.store.heartbeat import Heartbeat
from volbench.store.repository import Store, default_data_dir
from volbench.targets.host import collect_host

NextRound = Callable[[Sequence[TestResult]], Sequence[Workload] | None]
"""An adaptive plan's next round, chosen from every test result so far (None: done)."""


@dataclass(frozen=True)
class PlanSpec:
    """What to run: a named plan, its settings as recorded, and its rounds.

    ``rounds`` run first, in order; then, for adaptive plans, ``next_round`` is
    asked for more until it returns None.
    """

    name: str
    rounds: tuple[tuple[Workload, ...], ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    non_compliant: bool = False
    next_round: NextRound | None = None

    @property
    def planned_s(self) -> float:
        return sum(planned_seconds(r) for r in self.rounds)

    def one_test_per_round(self) -> PlanSpec:
        """The same tests in the same order, each in a round (one fio process) of its
        own: a test fio finished is committed before the next one starts, so a fio
        or volbench killed later loses only the test that was running, and fio's
        interim documents describe one test's jobs, not every job of the plan.
        Costs one fio start per test (BENCHMARKS.md, "One fio process per test").
        An adaptive plan is asked for its next round when the tests of its
        previous one have all run."""
        if all(len(r) <= 1 for r in self.rounds) and self.next_round is None:
            return self
        rounds = tuple((w,) for r in self.rounds for w in r)
        inner = self.next_round
        if inner is None:
            return dataclasses.replace(self, rounds=rounds)
        pending: list[Workload] = []

        def next_round(tests: Sequence[TestResult]) -> Sequence[Workload] | None:
            if not pending:
                pending.extend(inner(tests) or ())
            return (pending.pop(0),) if pending else None

        return dataclasses.replace(self, rounds=rounds, next_round=next_round)


@dataclass(frozen=True)
class Outcome:
    run_id: int
    status: RunStatus
    tests: tuple[TestResult, ...]
    error: str | None = None


@dataclass
class Session:
    """The parts a run needs: where results go, how fio runs, who watches."""

    store: Store
    runner: Runner
    reporter: Reporter
    runs_dir: Path
    stall: StallPolicy = field(default_factory=StallPolicy)
    warnings: list[str] = field(default_factory=list)
    """Problems that did not stop the run (e.g. logs fio could not write), stored with it."""

    def warn(self, message: str) -> None:
        """A problem that does not stop the run: shown now, stored with the run."""
        self.warnings.append(message)
        self.reporter.note(f"warning: {message}")


def workload_record(workload: Workload) -> dict[str, Any]:
    """A workload as plain JSON-ready data (enum values as strings)."""
    record = dataclasses.asdict(workload)
    record["rw"] = workload.rw.value
    record["bssplit"] = [list(pair) for pair in workload.bssplit]
    return record


Split = Callable[[FioOutput], tuple[list[TestResult], list[TestResult]]]
"""A round's fio output -> (the run's tests, rows stored beside them: each place's
share of a multi-target round, :func:`volbench.analysis.aggregate.place_tests`)."""


def one_place(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
    """The tests of a round on one target: fio's jobs grouped by test."""
    return group_tests(output), []


JobLayout = Callable[[Path], JobFile]
"""The job file of a round, given its log folder."""


def run_round(
    session: Session,
    run_id: int,
    round_no: int,
    workloads: Sequence[Workload],
    target: TargetInfo,
    ioengine: str,
    workdir: Path,
    *,
    layout: JobLayout | None = None,
    split: Split = one_place,
    places: int = 1,
) -> tuple[list[TestResult], str | None]:
    """Run and commit one round; return its tests and, when Ctrl-C cut it short,
    what the user should be told about the interruption (else None).

    The job file is the workloads on ``target`` unless ``layout`` makes another
    (several targets at once, ``places`` of them: :mod:`volbench.plans.fleet`).
    Stalls seen are stored whatever happens; with ``session.stall.abort`` the first
    one stops fio, the finished tests are committed and :class:`RunStalled` is raised.
    """
    log_dir = workdir / f"round-{round_no:03d}"
    log_dir.mkdir(parents=True, exist_ok=True)
    job = layout(log_dir) if layout else JobFile(target.path, tuple(workloads), ioengine, log_dir)
    text = render(job)
    sampler = LiveSampler()
    think = {w.name: w.thinktime_s for w in workloads if w.thinktime_s}
    planned = {w.name: w.duration_s for w in workloads}
    watch = StallWatch(
        round_no, time.time(), workloads[0].name, session.stall.seconds, think, planned
    )
    opened: list[Stall] = []

    def warn(stalls: list[Stall]) -> None:
        for stall in stalls:
            opened.append(stall)
            session.reporter.note(f"warning: {stall_reason(stall)} (I/O outstanding)")

    def on_status(document: dict[str, Any]) -> None:
        sample = sampler.sample(document)
        if sample is not None:
            session.reporter.sample(sample)
        warn(watch.status(time.time(), document))

    def should_stop() -> bool:
        warn(watch.tick(time.time()))
        return session.stall.abort and bool(opened)

    session.reporter.round_started(round_no, workloads, planned_seconds(workloads))
    raw = session.runner.run(text, log_dir, on_status, should_stop)
    session.store.add_stalls(run_id, watch.finish(time.time()))
    if raw.interrupted and not raw.output.strip():  # fio had to be killed: nothing to keep
        killed = "fio did not stop and was killed" if raw.killed else "fio printed no result"
        return [], f"interrupted by the user; {killed}, round {round_no} has no results"
    stalled = stall_reason(opened[0]) if raw.stopped and opened else None
    if stalled and not raw.output.strip():
        raise RunStalled(f"{stalled}; fio did not end and was killed, the round has no output")
    also_cut = {opened[0].test} if stalled else set()  # it did not finish, whatever its runtime
    done = commit_round(
        session, run_id, round_no, raw, workloads, split, places, also_cut, folder=log_dir
    )
    if layout is None and isinstance(session.runner, SubprocessRunner):
        _check_logs(session, round_no, log_dir, done.tests)
    if stalled:
        raise RunStalled(stalled)
    check_exit(raw, done.failed)
    if not raw.interrupted:
        return done.tests, None
    cut = done.cut
    during = f" during {', '.join(sorted(cut))} (kept only in the raw fio output)" if cut else ""
    return done.tests, f"interrupted by the user{during}"


def _check_logs(
    session: Session, round_no: int, log_dir: Path, tests: Sequence[TestResult]
) -> None:
    """Warn (live, and in ``session.warnings`` stored with the run) when per-second logs
    fio should have written are missing or empty: fio does not report failed log
    writes (a full filesystem leaves 0-byte logs and exit code 0)."""
    long_enough = [t.name for t in tests if t.runtime_ms >= 2 * LOG_AVG_MSEC]
    missing = missing_logs(log_dir, long_enough)
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if missing[4:] else "")
        session.warn(
            f"fio's per-second logs of round {round_no} are missing or empty ({shown}) in"
            f" {log_dir}: is its filesystem full? ({RUNS_DIR_HINT})"
        )


@dataclass(frozen=True)
class Committed:
    """What :func:`commit_round` stored: the run's tests of the round, the tests left
    out as partial, and the tests (stored or not) whose fio jobs failed."""

    tests: list[TestResult]
    cut: set[str]
    failed: list[TestResult]


def commit_round(
    session: Session,
    run_id: int,
    round_no: int,
    raw: RawRun,
    workloads: Sequence[Workload],
    split: Split = one_place,
    places: int = 1,
    also_cut: Collection[str] = (),
    folder: Path | None = None,
) -> Committed:
    """Store one round's results (fio's JSON verbatim beside them) and report them.

    A round fio stopped early (Ctrl-C, a stall, a lost host) keeps only its tests
    that ran their whole runtime, plus ``also_cut`` left out. Raises FioError when
    fio printed no result. The stored workload of each test records ``places``:
    its aggregate's outstanding I/O is iodepth x numjobs x places. fio's output is
    also written to ``folder``/fio-output.json first, so a store that cannot be
    written (a full disk) loses nothing: the RunFailed message says where it is.
    """
    if not raw.output.strip():
        raise FioError(
            f"fio failed with exit code {raw.returncode}: {raw.last_error_line or 'no output'}"
        )
    kept = folder / OUTPUT_FILE if folder is not None else None
    if kept is not None:
        try:
            kept.write_text(raw.output)
        except OSError as exc:  # the store still takes it: a warning, not a failure
            session.warn(
                f"fio's output of round {round_no} could not be kept in {kept}: {exc.strerror}"
            )
            kept = None
    output = parse(raw.output)
    tests, shares = split(output)
    failed = [t for t in [*tests, *shares] if t.error]
    tests = [t for t in tests if any(d.active for d in t.directions.values())]
    cut = cut_short([*tests, *shares], workloads) if raw.interrupted or raw.stopped else set()
    cut |= set(also_cut)
    tests = [t for t in tests if t.name not in cut]
    shares = [t for t in shares if t.name not in cut]
    records = {w.name: {**workload_record(w), "places": places} for w in workloads}
    # fio's own clock for the end (its output's timestamp), volbench's for the start
    ended_s = output.timestamp_s or raw.ended_s
    try:
        session.store.add_round(
            run_id,
            round_no,
            raw.output,
            [*tests, *shares],
            records,
            started_at=utc_text(raw.started_s) if raw.started_s else None,
            ended_at=utc_text(ended_s) if ended_s else None,
        )
    except StoreError as exc:
        where = f"fio's output is kept in {kept}: `volbench import {kept}`" if kept else ""
        raise StoreFailed(f"round {round_no} could not be stored ({exc}); {where}") from exc
    session.reporter.round_done(round_no, tests or shares)
    return Committed(tests, cut, failed)


def check_exit(raw: RawRun, failed: Sequence[TestResult]) -> None:
    """Raise FioError when a job of the round failed or fio exited with an error
    (unless the user interrupted it)."""
    if raw.interrupted:
        return
    if failed:
        raise FioError(
            f"fio job {failed[0].name} failed with error {failed[0].error}: "
            f"{raw.last_error_line or 'see the job log'}"
        )
    if raw.returncode != 0:
        raise FioError(
            f"fio failed with exit code {raw.returncode}: {raw.last_error_line or 'no message'}"
        )


class RoundRunner(Protocol):
    """Runs and commits one round: :func:`run_round`'s signature."""

    def __call__(
        self,
        session: Session,
        run_id: int,
        round_no: int,
        workloads: Sequence[Workload],
        target: TargetInfo,
        ioengine: str,
        workdir: Path,
    ) -> tuple[list[TestResult], str | None]: ...


def cut_short(tests: Sequence[TestResult], workloads: Sequence[Workload]) -> set[str]:
    """Time-based tests that ran less than their runtime: partial, not results."""
    planned = {w.name: w.runtime_s for w in workloads if w.time_based and w.runtime_s}
    return {
        t.name
        for t in tests
        if t.name in planned and t.runtime_ms < 0.99 * 1000 * (planned[t.name] or 0.0)
    }


RUNS_DIR_HINT = "use --runs-dir to choose another folder for fio's logs"
OUTPUT_FILE = "fio-output.json"
"""fio's final document of a round, beside its job file and logs."""


class StoreFailed(RunFailed):
    """The store refused a finished round; fio's output was kept in a file."""


def prepare_runs_dir(runs_dir: Path) -> None:
    """Create the folder of the runs' fio logs and check it takes a file, before a run
    is recorded: a refusal is one line (UsageError) and nothing is stored. Only the
    default folder (in volbench's data folder) is made with its parents: a runs folder
    elsewhere must be in a folder that exists (a typo must not make folders under /)."""
    default = runs_dir == default_data_dir() / "runs"
    if not default and not runs_dir.exists() and not runs_dir.parent.exists():
        raise UsageError(
            f"--runs-dir {runs_dir}: the folder {runs_dir.parent} does not exist"
            " (create it first, or choose another --runs-dir)"
        )
    try:
        runs_dir.mkdir(parents=default, exist_ok=True)
        with tempfile.TemporaryFile(dir=runs_dir):
            pass
    except OSError as exc:
        raise UsageError(
            f"cannot write the runs folder {runs_dir}: {exc.strerror or exc} ({RUNS_DIR_HINT})"
        ) from exc


def os_failure(exc: OSError, runs_dir: Path) -> RunFailed:
    """An OS error during a run as one line naming the path (with the --runs-dir hint
    when the path is in the runs folder)."""
    name = exc.filename or ""
    hint = ""
    if name and Path(os.fsdecode(name)).resolve().is_relative_to(runs_dir.resolve()):
        hint = f" ({RUNS_DIR_HINT})"
    where = f": {os.fsdecode(name)}" if name else ""
    return RunFailed(f"{exc.strerror or exc}{where}{hint}")


def _rounds(plan: PlanSpec, tests: Sequence[TestResult]) -> Iterator[Sequence[Workload]]:
    """The fixed rounds, then what ``next_round`` asks for (it sees ``tests`` as they grow)."""
    yield from plan.rounds
    while plan.next_round is not None:
        workloads = plan.next_round(tests)
        if not workloads:
            return
        yield workloads


def new_workdir(runs_dir: Path) -> Path:
    """A folder of its own for one run's fio files under ``runs_dir``: named by time and
    a random token, never by the run's id alone (ids of two databases, or of a deleted
    and re-created run, are the same numbers)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return runs_dir / f"{stamp}-{uuid.uuid4().hex[:12]}"


def execute(
    session: Session,
    plan: PlanSpec,
    target: TargetInfo,
    labels: Mapping[str, str],
    ioengine: str | None = None,
    *,
    round_runner: RoundRunner = run_round,
    extra_settings: Mapping[str, Any] | None = None,
    note: Callable[[], str | None] = lambda: None,
) -> Outcome:
    """Record a new run of ``plan`` on ``target`` and run it (:func:`proceed`).

    The settings record the planned tests (``planned``) and the run's folder
    (``logs_dir``), so ``volbench resume`` can continue the run from them.
    """
    plan = plan.one_test_per_round()
    engine = ioengine or session.runner.engine(Path(target.path))
    host = collect_host(session.runner.version())
    prepare_runs_dir(session.runs_dir)
    workdir = new_workdir(session.runs_dir)
    settings = {
        **plan.settings,
        **(extra_settings or {}),
        "ioengine": engine,
        "logs_dir": str(workdir),
        "planned": [workload_record(w) for round_ in plan.rounds for w in round_],
        "adaptive": plan.next_round is not None,
    }
    run_id = session.store.create_run(plan.name, target, host, labels, settings, plan.non_compliant)
    session.reporter.note(f"run {run_id}: ioengine {engine}, logs in {workdir}")
    return proceed(
        session, run_id, plan, target, engine, workdir, round_runner=round_runner, note=note
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
    note: Callable[[], str | None] = lambda: None,
    done: Sequence[TestResult] = (),
) -> Outcome:
    """Run the rounds of ``plan`` (one test each) that are not in ``done``, committing
    each; return the outcome. A new run has nothing done; a resumed one has the tests
    already committed, and its new rounds are numbered after the committed ones.

    The run is stored as ``completed``, ``interrupted`` (Ctrl-C) or ``failed``
    (the error's one-line message is stored and re-raised; an OS error as
    :class:`RunFailed`). ``round_runner`` runs
    and commits one round (several targets at once: :mod:`volbench.plans.fleet`);
    ``note`` is stored with a completed run (e.g. hosts lost on the way).
    """
    plan = plan.one_test_per_round()
    tests: list[TestResult] = list(done)
    finished = {t.name for t in done}
    round_no = session.store.round_count(run_id)
    try:
        with Heartbeat(session.store, run_id):
            for workloads in _rounds(plan, tests):
                todo = [w for w in workloads if w.name not in finished]
                if not todo:
                    continue
                round_tests, interruption = round_runner(
                    session, run_id, round_no, todo, target, engine, workdir
                )
                round_no += 1
                tests += round_tests
                if interruption:
                    session.store.finish_run(run_id, RunStatus.INTERRUPTED, interruption)
                    return Outcome(run_id, RunStatus.INTERRUPTED, tuple(tests), interruption)
    except KeyboardInterrupt:
        session.store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted by the user")
        return Outcome(run_id, RunStatus.INTERRUPTED, tuple(tests), "interrupted")
    except VolbenchError as exc:
        stored = _mark_failed(session, run_id, str(exc))
        raise type(exc)(f"{exc} (run {run_id} {stored})") from exc
    except OSError as exc:
        failure = os_failure(exc, session.runs_dir)
        stored = _mark_failed(session, run_id, str(failure))
        raise RunFailed(f"{failure} (run {run_id} {stored})") from exc
    message = "; ".join(m for m in (note(), *session.warnings) if m) or None
    session.store.finish_run(run_id, RunStatus.COMPLETED, message)
    return Outcome(run_id, RunStatus.COMPLETED, tuple(tests), message)


def _mark_failed(session: Session, run_id: int, error: str) -> str:
    """Store run ``run_id`` as failed; how that went, for the message ("stored as
    failed", or why the store could not take even that: it then shows as interrupted)."""
    try:
        session.store.finish_run(run_id, RunStatus.FAILED, error)
    except StoreError as exc:
        return f"could not be marked failed either: {exc}"
    return "stored as failed"
