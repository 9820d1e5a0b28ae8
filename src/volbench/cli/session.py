"""How every command that runs fio sets up its run and ends it.

:func:`fio_session` is the one place a :class:`~volbench.plans.execution.Session`
is built: fio (the real one, or recorded outputs with ``--replay``), checked
before anything is created; the store; the live display; the runs folder.
:func:`conclude` is the one place an interrupted run ends the command: where it is
and how to continue it, then exit 130 (143 after SIGTERM, :mod:`volbench.cli.main`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from volbench.cli import console
from volbench.fio.runner import ReplayRunner, Runner, SubprocessRunner
from volbench.fio.stall import StallPolicy
from volbench.model import RunStatus
from volbench.plans.execution import Outcome, Session
from volbench.store.repository import Store, default_data_dir


def runs_folder(option: str | None) -> Path:
    """The folder of the runs' fio files: ``--runs-dir``, else volbench's data folder's."""
    return Path(option) if option else default_data_dir() / "runs"


@contextlib.contextmanager
def fio_session(
    db: str | None,
    runs_dir: str | None,
    reporter: console.ProgressReporter,
    *,
    replay: str | None = None,
    stall: StallPolicy | None = None,
    create: bool = True,
) -> Iterator[Session]:
    """A run's parts for the block: fio (replayed from the folder ``replay`` when given),
    checked first, so a missing fio is one line before the store is touched; the store
    ``db`` (created unless ``create`` is false); ``reporter``, closed at the end."""
    runner: Runner = ReplayRunner(Path(replay)) if replay else SubprocessRunner()
    runner.version()
    with Store.open(db, create=create) as store, contextlib.closing(reporter):
        yield Session(store, runner, reporter, runs_folder(runs_dir), stall or StallPolicy())


def conclude(outcome: Outcome, show: Callable[[], None] | None = None) -> None:
    """The end of a command that ran ``outcome``: ``show`` its report; after an
    interruption (the report shown only when ``show`` is cheap enough to wait for),
    where the run is and how to continue it, and exit 130."""
    if show is not None:
        show()
    if outcome.status is RunStatus.INTERRUPTED:
        console.stderr.print(
            f"run {outcome.run_id} interrupted: every committed test is kept; see it with "
            f"`volbench show {outcome.run_id}`, continue it with "
            f"`volbench resume {outcome.run_id}`",
            markup=False,
            highlight=False,
        )
        raise KeyboardInterrupt  # main exits 130, or 128 + N after signal N (143: SIGTERM)
