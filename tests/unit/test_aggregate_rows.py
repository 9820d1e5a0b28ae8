"""A multi-target run stores its aggregate and each place's share: checks and
fingerprints read the aggregate only (a two-target run of 2 x 1,000 IOPS at QD 32
each is 2,000 IOPS with 64 outstanding, not 1,000 at 32, nor 4,000)."""

from __future__ import annotations

import dataclasses

from volbench.analysis.promise import measured_tests
from volbench.model import (
    HostInfo,
    PlaceRecord,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.report.run_sheets import report_for
from volbench.report.throttle_sheets import points_by_workload
from volbench.views import view

WORKLOAD = StoredWorkload(rw="randread", bs_bytes=4096, iodepth=32, numjobs=1, places=2)


def _row(iops: float, place: str | None) -> StoredResult:
    return StoredResult(
        round=0,
        test="randread-4k",
        direction="read",
        workload=WORKLOAD,
        iops=iops,
        bw_bytes_per_s=iops * 4096,
        io_bytes=int(iops * 4096 * 10),
        runtime_ms=10_000,
        lat_kind="lat",
        lat_mean_ns=32e9 / 1000 if place else 64e9 / 2000,
        lat_min_ns=1e3,
        lat_max_ns=1e8,
        lat_stddev_ns=1e4,
        lat_p50_ns=3e7,
        lat_p90_ns=4e7,
        lat_p99_ns=5e7,
        lat_p999_ns=6e7,
        lat_p9999_ns=7e7,
        usr_cpu_pct=1.0,
        sys_cpu_pct=2.0,
        jobs=1,
        hostname=place,
    )


RUN = RunRecord(
    id=1,
    plan="quick",
    status=RunStatus.COMPLETED,
    started_at="2026-11-24T00:00:00+00:00",
    ended_at=None,
    target=TargetInfo("a, b", "fleet", 0),
    host=HostInfo.from_record({}),
    labels={},
    settings=RunSettings(places=(PlaceRecord("/a"), PlaceRecord("/b"))),
    results=(_row(2000, None), _row(1000, "/a"), _row(1000, "/b")),
)


def test_the_aggregate_is_the_runs_result() -> None:
    assert [r.iops for r in RUN.aggregate] == [2000]
    assert [r.outstanding_io for r in RUN.results] == [64, 32, 32]


def test_check_reads_the_aggregate() -> None:
    (test,), skipped = measured_tests(RUN.results)
    assert not skipped
    assert test.read_iops == 2000 and test.outstanding == 64


def test_fingerprint_reads_the_aggregate() -> None:
    ((point,),) = points_by_workload([RUN]).values()
    assert point.iops == 2000 and point.outstanding == 64


def test_one_place_has_no_table_of_its_own() -> None:
    """A run on one place (``--hosts lab://a``): its rows are the run's, so the report
    shows the run's table once, with what the places sheet says of the place in its
    notes, and keeps the places document in the JSON."""
    one = dataclasses.replace(
        RUN,
        target=TargetInfo("a", "fleet", 0),
        settings=RunSettings(places=(PlaceRecord("/a"),)),
        results=(_row(1000, None), _row(1000, "/a")),
    )
    sheets, document = report_for(one, view(one.plan))
    assert [s.title for s in sheets if "places at once" in s.title] == []
    assert "places: 1 = /a" in sheets[0].notes
    assert [row["place"] for row in document["places"]["rows"]] == ["all 1 together", "/a"]
    two_sheets, _ = report_for(RUN, view(RUN.plan))
    assert any(s.title == "run 1: 2 places at once" for s in two_sheets)
