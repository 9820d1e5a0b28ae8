"""A PTS test is its plan module, its report page module and its line in the catalog
(CONTRIBUTING.md). A toy test added here, with an option of its own, is taken by the
``pts`` command (its option in the help under the test, its dry run), runs through
the PTS driver from recorded fio outputs, stores its option with the run and shows
its page; nothing else names it."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner
from recorded import FIO_FIXTURES

from volbench.cli.pts import pts_command
from volbench.fio.runner import ReplayRunner
from volbench.model import RW, RunStatus, TargetInfo, Workload
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.pts import catalog, driver
from volbench.plans.pts.cells import PassCell, job
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.options import PtsOptions, PtsSetup, build
from volbench.plans.pts.test import BaseTest, Phase, Round, StoredRound
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.report.chart import Chart
from volbench.report.pts import pages
from volbench.report.pts.data import PtsData, sheet
from volbench.report.pts.page import BasePage
from volbench.report.pts.report import pts_sheets
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.store.repository import Store

MiB = 1 << 20


# --- its plan module -------------------------------------------------------------
@dataclass(frozen=True)
class ToyOptions(OwnOptions):
    """The toy's own option: how many passes it runs."""

    TITLE: ClassVar[str] = "Toy"

    passes: int = option(
        2,
        Declared(
            "toy_passes",
            "Passes of 4 KiB random writes.",
            "a toy test, not in PTS",
            low=1,
            high=9,
        ),
    )


def toy_pass(options: PtsOptions, active: int, n: int) -> tuple[Workload, ...]:
    return (
        job(
            options,
            active,
            "toy",
            Phase.GROUP,
            PassCell(n),
            RW.RANDWRITE,
            bs_bytes=4096,
            rwmixread_pct=0,
            iodepth=options.iodepth,
            numjobs=options.threads,
        ),
    )


@dataclass(frozen=True)
class Toy(BaseTest):
    """``--toy-passes`` rounds of one cell of 4 KiB random writes; no WIPC."""

    name: str = "toy"
    phases: tuple[Phase, ...] = (Phase.GROUP,)
    own = ToyOptions

    def phase_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        passes = range(1, options.of(ToyOptions).passes + 1)
        return tuple(toy_pass(options, active, n) for n in passes) if phase in self.phases else ()

    def next_round(
        self, options: PtsOptions, active: int, history: Sequence[StoredRound]
    ) -> Round | None:
        rounds = self.phase_rounds(options, active, Phase.GROUP)
        done = len(history)
        return Round(self.name, Phase.GROUP, done, rounds[done]) if done < len(rounds) else None

    def estimate(
        self, options: PtsOptions, active: int, speed: float, purge_s: float
    ) -> tuple[float, float]:
        rounds = self.phase_rounds(options, active, Phase.GROUP)
        total = purge_s + sum(w.duration_s for r in rounds for w in r)
        return total, total

    def describe(self, step: Round, options: PtsOptions) -> str:
        return f"toy: pass {step.index + 1} of {options.of(ToyOptions).passes}"


TOY = Toy()


# --- its report page --------------------------------------------------------------
@dataclass(frozen=True)
class ToyPage(BasePage):
    test: str = "toy"
    title: str = "Toy"

    def sheets(self, data: PtsData) -> list[Sheet]:
        rows = [
            {"pass": r.index + 1, "iops": cell.iops}
            for r in data.history("toy")
            for cell in r.cells.values()
        ]
        columns = (Column("pass", "Pass", numeric=True), Column("iops", "IOPS", fmt_count, True))
        return [sheet("PTS toy", columns, rows, ())]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return []


# --- its lines in the two tables ------------------------------------------------------
@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "TESTS", (*catalog.TESTS, TOY))
    found = pages.all_pages()  # its page module's PAGES, as the package's would be found
    monkeypatch.setattr(pages, "all_pages", lambda: (*found, ToyPage()))


def test_the_command_takes_the_toy_and_its_option(toy: None, tmp_path: Path) -> None:
    command = pts_command()
    shown = CliRunner().invoke(command, ["--help"], terminal_width=100).output
    assert "dirth, toy or all" in shown
    assert "Toy options:\n  --toy-passes INTEGER RANGE  Passes of 4 KiB random writes." in shown
    dry = CliRunner().invoke(
        command,
        [
            "toy",
            "--target",
            str(tmp_path / "t.img"),
            "--size",
            "64m",
            "--toy-passes",
            "3",
            "--cell-seconds",
            "2",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--dry-run",
            "--format",
            "json",
        ],
    )
    assert dry.exit_code == 0, dry.output
    files = json.loads(dry.output)["job_files"]
    assert [f["label"] for f in files] == [
        f"toy group round {n}: toy.group.pass{n}" for n in (1, 2, 3)
    ]
    assert "rw=randwrite" in files[0]["text"] and "runtime=2" in files[0]["text"]
    refused = CliRunner().invoke(command, ["toy", "--target", "x", "--toy-passes", "10"])
    assert refused.exit_code == 2 and "10 is not in the range 1<=x<=9" in refused.output
    assert not (tmp_path / "t.img").exists()


def _recording(folder: Path) -> Path:
    """The recorded PTS run's probe and a WSAT sample (4 KiB random writes), the
    sample's job named as each toy pass: what the toy's rounds replay."""
    with tarfile.open(FIO_FIXTURES / "pts" / "recording.tar.xz") as tar:
        tar.extractall(folder / "all", filter="data")
    rec = folder / "rec"
    rec.mkdir()
    (rec / "0000-seq-write-probe.json").write_bytes(
        (folder / "all" / "0000-seq-write-probe.json").read_bytes()
    )
    sample = json.loads(next((folder / "all").glob("*-wsat.run.*.json")).read_text())
    for n in (1, 2, 3):
        jobs = [{**j, "jobname": f"toy.group.pass{n}"} for j in sample["jobs"]]
        (rec / f"000{n}-toy.json").write_text(json.dumps({**sample, "jobs": jobs}))
    return rec


def test_the_toy_runs_stores_its_option_and_shows_its_page(toy: None, tmp_path: Path) -> None:
    options = build(("toy",), "enterprise", cell_seconds=1.0, toy_passes=3)
    target = TargetInfo("/dev/replayed", "block", 64 * MiB)
    with Store.open(str(tmp_path / "store.db")) as store:
        runner = ReplayRunner(_recording(tmp_path))
        session = Session(store, runner, NullReporter(), tmp_path / "runs")
        purging = PurgeSettings(replay=True)
        outcome = driver.begin(session, options, target, {}, None, purging)
        assert outcome.status is RunStatus.COMPLETED
        run = store.get_run(outcome.run_id)
    stored = run.settings.options["pts"]
    assert list(stored)[-1] == "toy_passes" and stored["toy_passes"] == 3
    assert run.setup(PtsSetup).options.of(ToyOptions) == ToyOptions(passes=3)
    assert [r.test for r in run.results] == [
        "toy.group.pass1",
        "toy.group.pass2",
        "toy.group.pass3",
    ]
    (table, *_) = pts_sheets(run)
    assert table.title == "PTS toy"
    assert [(row["pass"], row["iops"]) for row in table.rows] == [
        (n, r.iops) for n, r in enumerate(run.results, 1)
    ]
