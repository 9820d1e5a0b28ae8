"""One round of a run: a fio process, its stall watch, and its commit to the store.

A round is one fio process (in every plan, one test: :mod:`volbench.plans.engine`
runs the tests of a plan's steps one by one). When it ends, fio's verbatim JSON
and the per-test results are committed before anything else runs, so a crash or
a kill loses at most the test that was running; Ctrl-C keeps what fio measured
up to it. This module also holds what a plan is (:class:`PlanSpec`), the parts a
run needs (:class:`Session`) and its runs folder.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
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
)
from volbench.fio.job import LOG_AVG_MSEC, JobFile, planned_seconds, render
from volbench.fio.live import LiveSampler
from volbench.fio.logs import missing_logs
from volbench.fio.parser import parse
from volbench.fio.runner import RawRun, Runner, SubprocessRunner
from volbench.fio.stall import StallPolicy, StallWatch, stall_reason, utc_text
from volbench.model import (
    FioOutput,
    RunStatus,
    Stall,
    StoredWorkload,
    TargetInfo,
    TestResult,
    Workload,
)
from volbench.plans.reporter import Reporter
from volbench.plans.round_watch import RoundWatch
from volbench.store.repository import Store, default_data_dir

NextRound = Callable[[Sequence[TestResult]], Sequence[Workload] | None]
"""An adaptive plan's next round, chosen from every test result so far (None: done)."""


@dataclass(frozen=True)
class PlanSpec:
    """What to run: a named plan, its own options as recorded (JSON-ready, each under
    a key of its own: :attr:`volbench.model.RunSettings.options`), and its rounds.

    ``rounds`` run first, in order; then, for adaptive plans, ``next_round`` is
    asked for more until it returns None.
    """

    name: str
    rounds: tuple[tuple[Workload, ...], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
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
    watch: RoundWatch | None = None
    """What watches the round under way (the engine sets it); its series are committed
    with the round (:mod:`volbench.plans.round_watch`)."""

    def warn(self, message: str) -> None:
        """A problem that does not stop the run: shown now, stored with the run."""
        self.warnings.append(message)
        self.reporter.note(f"warning: {message}")


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
    fio's per-second logs in ``folder`` are stored with the round (the folder is
    scratch space afterwards), and so are the host and device samples of
    ``session.watch``; logs that cannot be read are a warning.
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
    tests = [t for t in tests if any(d.active for d in t.directions.values())]
    cut = cut_short([*tests, *shares], workloads) if raw.interrupted or raw.stopped else set()
    cut |= set(also_cut)
    tests = [t for t in tests if t.name not in cut]
    shares = [t for t in shares if t.name not in cut]
    records = {w.name: StoredWorkload.of(w, places) for w in workloads}
    # fio's own clock for the end (its output's timestamp), volbench's for the start
    ended_s = output.timestamp_s or raw.ended_s
    try:
        series = read_series(folder, round_no) if folder is not None else []
    except OSError as exc:
        session.warn(f"fio's per-second logs of round {round_no} could not be read: {exc}")
        series = []
    if session.watch is not None:  # the host and device while fio ran
        named = workloads[0].name if len(workloads) == 1 else "round"
        series = [*series, *session.watch.take(round_no, named)]
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


def new_workdir(runs_dir: Path) -> Path:
    """A folder of its own for one run's fio files under ``runs_dir``: named by time and
    a random token, never by the run's id alone (ids of two databases, or of a deleted
    and re-created run, are the same numbers)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return runs_dir / f"{stamp}-{uuid.uuid4().hex[:12]}"
