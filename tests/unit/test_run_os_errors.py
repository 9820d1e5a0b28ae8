"""An OS error during a run: the run is stored as failed with one line naming the
path (exit code 3), and a runs folder that cannot take files, or whose folder does
not exist, is refused before anything is recorded (exit code 2); per-second logs
fio could not write are named (a warning stored with the run)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import cast

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import RunFailed, UsageError
from volbench.fio.logs import missing_logs
from volbench.fio.runner import RawRun, ReplayRunner, StatusCallback, StopCheck
from volbench.model import RunStatus, TargetInfo, Workload
from volbench.model import TestResult as Result  # not "Test*": pytest would collect it
from volbench.plans import quick
from volbench.plans.runs import execution
from volbench.plans.runs import round as round_module
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import Session, prepare_runs_dir
from volbench.plans.runs.reporter import NullReporter
from volbench.plans.starting import runs_folder
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
    assert message.startswith(f"Permission denied: {run.logs_dir(runs_dir)}/round-000")
    assert run.logs_dir(runs_dir).parent == runs_dir
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


def test_runs_folder_in_a_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    """``--runs-dir /nonexistent/a/b`` was made, folders and all, without a word."""
    runs_dir = tmp_path / "nonexistent" / "a" / "b"
    with Store.open(str(tmp_path / "v.db")) as store:
        session = _session(tmp_path, store, runs_dir)
        with pytest.raises(UsageError) as caught:
            execute(session, quick.plan(quick.QuickOptions()), TARGET, {})
        assert store.list_runs() == []
    assert str(caught.value) == (
        f"--runs-dir {runs_dir}: the folder {runs_dir.parent} does not exist"
        " (create it first, or choose another --runs-dir)"
    )
    assert not (tmp_path / "nonexistent").exists()


def test_the_default_runs_folder_is_made_with_its_parents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data" / "volbench"
    monkeypatch.setattr(execution, "default_data_dir", lambda: data)
    prepare_runs_dir(data / "runs")
    assert (data / "runs").is_dir()
    prepare_runs_dir(tmp_path / "new")  # its folder exists: made
    assert (tmp_path / "new").is_dir()


def test_missing_or_empty_per_second_logs_are_named(tmp_path: Path) -> None:
    (tmp_path / "a_iops.1.log").write_text("1000, 5, 0, 4096, 0\n")
    (tmp_path / "a_bw.1.log").write_text("1000, 20, 0, 4096, 0\n")
    (tmp_path / "b_iops.1.log").write_text("")  # the filesystem was full
    (tmp_path / "b_iops.2.log").write_text("1000, 5, 0, 4096, 0\n")
    assert missing_logs(tmp_path, ["a", "b", "c"]) == ["b_iops", "b_bw", "c_iops", "c_bw"]
    assert missing_logs(tmp_path / "gone", ["a"]) == ["a_iops", "a_bw"]
    assert missing_logs(tmp_path, ["a"]) == []


class _Warnings:
    """What :func:`volbench.plans.runs.round._check_logs` uses of a session."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def test_a_group_of_short_jobs_spanning_two_windows_is_not_taken_for_a_full_disk(
    tmp_path: Path,
) -> None:
    """16 time-based jobs of 1 s start one after another and span 2.3 s together: the one
    whose 1 s fell in no whole averaging window has an empty log, and that is no full
    filesystem (found running gcp-pd-filesystem's 16-job steps at --scale); the same
    group planned for 3 s has no such excuse."""
    for job in range(1, 17):
        line = "" if job == 3 else "1000, 5, 0, 4096, 0\n"
        (tmp_path / f"t_iops.{job}.log").write_text(line)
        (tmp_path / f"t_bw.{job}.log").write_text(line)
    test = Result("t", {}, 0.0, 0.0, runtime_ms=2300.0, jobs=16)
    for runtime_s, warned in ((1.0, False), (3.0, True)):
        session = _Warnings()
        workload = Workload("t", "randread", numjobs=16, runtime_s=runtime_s)
        round_module._check_logs(cast(Session, session), 0, tmp_path, [test], [workload])
        assert bool(session.warnings) is warned, runtime_s
    assert "t_iops" in session.warnings[0]


def test_a_relative_runs_dir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fio runs in a folder of its own: ``--runs-dir rr`` would name ``rr/rr`` there (the
    PTS probe's job file was not found), so the folder is made absolute where volbench
    was started."""
    monkeypatch.chdir(tmp_path)
    assert runs_folder("rr") == tmp_path / "rr"
