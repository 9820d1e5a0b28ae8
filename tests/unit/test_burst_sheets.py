"""The lab's quick run (issue 24) as stored: a 1,000 IOPS volume bursting to 3,000 from
a 30,000-I/O bucket, 256 KiB units. The first write test's per-second series holds the
burst (3,000 for 12.9 s, then 1,000); the QD 1 tests and the read test run at the
1,000 cap. ``show``'s limits, ``explain``'s burst section and ``check`` beside the
catalogue's bucket say so.

The results are the recorded quick round's (tests/fixtures/fio/quick) with each test's
IOPS and latency set to the lab's figures; the per-second series are the lab's."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from click.testing import CliRunner
from recorded import fixture_text

from volbench import model
from volbench.analysis.aggregate import group_tests
from volbench.cli.main import cli
from volbench.fio.parser import parse
from volbench.model import (
    RW,
    LogSeries,
    RunSettings,
    StoredWorkload,
    TargetInfo,
    Workload,
)
from volbench.report.burst_sheets import burst_sheet, run_bursts
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.limit_section import limit_section
from volbench.report.limit_sheets import limits_sheet
from volbench.specs import catalogue
from volbench.store.repository import Store

LAB_PRODUCT = """\
products:
  - id: lab-burst
    vendor: Lab
    name: Burst volume
    size_unit: GiB
    capacity: {min: 1, max: 1000}
    count_unit_bytes: 262144
    rw_limits: combined
    editions:
      - from: 2024-01-01
        iops: {expr: "1000"}
        throughput: {expr: "1000", unit: MB/s}
        burst: {iops: 3000, bucket_credits: 30000}
"""
"""The issue's product: baseline 1,000, burst 3,000, a 30,000-I/O bucket (15 s)."""

LAB = {  # test: (QD, IOPS, mean latency in ns, per-second IOPS)
    "randwrite-4k-iops": (64, 1641.0, 64 / 1641 * 1e9, [3000] * 12 + [2800] + [1000] * 27),
    "randread-4k-iops": (64, 1000.0, 64e6, [1000] * 40),
    "randwrite-4k-latency": (1, 1000.0, 0.98e6, [1000] * 40),
    "randread-4k-latency": (1, 1000.0, 0.98e6, [1000] * 40),
    "randwrite-16k-throughput": (64, 1000.0, 64e6, [1000] * 40),
    "randread-16k-throughput": (64, 1000.0, 64e6, [1000] * 40),
}


def _as_lab(test: model.TestResult, iops: float, lat_ns: float, bs: int) -> model.TestResult:
    """``test`` with its one busy direction at ``iops`` of ``bs`` bytes and mean latency
    ``lat_ns``."""
    directions = {}
    for name, d in test.directions.items():
        if d.iops > 0:
            latency = d.latency and dataclasses.replace(d.latency, mean_ns=lat_ns)
            d = dataclasses.replace(
                d, iops=iops, bw_bytes_per_s=iops * bs, latency=latency, lat_mean_ns=lat_ns
            )
        directions[name] = d
    return dataclasses.replace(test, directions=directions)


def lab_run(tmp_path: Path) -> tuple[Store, int]:
    store = Store.open(str(tmp_path / "s.db"))
    text = fixture_text("quick/round-000.json")
    tests = {t.name: t for t in group_tests(parse(text))}
    target = TargetInfo("/dev/vdb", "block", 1 << 30)
    run_id = store.create_run(
        "quick",
        target,
        {"hostname": "guest"},
        {"product": "lab-burst", "size_gib": "100"},
        RunSettings(),
    )
    document = json.loads(text[text.index("{") :])
    for round_no, (name, (qd, iops, lat, per_second)) in enumerate(LAB.items()):
        one = {**document, "jobs": [j for j in document["jobs"] if j["jobname"] == name]}
        rw = RW.RANDWRITE if name.startswith("randwrite") else RW.RANDREAD
        ramp = 2.0 if round_no == 0 else 0.0  # fio logs nothing while it ramps
        bs = 16384 if "16k" in name else 4096
        work = StoredWorkload.of(Workload(name, rw, bs_bytes=bs, iodepth=qd, ramp_time_s=ramp))
        direction = "write" if rw is RW.RANDWRITE else "read"
        points = tuple((1000 * (i + 1), v) for i, v in enumerate(per_second))
        series = [LogSeries(round_no, name, "iops", 0, None, direction, points)]
        test = _as_lab(tests[name], iops, lat, bs)
        store.add_round(run_id, round_no, json.dumps(one), [test], {name: work}, series=series)
    return store, run_id


