"""One round of a run, whatever its place: its fio processes, their status and stall
watch, and the commit of what each printed to the store.

A round is one fio process on this machine (in every plan, one test:
:mod:`volbench.plans.runs.engine` runs the tests of a plan's steps one by one), one fio
client for targets on other hosts, or a fio process per QoS tenant at once: each a
:class:`Launch`, and :func:`run_round` the one path they all take. When a fio
process ends, fio's verbatim JSON and the per-test results are committed at once, so
a crash or a kill loses at most the test that was running; Ctrl-C keeps what fio
measured up to it. Where a step's next test is known (the round's
:class:`~volbench.plans.runs.execution.Ahead`), its fio is started ahead, held before its
first I/O, and let go as this round's fio ends well (:mod:`volbench.fio.held`): it
runs while this round is committed, and a kill during that commit loses at most these
two tests, which ``volbench resume`` runs again (a test is a result only once
committed).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from volbench.analysis.aggregate import group_tests
from volbench.errors import FioError, RunFailed, RunStalled, StoreError
from volbench.fio.client import HostFailure
from volbench.fio.job import LOG_AVG_MSEC, JobFile, logged, planned_seconds, render
from volbench.fio.logs import missing_logs
from volbench.fio.parser import parse
from volbench.fio.request import Here, Ran
from volbench.fio.runner import RawRun
from volbench.fio.stall import stall_reason, utc_text
from volbench.model import FioOutput, StoredWorkload, TargetInfo, TestResult, Workload
from volbench.output_file import fio_folder
from volbench.plans.runs.execution import RUNS_DIR_HINT, RoundContext, Session, round_folder
from volbench.plans.runs.round_status import RoundStatus
from volbench.plans.runs.round_watch import Watch
from volbench.targets.hold import reach, reached

Split = Callable[[FioOutput], tuple[list[TestResult], list[TestResult]]]
"""A round's fio output -> (the run's tests, rows stored beside them: each place's
share of a multi-target round, :func:`volbench.analysis.aggregate.place_tests`)."""


def one_place(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
    """The tests of a round on one target: fio's jobs grouped by test."""
    return group_tests(output), []


JobLayout = Callable[[Path], JobFile]
"""The job file of a round, given its log folder."""


@dataclass(frozen=True)
class Process:
    """One fio process of a round: its tests, the folder of its job file, logs and
    output, and what messages call it (None: the round's only process)."""

    workloads: tuple[Workload, ...]
    folder: Path
    label: str | None = None

    @property
    def fio(self) -> str:
        return f"fio of {self.label}" if self.label else "fio"


class Launch(Protocol):
    """How a round's fio starts on its place: one process here (:class:`LocalLaunch`),
    one fio client for other hosts (:class:`volbench.plans.placement.fleet.HostsLaunch`), or a
    process per QoS tenant at once (:class:`volbench.plans.qos.verify.TenantsLaunch`).
    Every launch reaches fio through ``session.runner`` (replayable in tests)."""

    @property
    def watched(self) -> bool:
        """fio prints status documents (live figures, stall watch); not fio's client."""
        ...

    @property
    def keep_going(self) -> bool:
        """A host that fails leaves the others running, and the run goes on without it."""
        ...

    @property
    def checks_logs(self) -> bool:
        """fio's per-second logs of the round are this machine's, named after the tests."""
        ...

    def processes(self, folder: Path, workloads: Sequence[Workload]) -> list[Process]:
        """The round's fio processes, their files under the round's ``folder``."""
        ...

    def planned_s(self, workloads: Sequence[Workload]) -> float:
        """How long the round is planned to take, in seconds."""
        ...

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        """Run the processes to their end (or Ctrl-C, or ``status.should_stop``): one
        output per :class:`Process` in order, and the hosts that could not run their share."""
        ...


class OneProcess:
    """A launch whose round is one fio process, its tests one after the other."""

    def processes(self, folder: Path, workloads: Sequence[Workload]) -> list[Process]:
        return [Process(tuple(workloads), folder)]

    def planned_s(self, workloads: Sequence[Workload]) -> float:
        return planned_seconds(workloads)


@dataclass(frozen=True)
class LocalLaunch(OneProcess):
    """One fio process on this machine: the workloads on ``target``, the tests of a job
    file on the ``files`` it names (each checked), or the job file ``layout`` makes
    (several targets at once: :mod:`volbench.plans.placement.fleet`)."""

    layout: JobLayout | None = None
    watched: bool = True
    keep_going: bool = False
    files: tuple[str, ...] = ()

    @property
    def checks_logs(self) -> bool:
        return self.layout is None  # several targets: logs are named TEST@N

    def _job(
        self, target: TargetInfo, workloads: tuple[Workload, ...], ioengine: str, folder: Path
    ) -> JobFile:
        """The job file of ``workloads`` with its logs in ``folder``: the targets as fio
        reaches them, the checked files themselves (:func:`volbench.targets.hold.reach`)."""
        if self.files:
            return JobFile(
                "", workloads, ioengine, folder, held=reached(self.files), files=self.files
            )
        path, held = reach(target.path), reached((target.path,))
        return JobFile(path, workloads, ioengine, folder, held=held)

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        (process,) = processes
        folder = process.folder
        target, ioengine = context.target, context.ioengine
        job = (
            self.layout(folder)
            if self.layout
            else self._job(target, process.workloads, ioengine, folder)
        )
        ahead = context.ahead
        if ahead is not None and ahead.workloads and not self.layout:
            after = round_folder(context.workdir, context.round_no + 1)
            upcoming = self._job(target, ahead.workloads, ioengine, after)
            session.runner.prefetch(render(upcoming), after, not ahead.guessed, ahead.check)
        on_status = functools.partial(status.on_status, 0)
        return session.runner.execute(Here(render(job), folder, on_status, status.should_stop))


