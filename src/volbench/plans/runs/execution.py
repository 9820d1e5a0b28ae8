"""What a plan is (:class:`PlanSpec`), the parts a run needs (:class:`Session`), how
a run ended (:class:`Outcome`), and its runs folder. A round of a run:
:mod:`volbench.plans.runs.round`."""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from volbench import output_file
from volbench.errors import (
    RunFailed,
    UsageError,
)
from volbench.fio.job import planned_seconds
from volbench.fio.runner import Runner
from volbench.fio.stall import StallPolicy
from volbench.model import RunStatus, TargetInfo, TestResult, Workload
from volbench.plans.runs.reporter import Reporter
from volbench.plans.runs.round_watch import Watch
from volbench.store.repository import Store, default_data_dir

NextRound = Callable[[Sequence[TestResult]], Sequence[Workload] | None]
"""An adaptive plan's next round, chosen from every test result so far (None: done)."""


@dataclass(frozen=True)
class PlanSpec:
    """What to run: a named plan, its own options as recorded (JSON-ready, each under
    a key of its own: :attr:`volbench.model.RunSettings.options`), and its rounds.

    ``rounds`` run first, in order; then, for adaptive plans, ``next_round`` is
    asked for more until it returns None. ``together``: each round's tests run at once,
    in one fio process (a job file's groups fio runs side by side); else each test of a
    round is a fio process of its own (:meth:`one_test_per_round`).
    """

    name: str
    rounds: tuple[tuple[Workload, ...], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    non_compliant: bool = False
    next_round: NextRound | None = None
    budget: tuple[int, float] | None = None
    """An adaptive plan bounded by time: at most this many tests, in at most this many
    seconds of fio runtime (``run limits --budget``)."""
    together: bool = False

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
        previous one have all run. A plan whose rounds run ``together`` keeps them."""
        if self.together or (all(len(r) <= 1 for r in self.rounds) and self.next_round is None):
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
    """The parts a run needs: where results go, how fio runs, who watches. What one
    round needs besides is its :class:`RoundContext`, passed in."""

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


@dataclass(frozen=True)
class Ahead:
    """The tests of the round after this one, when they are known and nothing comes
    between the two, or guessed: a round on this machine has the runner start their
    fio ahead, held before its first I/O, and let it go as its own fio ends
    (:meth:`volbench.fio.runner.Runner.prefetch`)."""

    workloads: tuple[Workload, ...]
    guessed: bool = False
    """A guess at the next step: held until its round starts (only then is it known),
    killed if another round comes."""
    check: Callable[[], None] | None = None
    """The targets' check of these tests, made again just before their fio's gate opens."""


@dataclass(frozen=True)
class RoundContext:
    """Everything about one round besides the session: which run and round it is, its
    place and ioengine, the run's folder of fio files, the round after it (when fio
    may be started ahead) and what watches the host and disk while it runs (its
    series are committed with the round, :mod:`volbench.plans.runs.round_watch`)."""

    run_id: int
    round_no: int
    target: TargetInfo
    ioengine: str
    workdir: Path
    ahead: Ahead | None = None
    watch: Watch | None = None

    @property
    def folder(self) -> Path:
        """The folder of the round's fio files."""
        return round_folder(self.workdir, self.round_no)


def round_folder(workdir: Path, round_no: int) -> Path:
    """The folder of round ``round_no``'s fio files in a run's ``workdir``."""
    return workdir / f"round-{round_no:03d}"


class RoundRunner(Protocol):
    """Runs and commits one round: :func:`volbench.plans.runs.round.run_round`'s signature."""

    def __call__(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]: ...


RUNS_DIR_HINT = "use --runs-dir to choose another folder for fio's logs"


def prepare_runs_dir(runs_dir: Path) -> None:
    """Create the folder of the runs' fio logs and check it takes a file, before a run
    is recorded: a refusal is one line (UsageError) and nothing is stored. Only the
    default folder (in volbench's data folder) is made with its parents: a runs folder
    elsewhere must be in a folder that exists (a typo must not make folders under /)."""
    output_file.check_folder(runs_dir, "the runs folder (--runs-dir)")
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