def test_show_names_the_burst_and_the_limiter_pacing(tmp_path: Path) -> None:
    store, run_id = lab_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    sheet = limits_sheet(run)
    assert sheet is not None
    rows = {r["test"]: r for r in sheet.rows}
    first = rows["randwrite-4k-iops"]
    assert first["limit"] == "rate limiter"
    assert first["why"] == (
        "burst: 3,000 IOPS for 12.9 s (about 25,800 I/Os above the baseline), then 1,000"
    )
    for name in ("randwrite-4k-latency", "randread-4k-latency", "randread-4k-iops"):
        assert rows[name]["limit"] == "rate limiter", rows[name]
        assert rows[name]["why"].startswith("QD 1 gave 1,000 IOPS and QD 64 x 1 job the same")
    assert "after its burst" in rows["randwrite-4k-latency"]["why"]
    for size, paced in (
        ("randwrite-16k-throughput", "randwrite-4k-iops"),
        ("randread-16k-throughput", "randread-4k-iops"),
    ):
        assert rows[size]["limit"] == "rate limiter", rows[size]
        assert rows[size]["why"] == (
            f"the same 1,000 IOPS as {paced} (4 KiB, paced by a rate limiter at ~1,000 IOPS)"
            " at 16 KiB per I/O, QD 64 x 1 job: the limiter counts I/Os, not bytes"
        )
    assert not any("saturated" in e for e in rows["randread-4k-iops"]["evidence"])


def test_explain_has_a_burst_section(tmp_path: Path) -> None:
    store, run_id = lab_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    found = run_bursts(run)
    assert [(b.round, b.test) for b in found] == [(0, "randwrite-4k-iops")]
    sheet = burst_sheet(run, found)
    assert sheet is not None
    (row,) = sheet.rows
    assert row["ceiling"] == 3000 and row["baseline"] == 1000 and row["credits"] == 25_800
    assert row["seconds"] == 12.9 and row["bs_bytes"] == 4096 and row["ramp_s"] == 2
    result = CliRunner().invoke(
        cli, ["explain", str(run_id), "--db", str(tmp_path / "s.db"), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["bursts"] == [dict(row)]
    assert {t["test"]: t["limit"] for t in document["tests"]}["randwrite-4k-iops"] == (
        "rate limiter"
    )
    table = CliRunner().invoke(cli, ["explain", str(run_id), "--db", str(tmp_path / "s.db")])
    assert "bursts (a high plateau, then a lower one)" in table.stdout


def test_check_puts_the_measured_burst_beside_the_catalogues_bucket(tmp_path: Path) -> None:
    store, run_id = lab_run(tmp_path)
    (tmp_path / "lab.yaml").write_text(LAB_PRODUCT)
    with store:
        run = store.get_run(run_id)
    sheet = check_sheet(
        run, catalogue.load((str(tmp_path / "lab.yaml"),)), CheckRequest(None, None)
    )
    assert (
        "randwrite-4k-iops: measured 12.9 s at 3,000 IOPS, about 25,800 credits, then 1,000"
        " (fio's 2 s ramp before it is not in the series: at the ceiling, 4,000 more credits,"
        " 14.9 s in all); the catalogue's full bucket is 30,000 (15 s at 3,000)"
    ) in sheet.notes
    limits = {r["test"]: r for r in sheet.document["limits"]}
    assert limits["randwrite-4k-iops"]["why"].startswith("burst: 3,000 IOPS for 12.9 s")
    assert sheet.document["bursts"][0]["credits"] == 25_800


def test_the_reports_limit_section_shows_the_bursts(tmp_path: Path) -> None:
    store, run_id = lab_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    section = limit_section(run)
    assert section is not None
    assert dict(section.header)["Bursts"] == (
        "randwrite-4k-iops: burst: 3,000 IOPS for 12.9 s (about 25,800 I/Os above the"
        " baseline), then 1,000"
    )
    assert [s.title for s in section.sheets][1].endswith(
        "bursts (a high plateau, then a lower one)"
    )
    flat = dataclasses.replace(run, series=tuple(s for s in run.series if s.round != 0))
    plain = limit_section(flat)
    assert plain is not None and len(plain.sheets) == 1 and "Bursts" not in dict(plain.header)
