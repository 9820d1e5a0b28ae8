"""Dry runs: job files, fio processes, tests and duration of each kind of plan from its
own definition, without touching the target; the estimated cost from the catalogue's
prices and the VM's; the diskmark layout of the quick profile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from recorded import fixture_text

from volbench.analysis.aggregate import group_tests
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import RW, RunSettings, StoredWorkload, TargetInfo
from volbench.plans import limits, quick, sweep
from volbench.plans.dry_run import plan_preview
from volbench.plans.placement.preview import preview_target
from volbench.plans.pts.dry_run import pts_preview
from volbench.plans.pts.options import build
from volbench.plans.runs.preview import FIO_START_S, estimate_line, format_duration, product_size
from volbench.specs import catalogue
from volbench.specs.run_cost import HourlyCost, parse_hourly_cost, run_cost
from volbench.store.repository import Store
from volbench.views import report_for

TARGET = TargetInfo("/dev/vdz", "block", 1 << 30)


def test_quick_is_six_fio_processes_with_their_job_files(tmp_path: Path) -> None:
    plan = quick.plan(quick.QuickOptions(runtime_s=10, ramp_time_s=2))
    dry = plan_preview(plan, TARGET, "libaio", tmp_path / "runs")
    assert (dry.processes, dry.tests) == (6, 6)
    assert dry.low_s == dry.high_s == pytest.approx(6 * (12 + FIO_START_S))
    first = dry.job_files[0]
    assert first.label == "randwrite-4k-iops"
    assert "filename=/dev/vdz" in first.text and "ioengine=libaio" in first.text
    assert "[randwrite-4k-iops]" in first.text and "iodepth=64" in first.text
    assert f"{tmp_path / 'runs'}/" in first.text and "/round-000/randwrite-4k-iops" in first.text
    assert "/round-005/" in dry.job_files[5].text
    assert not (tmp_path / "runs").exists()  # named, not made
    assert estimate_line(dry) == "estimate: 6 tests in 6 fio processes, 1m 14s"


def test_an_adaptive_search_shows_its_first_tests_and_its_bound(tmp_path: Path) -> None:
    options = sweep.SweepOptions(
        RW.RANDREAD, 4096, (1, 4, 16, 64), (1, 2), runtime_s=5, ramp_time_s=0, find_max=True
    )
    dry = plan_preview(sweep.find_max_plan(options), TARGET, "io_uring", tmp_path)
    assert len(dry.job_files) == 1  # the search's first point
    assert dry.processes == dry.tests == 8  # the grid at most
    assert dry.high_s == pytest.approx(8 * (5 + FIO_START_S))
    assert "then more tests chosen from the results (adaptive), 7 at most" in dry.notes


def test_the_limits_experiment_shows_its_burst_probe_and_its_budget(tmp_path: Path) -> None:
    """Its first test, the burst probe; then at most the budget, each test's fio start
    beside it: the rest and second burst probe counted among the tests it may run."""
    options = limits.LimitsOptions(budget_s=600.0, runtime_s=10.0, ramp_time_s=1.0)
    dry = plan_preview(limits.plan(options), TARGET, "io_uring", tmp_path)
    (first,) = dry.job_files
    assert first.label == "burst-4k-qd32" and "runtime=75s" in first.text
    most = 6 + (600 - 75) // 11  # four burst probes, the rest, the second probe, the ladders
    assert dry.processes == dry.tests == most
    assert dry.low_s == pytest.approx(75 + FIO_START_S)
    assert dry.high_s == pytest.approx(600 + most * FIO_START_S)
    assert f"then more tests chosen from the results (adaptive), {most - 1} at most" in dry.notes


def test_pts_cells_and_rounds(tmp_path: Path) -> None:
    options = build(
        ("iops",),
        "enterprise",
        block_sizes=(4096, 65536),
        mixes=(100, 0),
        cell_seconds=60,
        max_rounds=25,
    )
    dry = pts_preview(options, TARGET, "io_uring", tmp_path)
    labels = [j.label for j in dry.job_files]
    assert labels[:2] == [
        "iops wipc round 1: iops.wipc.pass1",
        "iops wipc round 1: iops.wipc.pass2",
    ]
    assert len(labels) == 2 + 4  # WIPC's two passes, then each of the 4 cells once
    assert dry.processes == 2 + 25 * 4
    assert "fio processes: 22 if every test is steady in 5 rounds" in dry.notes
    assert dry.low_s >= 5 * 4 * 60 and dry.high_s >= 25 * 4 * 60
    assert any("without preconditioning" in n for n in dry.notes)


def test_a_missing_file_is_described_not_made(tmp_path: Path) -> None:
    path = tmp_path / "new.img"
    info, notes = preview_target(str(path), True, 64 << 20)
    assert (info.kind, info.capacity_bytes) == ("file", 64 << 20)
    assert notes == [f"{path} does not exist: a run would create it (64 MiB of data)"]
    assert not path.exists()
    other = tmp_path / "theirs.img"
    other.write_bytes(b"x" * 4096)  # a file volbench did not create
    info, notes = preview_target(str(other), True)
    assert info.capacity_bytes == 4096
    assert notes and notes[0].startswith("a real run would be refused:")
    assert other.read_bytes() == b"x" * 4096


def test_hourly_cost_and_the_volume_price() -> None:
    assert parse_hourly_cost("0.192usd") == HourlyCost(0.192, "USD")
    assert parse_hourly_cost(" 1.5 ") == HourlyCost(1.5, None)
    with pytest.raises(UsageError):
        parse_hourly_cost("cheap")
    gp3 = catalogue.load(()).find("aws-gp3")
    found = run_cost(3600, 7200, gp3, 100, HourlyCost(0.2, "USD"))
    usd = next(c for c in found if c.currency == "USD")
    # 100 GiB at USD 0.08 per GB-month for 1/730 of a month, plus the VM's hour(s)
    assert usd.low == pytest.approx(100 * 0.08 / 730 + 0.2, rel=0.01)
    assert usd.high == pytest.approx(2 * usd.low, rel=0.01)
    assert usd.text().startswith(f"{usd.low:,.4f} to {usd.high:,.4f} USD (aws-gp3 at 100 GiB")
    alone = run_cost(3600, 3600, None, None, HourlyCost(0.5))
    assert [(c.billing, c.low) for c in alone] == [("VM", 0.5)]
    assert "(your currency)" in alone[0].text()


def test_product_size_from_labels_size_or_capacity() -> None:
    assert product_size("GiB", {"size_gib": "500"}, 1 << 30, None) == 500
    assert product_size("GiB", {}, 100 << 30, None) == 100
    assert product_size("GB", {}, None, 10**12) == 1000
    assert product_size("GiB", {}, None, None) is None
    with pytest.raises(UsageError, match="size_gib"):
        product_size("GiB", {"size_gib": "big"}, None, None)


def test_format_duration() -> None:
    assert format_duration(42.4) == "42s"
    assert format_duration(3725) == "1h 2m 5s"


def test_diskmark_layout() -> None:
    tests = quick.workloads(quick.QuickOptions(profile="diskmark", runtime_s=5))
    assert [(w.name, w.rw, w.bs_bytes, w.iodepth, w.numjobs) for w in tests] == [
        ("seq1m-q8t1-read", RW.READ, 1 << 20, 8, 1),
        ("seq1m-q8t1-write", RW.WRITE, 1 << 20, 8, 1),
        ("seq1m-q1t1-read", RW.READ, 1 << 20, 1, 1),
        ("seq1m-q1t1-write", RW.WRITE, 1 << 20, 1, 1),
        ("rnd4k-q32t1-read", RW.RANDREAD, 4096, 32, 1),
        ("rnd4k-q32t1-write", RW.RANDWRITE, 4096, 32, 1),
        ("rnd4k-q1t1-read", RW.RANDREAD, 4096, 1, 1),
        ("rnd4k-q1t1-write", RW.RANDWRITE, 4096, 1, 1),
    ]
    assert all(w.runtime_s == 5 for w in tests)
    assert quick.plan(quick.QuickOptions(profile="diskmark")).options["quick"]["profile"] == (
        "diskmark"
    )


def test_a_diskmark_run_is_shown_as_crystaldiskmark_shows_it(tmp_path: Path) -> None:
    (template,) = group_tests(parse(fixture_text("randread_json.json")))
    options = quick.QuickOptions(profile="diskmark")
    with Store.open(str(tmp_path / "s.db")) as store:
        run_id = store.create_run(
            "quick", TARGET, {"hostname": "h"}, {}, RunSettings(options=quick.plan(options).options)
        )
        for n, work in enumerate(quick.workloads(options)[:3]):
            direction = "read" if work.rw.reads else "write"
            figures = dataclasses.replace(
                template.directions["read"],
                direction=direction,
                iops=1000.0 * (n + 1),
                bw_bytes_per_s=1e6 * (n + 1),
            )
            test = dataclasses.replace(template, name=work.name, directions={direction: figures})
            store.add_round(run_id, n, "{}", [test], {work.name: StoredWorkload.of(work)})
        sheet = report_for(store.get_run(run_id))[0][0]
    assert [row["label"] for row in sheet.rows] == [
        "SEQ1M Q8T1",
        "SEQ1M Q1T1",
        "RND4K Q32T1",
        "RND4K Q1T1",
    ]
    first, second = sheet.rows[0], sheet.rows[1]
    assert (first["read_mb_s"], first["write_mb_s"]) == (1.0, 2.0)
    assert (second["read_iops"], second["write_iops"]) == (3000.0, None)
    assert sheet.cells()[1][:3] == ["SEQ1M Q1T1", "3.0", "-"]
    assert sheet.document["diskmark"][0]["read_iops"] == 1000.0
