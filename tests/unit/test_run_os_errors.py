"""An OS error during a run: the run is stored as failed with one line naming the
path (exit code 3), and a runs folder that cannot take files is refused before
anything is recorded (exit code 2)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import RunFailed, UsageError
from volbench.fio.runner import RawRun, ReplayRunner, StatusCallback, StopCheck
from volbench.model import RunStatus, TargetInfo
from volbench.plans import quick
from volbench.plans.execution import Session, execute
from volbench.plans.reporter import NullReporter
from volbench.store.repository import Store

TARGET = TargetInfo(path="/tmp/volbench-test.img", kind="file", capacity_bytes=1 << 30)


class RefusingRunner(ReplayRunner):
    """Replays the quick profile's output, but the system refuses the round's folder."""

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> RawRun:
        raise PermissionError(errno.EACCES, "Permission denied", str(workdir))


def _session(tmp_path: Path, store: Store, runs_dir: Path) -> Session:
    runner = RefusingRunner(FIO_FIXTURES / "quick")
    return Session(store, runner, NullReporter(), runs_dir)


def test_os_error_mid_run_stores_the_run_as_failed(tmp_path: Path) -> None:
    runs_dir = tmp_path / "runs"
    with Store.open(str(tmp_path / "v.db")) as store:
        session = _session(tmp_path, store, runs_dir)
        with pytest.raises(RunFailed) as caught:
            execute(session, quick.plan(quick.QuickOptions()), TARGET, {})
        (run,) = store.list_runs()
    message = str(caught.value)
    assert caught.value.exit_code == 3
    assert message.startswith(f"Permission denied: {runs_dir}/{run.id}/round-000")
    assert "--runs-dir" in message and f"run {run.id} stored as failed" in message
    assert "\n" not in message
    assert run.status is RunStatus.FAILED
    assert run.error is not None and run.error.startswith("Permission denied: ")


def test_runs_folder_that_cannot_be_made_is_refused_before_the_run_is_recorded(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with Store.open(str(tmp_path / "v.db")) as store:
        session = _session(tmp_path, store, blocker / "runs")
        with pytest.raises(UsageError, match=r"cannot write the runs folder .*--runs-dir"):
            execute(session, quick.plan(quick.QuickOptions()), TARGET, {})
        assert store.list_runs() == []
