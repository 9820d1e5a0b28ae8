"""A stored run through its sheet and every exporter (json, csv, markdown).

The run is made the way volbench makes one: recorded fio outputs parsed, grouped
into tests and stored in a SQLite store, then read back. Expected numbers come
from the raw fio JSON.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES

from stored_rows import bare_row
from volbench.analysis.aggregate import group_tests
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import (
    RW,
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
    Workload,
)
from volbench.report.export import EXPORTERS, export
from volbench.report.run_sheets import RUN_DOCUMENT_SCHEMA, result_rows, run_sheet
from volbench.report.sheet import Sheet
from volbench.store.repository import Store

# round -> (fixture, the workload it was recorded with; see the fixtures README)
ROUNDS = {
    0: (
        "randrw_lat_percentiles_jsonplus.json",
        Workload("randrw", RW.RANDRW, rwmixread_pct=70, iodepth=8, runtime_s=1),
    ),
    1: (
        "numjobs4_jsonplus.json",
        Workload("clones", RW.RANDREAD, iodepth=2, numjobs=4, runtime_s=1),
    ),
}
NUMERIC_HEADERS = {"IOPS", "MB/s", "MiB/s", "Lat mean", "p50", "p99", "p99.9", "Max"}


def round_text(round_no: int) -> str:
    return (FIO_FIXTURES / ROUNDS[round_no][0]).read_text()


def raw_jobs(round_no: int) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = json.loads(round_text(round_no))["jobs"]
    return jobs


@pytest.fixture
def run(tmp_path: Path) -> Iterator[RunRecord]:
    with Store.open(str(tmp_path / "volbench.db")) as store:
        run_id = store.create_run(
            "quick",
            TargetInfo(path="/tmp/target.dat", kind="file", capacity_bytes=1 << 30),
            HostInfo("host", 4, "cpu", 1 << 33, "6.1", "fio-3.33"),
            {"vendor": "acme", "note": "a|b"},
            RunSettings(ioengine="libaio"),
        )
        for round_no, (_, workload) in ROUNDS.items():
            tests = group_tests(parse(round_text(round_no)))
            record = {workload.name: StoredWorkload.of(workload)}
            store.add_round(run_id, round_no, round_text(round_no), tests, record)
        store.finish_run(run_id, RunStatus.COMPLETED)
        yield store.get_run(run_id)


@pytest.fixture
def sheet(run: RunRecord) -> Sheet:
    return run_sheet(run)


def test_rows_are_the_stored_results_with_both_bandwidth_units(sheet: Sheet) -> None:
    randrw = raw_jobs(0)[0]
    expected = [
        ("randrw", "read", randrw["read"]["bw_bytes"], randrw["read"]["bw"]),
        ("randrw", "write", randrw["write"]["bw_bytes"], randrw["write"]["bw"]),
        (
            "clones",
            "read",
            sum(j["read"]["bw_bytes"] for j in raw_jobs(1)),
            sum(j["read"]["bw"] for j in raw_jobs(1)),
        ),
    ]
    assert len(sheet.rows) == len(expected)
    for row, (test, direction, bw_bytes, bw_kib) in zip(sheet.rows, expected, strict=True):
        assert (row["test"], row["direction"]) == (test, direction)
        assert row["bw_bytes_per_s"] == pytest.approx(bw_bytes)
        assert row["bw_mb_per_s"] == pytest.approx(bw_bytes / 1_000_000)
        assert row["bw_mib_per_s"] == pytest.approx(bw_bytes / 1_048_576)
        assert row["bw_mib_per_s"] == pytest.approx(bw_kib / 1024, rel=1e-3)  # fio's KiB/s
        assert "workload" not in row


def test_rows_carry_the_stored_latency(sheet: Sheet) -> None:
    read = raw_jobs(0)[0]["read"]["lat_ns"]  # lat_percentiles=1: total latency
    row = sheet.rows[0]
    assert row["lat_kind"] == "lat"
    assert row["lat_mean_ns"] == read["mean"]
    assert row["lat_p99_ns"] == read["percentile"]["99.000000"]
    assert row["lat_max_ns"] == read["max"]
    assert sheet.rows[2]["lat_kind"] == "clat"  # plain json+: only clat has percentiles


def test_rows_describe_the_workload(sheet: Sheet) -> None:
    first, _, clones = sheet.rows
    assert first["pattern"] == "randrw 70/30 4k QD8x1"
    assert (first["rw"], first["bs_bytes"], first["iodepth"], first["numjobs"]) == (
        "randrw",
        4096,
        8,
        1,
    )
    assert clones["pattern"] == "randread 4k QD2x4"
    assert [r["round"] for r in sheet.rows] == [0, 0, 1]
    assert {r["run_id"] for r in sheet.rows} == {1}


def test_littles_law_columns(sheet: Sheet) -> None:
    job = raw_jobs(0)[0]
    implied = sum(job[d]["iops"] * job[d]["lat_ns"]["mean"] / 1e9 for d in ("read", "write"))
    for row in sheet.rows[:2]:  # checked per test, over both directions
        assert row["outstanding_configured"] == 8
        assert row["outstanding_implied"] == pytest.approx(implied)
        assert row["little"] == "8.0 / 8"
        assert row["littles_law"] == "ok"
    clones = sheet.rows[2]  # clat shown; the law takes fio's mean total latency
    cloned = [j for j in raw_jobs(1) if j["jobname"] == "clones"]
    assert cloned, "the fixture's clones test"
    total = sum(j["read"]["iops"] for j in cloned)
    mean = sum(j["read"]["iops"] * j["read"]["lat_ns"]["mean"] for j in cloned) / total
    assert clones["outstanding_configured"] == 2 * 4
    assert clones["outstanding_implied"] == pytest.approx(total * mean / 1e9, rel=1e-6)
    assert clones["littles_law"] == "ok"
    assert sheet.flagged_rows == frozenset()


def test_sheet_notes(sheet: Sheet) -> None:
    assert sheet.title == "volbench run 1 (quick)"
    assert sheet.notes == (
        "run 1 · quick · completed · target /tmp/target.dat (1.0 GiB) · ioengine libaio · fio-3.33",
        "labels: note=a|b vendor=acme",
        "latency: fio completion latency (clat); Little's law from fio's mean total latency (lat)",
    )


def test_csv_has_a_header_and_the_stored_numbers(run: RunRecord, sheet: Sheet) -> None:
    text = export(sheet, "csv").decode()
    reader = csv.DictReader(io.StringIO(text))
    assert reader.fieldnames == list(sheet.rows[0])
    lines = list(reader)
    assert len(lines) == len(run.results) == 3
    for line, stored in zip(lines, run.results, strict=True):
        assert (line["test"], line["direction"]) == (stored.test, stored.direction)
        assert float(line["iops"]) == stored.iops
        assert float(line["bw_bytes_per_s"]) == stored.bw_bytes_per_s
        assert int(line["io_bytes"]) == stored.io_bytes
        assert float(line["lat_mean_ns"]) == stored.lat_mean_ns
        assert float(line["lat_p999_ns"]) == stored.lat_p999_ns
        assert line["hostname"] == ""  # None
    assert float(lines[2]["outstanding_implied"]) == pytest.approx(8, rel=0.05)


def test_markdown_table(sheet: Sheet) -> None:
    lines = export(sheet, "markdown").decode().splitlines()
    assert lines[:2] == ["## volbench run 1 (quick)", ""]
    headers = lines[2].strip("| ").split(" | ")
    assert headers[:4] == ["Test", "Dir", "Pattern", "IOPS"]
    align = lines[3].strip("| ").split(" | ")
    assert len(align) == len(headers)
    for header, marker in zip(headers, align, strict=True):
        numeric = header in NUMERIC_HEADERS or header.startswith("In flight")
        assert marker == ("---:" if numeric else "---"), header
    body = lines[4:7]
    first = body[0].strip("| ").split(" | ")
    assert first[:4] == ["randrw", "read", "randrw 70/30 4k QD8x1", f"{sheet.rows[0]['iops']:,.0f}"]
    assert all(len(row.strip("| ").split(" | ")) == len(headers) for row in body)
    assert lines[7] == ""
    assert lines[8:] == [
        "- run 1 · quick · completed · target /tmp/target.dat (1.0 GiB) · ioengine libaio"
        " · fio-3.33",
        "- labels: note=a\\|b vendor=acme",
        "- latency: fio completion latency (clat); Little's law from fio's mean total latency"
        " (lat)",
    ]


def test_json_document(run: RunRecord, sheet: Sheet) -> None:
    document = json.loads(export(sheet, "json"))
    assert document["schema"] == RUN_DOCUMENT_SCHEMA == "volbench.run/1"
    assert (document["id"], document["plan"], document["status"]) == (1, "quick", "completed")
    assert document["labels"] == {"vendor": "acme", "note": "a|b"}
    assert document["target"]["path"] == "/tmp/target.dat"
    assert document["settings"] == RunSettings(ioengine="libaio").record()
    assert document["settings"]["ioengine"] == "libaio" and document["settings"]["places"] == []
    assert document["error"] is None
    assert document["results"] == json.loads(json.dumps(result_rows(run)))
    assert [r["iops"] for r in document["results"]] == [r.iops for r in run.results]
    assert document["fio_outputs"] == [round_text(0), round_text(1)]


def test_unknown_format_is_a_usage_error(sheet: Sheet) -> None:
    with pytest.raises(UsageError, match="unknown format 'xml': use one of csv, json, markdown"):
        export(sheet, "xml")


def test_an_exporters_own_key_error_is_not_an_unknown_format(
    sheet: Sheet, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(sheet: Sheet) -> bytes:
        fields: dict[str, str] = {}
        return fields["missing"].encode()

    monkeypatch.setitem(EXPORTERS, "broken", broken)
    with pytest.raises(KeyError):
        export(sheet, "broken")


# --- hand-made results -----------------------------------------------------------------


def result(iops: float, lat_mean_ns: float, **changes: Any) -> StoredResult:
    base = bare_row(
        iops,
        workload=StoredWorkload(rw="randread", bs_bytes=4096, iodepth=4, numjobs=1),
        io_bytes=int(iops * 4096),
        lat_mean_ns=lat_mean_ns,
        usr_cpu_pct=1.0,
        sys_cpu_pct=2.0,
    )
    return dataclasses.replace(base, **changes)


def hand_made_run(*results: StoredResult) -> RunRecord:
    return RunRecord(
        id=7,
        plan="import",
        status=RunStatus.COMPLETED,
        started_at="2024-05-01T12:00:00+00:00",
        ended_at=None,
        target=TargetInfo("/dev/x", "block", 0),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(),
        results=results,
    )


def test_host_bound_test_is_flagged_with_a_note() -> None:
    sheet = run_sheet(hand_made_run(result(1_000, 1_000_000)))  # 1 in flight of QD 4
    assert sheet.rows[0]["littles_law"] == "host-bound: queue not kept full"
    assert sheet.rows[0]["little"] == "1.0 / 4"
    assert sheet.flagged_rows == frozenset({0})
    assert any(n.startswith("Little's law: in flight = IOPS x mean latency") for n in sheet.notes)


def test_littles_law_per_host() -> None:
    # fio --client=HOSTS_FILE job.fio: the same job name on each host, 4 in flight on each
    run = hand_made_run(
        result(10_000, 400_000, hostname="h1"), result(10_000, 400_000, hostname="h2")
    )
    assert [r["littles_law"] for r in result_rows(run)] == ["ok", "ok"]
