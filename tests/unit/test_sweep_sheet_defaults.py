"""A sweep run whose stored workload states no iodepth or numjobs (a hand-made or old
store) is shown as fio ran it, at fio's defaults of 1 each (fio HOWTO, "iodepth=int",
"numjobs=int"), not a traceback in ``volbench show`` or ``volbench runs``."""

from __future__ import annotations

from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.plans import sweep
from volbench.report.sweep_sheets import sweep_headline, sweep_sheet


def _result(test: str, iops: float, workload: StoredWorkload) -> StoredResult:
    return StoredResult(
        round=0,
        test=test,
        direction="read",
        workload=workload,
        iops=iops,
        bw_bytes_per_s=iops * 4096,
        io_bytes=int(iops * 4096 * 10),
        runtime_ms=10_000,
        lat_kind="clat",
        lat_mean_ns=1e6,
        lat_min_ns=1e3,
        lat_max_ns=1e8,
        lat_stddev_ns=1e4,
        lat_p50_ns=1e6,
        lat_p90_ns=2e6,
        lat_p99_ns=3e6,
        lat_p999_ns=4e6,
        lat_p9999_ns=5e6,
        usr_cpu_pct=1.0,
        sys_cpu_pct=2.0,
        jobs=1,
    )


def test_a_point_without_a_queue_depth_is_fio_default_one() -> None:
    bare = StoredWorkload(rw="randread", bs_bytes=4096)
    deep = StoredWorkload(rw="randread", bs_bytes=4096, iodepth=4, numjobs=1)
    run = RunRecord(
        id=7,
        plan=sweep.NAME,
        status=RunStatus.COMPLETED,
        started_at="2026-11-26T00:00:00+00:00",
        ended_at=None,
        target=TargetInfo("/tmp/t.img", "file", 1 << 30),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(),
        results=(_result("randread-4k-qd1", 1000, bare), _result("randread-4k-qd4", 3000, deep)),
    )
    rows = sweep_sheet(run).rows
    assert [(r["iodepth"], r["numjobs"], r["iops"]) for r in rows] == [(1, 1, 1000), (4, 1, 3000)]
    assert any("3,000" in figure for figure in sweep_headline(run).figures)