class HostsLost(FioError):
    """Every host of a round was lost before fio printed anything for it."""

    def __init__(self, failures: Sequence[HostFailure]) -> None:
        self.failures = tuple(failures)
        super().__init__("; ".join(f"host {f.host} {f.reason}" for f in failures))


def run_round(
    session: Session,
    context: RoundContext,
    workloads: Sequence[Workload],
    *,
    launch: Launch = LocalLaunch(),
    split: Split = one_place,
    places: int = 1,
) -> tuple[list[TestResult], str | None]:
    """Run and commit one round, whatever its place (``launch``); return its tests and,
    when Ctrl-C cut it short, what the user should be told about it (else None).

    Each fio process's output is committed as a round of the store (numbered from
    ``context.round_no``) before anything else happens; ``split`` and ``places`` say how its
    jobs make tests (several targets at once: :mod:`volbench.plans.placement.fleet`). Stalls
    seen are stored whatever happens; with ``session.stall.abort`` the first one stops
    fio, the finished tests are committed and :class:`RunStalled` is raised. A failed
    fio (or a lost host, unless the launch goes on without it) raises FioError once
    what the others measured is stored; :class:`HostsLost` when no host printed anything.
    """
    run_id, round_no = context.run_id, context.round_no
    folder = context.folder
    processes = launch.processes(folder, workloads)
    for process in processes:
        fio_folder(process.folder)
    status = RoundStatus(
        session.reporter,
        session.stall,
        round_no,
        [p.workloads for p in processes],
        watched=launch.watched,
    )
    session.reporter.round_started(round_no, workloads, launch.planned_s(workloads))
    try:
        launched = launch.start(session, context, processes, status)
    finally:
        session.store.add_stalls(run_id, status.finish(time.time()))
    raws = launched.raws
    if launched.failures and not any(raw.output.strip() for raw in raws):
        raise HostsLost(launched.failures)
    stalled = (
        stall_reason(status.opened[0])
        if status.opened and any(raw.stopped for raw in raws)
        else None
    )
    tests: list[TestResult] = []
    cut: set[str] = set()
    problems: list[str] = []
    unsaved: list[str] = []
    committed = 0
    for process, raw in zip(processes, raws, strict=True):
        if not raw.output.strip():
            if raw.interrupted:  # fio had to be killed: nothing to keep
                unsaved.append(
                    "fio did not stop and was killed" if raw.killed else "fio printed no result"
                )
            elif stalled:
                raise RunStalled(
                    f"{stalled}; fio did not end and was killed, the round has no output"
                )
            else:
                problems.append(
                    f"{process.fio} failed with exit code {raw.returncode}: "
                    f"{raw.last_error_line or 'no output'}"
                )
            continue
        also_cut = {status.opened[0].test} if stalled else set()  # it did not finish
        done = commit_round(
            session,
            run_id,
            round_no + committed,
            raw,
            process.workloads,
            split,
            places,
            also_cut,
            folder=process.folder,
            watch=context.watch,
        )
        committed += 1
        tests += done.tests
        cut |= done.cut
        if launch.checks_logs and session.runner.writes_logs:
            ours = {w.name for w in process.workloads if logged(w)}
            logged_tests = [t for t in done.tests if t.name in ours]
            _check_logs(session, round_no, process.folder, logged_tests, process.workloads)
        if not raw.interrupted and not launched.failures:
            problems += _failures(process, raw, done.failed, done.ran)
    if unsaved and not tests:
        return [], f"interrupted by the user; {unsaved[0]}, round {round_no} has no results"
    if launched.failures and not launch.keep_going:
        lost = "; ".join(f"host {f.host} {f.reason}" for f in launched.failures)
        raise FioError(
            f"{lost} in round {round_no}: the other hosts were stopped and what they "
            "measured is stored (use --keep-going to go on without a failed host)"
        )
    if stalled:
        raise RunStalled(stalled)
    if problems:  # what the others measured is stored first
        raise FioError(problems[0])
    if not any(raw.interrupted for raw in raws):
        return tests, None
    during = f" during {', '.join(sorted(cut))} (kept only in the raw fio output)" if cut else ""
    return tests, f"interrupted by the user{during}"


def _did_io(test: TestResult) -> bool:
    return any(d.active for d in test.directions.values())


