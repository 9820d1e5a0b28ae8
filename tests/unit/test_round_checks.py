"""How often a run's targets are checked (``targets/safety.check_round``): before
each test's fio, and before a fio started ahead only when that check does not already
cover it. On the 56 one-second cells of a PTS IOPS round each check reads sysfs,
mountinfo and every loop device's backing file: two per cell were a sixth of
volbench's own CPU."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.fio.runner import ReplayRunner
from volbench.model import RW, RunSettings, RunStatus, TargetInfo, Workload
from volbench.model import TestResult as Result  # not "Test*": pytest would collect it
from volbench.plans.runs import engine
from volbench.plans.runs.engine import Step, drive, open_run
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store

MiB = 1 << 20


class OneStep:
    """A course of one step of several tests, one fio process each (as a PTS round's
    cells): the engine starts each next test's fio ahead."""

    def __init__(self, tests: tuple[Workload, ...]) -> None:
        self.tests, self.done = tests, False

    def next_step(self) -> Step | None:
        if self.done:
            return None
        self.done = True
        return Step(self.tests)

    def committed(self, round_no: int, tests: Sequence[Result]) -> None:
        pass

    def foreseen(self) -> tuple[Workload, ...]:
        return ()


def _checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rws: tuple[RW, ...]) -> list[bool]:
    """The ``writes`` of every check of a run of one step of a test per ``rws``."""
    folder = tmp_path / "recorded"
    folder.mkdir()
    for n in range(len(rws)):  # one recorded output a test
        shutil.copy(FIO_FIXTURES / "randrw_lat_percentiles_jsonplus.json", folder / f"{n}.json")
    store = Store.open(f"sqlite:///{tmp_path / 'volbench.db'}")
    session = Session(store, ReplayRunner(folder), NullReporter(), tmp_path / "runs")
    checked: list[bool] = []
    monkeypatch.setattr(engine, "check_round", lambda info, writes: checked.append(writes))
    tests = tuple(
        Workload(f"t{n}", rw, iodepth=1, runtime_s=1, size_bytes=MiB) for n, rw in enumerate(rws)
    )
    target = TargetInfo(str(tmp_path / "target.dat"), "file", 16 * MiB)
    with store:
        run_id, workdir = open_run(session, "sweep", target, {}, RunSettings())
        outcome = drive(session, run_id, OneStep(tests), target, "psync", workdir)
    assert outcome.status is RunStatus.COMPLETED
    return checked


def test_one_check_per_test_when_the_next_writes_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes after writes, reads after writes: each test's check for writes covers
    the one before its successor's fio is started ahead (the same, or less)."""
    rws = (RW.RANDWRITE, RW.RANDWRITE, RW.RANDREAD, RW.RANDWRITE)
    assert _checks(tmp_path, monkeypatch, rws) == [True, True, False, True, True]


def test_a_check_for_writes_before_a_writing_test_after_a_reading_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading test's check does not cover its writing successor's: that one is
    checked for writes before its fio is started ahead, and again at its turn."""
    rws = (RW.RANDREAD, RW.RANDWRITE)
    assert _checks(tmp_path, monkeypatch, rws) == [False, True, True]