def _failures(
    process: Process, raw: RawRun, failed: Sequence[TestResult], ran: bool = True
) -> list[str]:
    """Why a fio process that printed its output failed: a job's error (or a job that
    did no I/O at all: fio refused it, as fio's server does a mounted device, with
    error 0), an output of no job for a round of some (``ran`` False: fio's server
    dropped every job, as one whose ``directory`` it lacks, and its client exits 0),
    else its exit code."""
    if not ran and process.workloads:
        return [
            f"{process.fio} ran none of the round's jobs: {raw.last_error_line or 'no message'}"
        ]
    if failed:
        first = failed[0]
        why = f"failed with error {first.error}" if first.error else "did no I/O at all"
        return [f"{process.fio} job {first.name} {why}: {raw.last_error_line or 'see the job log'}"]
    if raw.returncode != 0:
        return [
            f"{process.fio} failed with exit code {raw.returncode}: "
            f"{raw.last_error_line or 'no message'}"
        ]
    return []


def _check_logs(
    session: Session,
    round_no: int,
    log_dir: Path,
    tests: Sequence[TestResult],
    workloads: Sequence[Workload],
) -> None:
    """Warn (live, and in ``session.warnings`` stored with the run) when per-second logs
    fio should have written are missing or empty: fio does not report failed log
    writes (a full filesystem leaves 0-byte logs and exit code 0). Each job of a test
    writes its own logs, and a time-based job runs its planned runtime however long its
    group's jobs ran together (16 jobs of 1 s, started one after another, span over
    2 s): a test is checked when its jobs each ran two averaging windows."""
    planned = {w.name: 1000 * w.runtime_s for w in workloads if w.time_based and w.runtime_s}
    long_enough = [
        t.name
        for t in tests
        if min(t.runtime_ms, planned.get(t.name, t.runtime_ms)) >= 2 * LOG_AVG_MSEC
    ]
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
    out as partial, the tests (stored or not) whose fio jobs failed, and whether fio's
    output held any job at all."""

    tests: list[TestResult]
    cut: set[str]
    failed: list[TestResult]
    ran: bool = True


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
    watch: Watch | None = None,
) -> Committed:
    """Store one round's results (fio's JSON verbatim beside them) and report them.

    A round fio stopped early (Ctrl-C, a stall, a lost host) keeps only its tests
    that ran their whole runtime, plus ``also_cut`` left out. Raises FioError when
    fio printed no result. The stored workload of each test records ``places``:
    its aggregate's outstanding I/O is iodepth x numjobs x places. fio's output is
    also written to ``folder``/fio-output.json first, so a store that cannot be
    written (a full disk) loses nothing: the RunFailed message says where it is.
    fio's per-second logs in ``folder`` are stored with the round (the folder is
    scratch space afterwards), and so are the host and device samples of
    ``watch``; logs that cannot be read are a warning.
    """
    from volbench.fio.logs import read_series  # (to the imports above when they settle)

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
    if not (raw.interrupted or raw.stopped):  # a job fio refused: error 0, no I/O at all
        failed += [t for t in [*tests, *shares] if not t.error and not _did_io(t)]
    tests = [t for t in tests if _did_io(t)]
    cut = cut_short([*tests, *shares], workloads) if raw.interrupted or raw.stopped else set()
    cut |= set(also_cut)
    tests = [t for t in tests if t.name not in cut]
    shares = [t for t in shares if t.name not in cut]
    records = {w.name: StoredWorkload.of(w, places) for w in workloads}
    # fio's own clock for a local run's end (its output's timestamp), volbench's for the
    # start, and for a client/server run's end: its timestamp is its start
    ended_s = raw.ended_s if output.client_server else output.timestamp_s or raw.ended_s
    try:
        series = read_series(folder, round_no) if folder is not None else []
    except OSError as exc:
        session.warn(f"fio's per-second logs of round {round_no} could not be read: {exc}")
        series = []
    if watch is not None:  # the host and device while fio ran
        named = workloads[0].name if len(workloads) == 1 else "round"
        series = [*series, *watch.take(round_no, named)]
    try:
        session.store.add_round(
            run_id,
            round_no,
            raw.output,
            [*tests, *shares],
            records,
            started_at=utc_text(raw.started_s) if raw.started_s else None,
            ended_at=utc_text(ended_s) if ended_s else None,
            series=series,
        )
    except StoreError as exc:
        where = f"fio's output is kept in {kept}: `volbench import {kept}`" if kept else ""
        raise StoreFailed(f"round {round_no} could not be stored ({exc}); {where}") from exc
    session.reporter.round_done(round_no, tests or shares)
    return Committed(tests, cut, failed, bool(output.jobs))


def cut_short(tests: Sequence[TestResult], workloads: Sequence[Workload]) -> set[str]:
    """Time-based tests that ran less than their runtime: partial, not results."""
    planned = {w.name: w.runtime_s for w in workloads if w.time_based and w.runtime_s}
    return {
        t.name
        for t in tests
        if t.name in planned and t.runtime_ms < 0.99 * 1000 * (planned[t.name] or 0.0)
    }


OUTPUT_FILE = "fio-output.json"
"""fio's final document of a round, beside its job file and logs."""


class StoreFailed(RunFailed):
    """The store refused a finished round; fio's output was kept in a file."""
