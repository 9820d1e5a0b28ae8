"""Throttle fingerprint: plateau + Little's law on synthetic and recorded-shape points."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.analysis.throttle import Point, fingerprint, shared_budget
from volbench.errors import UsageError
from volbench.model import StoredResult
from volbench.plans.imported.importing import import_file
from volbench.report.throttle_sheets import (
    fingerprint_sheet,
    points_by_workload,
    sample_spread,
    shared_findings,
)
from volbench.store.repository import Store


def _capped(cap: float, depths: list[int], base_ns: float = 100_000.0) -> list[Point]:
    """A rate limiter: IOPS = min(depth / base latency, cap); latency = depth / IOPS."""
    points = []
    for depth in depths:
        iops = min(depth * 1e9 / base_ns, cap)
        points.append(Point(depth, iops, depth * 1e9 / iops))
    return points


def test_a_cap_is_found_with_its_little_law_slope() -> None:
    result = fingerprint(_capped(2000, [1, 2, 4, 8, 16, 32]))
    assert result.limited
    assert result.cap_iops == pytest.approx(2000)
    assert result.slope_ns_per_io == pytest.approx(1e9 / 2000)
    assert [p.outstanding for p in result.plateau] == [1, 2, 4, 8, 16, 32]
    assert result.confidence == pytest.approx(1.0)
    assert "limited to ~2,000 IOPS" in result.reason


def test_the_plateau_starts_where_the_cap_is_reached() -> None:
    result = fingerprint(_capped(20000, [1, 2, 4, 8, 16, 32, 64]))  # 10,000 IOPS per QD
    assert result.limited and result.cap_iops == pytest.approx(20000)
    assert [p.outstanding for p in result.plateau] == [2, 4, 8, 16, 32, 64]


def test_noise_lowers_confidence_but_keeps_the_cap() -> None:
    noisy = [
        Point(p.outstanding, p.iops * f, p.lat_mean_ns / f)
        for p, f in zip(_capped(2000, [4, 8, 16, 32]), [1.02, 0.98, 1.01, 0.99], strict=True)
    ]
    result = fingerprint(noisy)
    assert result.limited
    assert abs((result.cap_iops or 0) - 2000) < 20
    assert 0.3 < result.confidence < 0.9
    assert result.cap_stderr_iops is not None and 0 < result.cap_stderr_iops < 20


def test_a_volume_still_scaling_is_not_limited() -> None:
    result = fingerprint(_capped(1e9, [1, 2, 4, 8]))
    assert not result.limited and result.cap_iops is None
    assert "no plateau" in result.reason


def test_flat_iops_without_growing_latency_is_not_a_limiter() -> None:
    points = [Point(d, 5000, 200_000) for d in (4, 8, 16, 32)]  # fio not keeping the queue
    result = fingerprint(points)
    assert not result.limited
    assert "does not grow" in result.reason


def test_too_few_depths() -> None:
    assert "need 3 or more" in fingerprint(_capped(2000, [4, 8])).reason


def test_shared_or_separate_budgets() -> None:
    assert "share one budget" in shared_budget(2000, 2000, 1000, 1000)
    assert "separate budgets" in shared_budget(2000, 2000, 2000, 2000)


def test_stored_runs_with_two_depths_are_refused_with_a_hint(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "results.db")) as store:
        import_file(store, FIO_FIXTURES / "quick" / "round-000.json", {})
        run = store.get_run("latest")
    groups = points_by_workload([run])
    assert sorted(p.outstanding for p in groups["randread 4k"]) == [1, 64]
    with pytest.raises(UsageError, match=r"randread 4k: QD \[1, 64\].*more --iodepth"):
        fingerprint_sheet([run, run])


def test_sample_spread_is_fios_own_stddev_over_mean() -> None:
    raw = (FIO_FIXTURES / "quick" / "round-000.json").read_text()
    spread = sample_spread([raw])
    stats = raw_document("quick/round-000.json")["jobs"][1]["read"]
    assert spread["randread-4k-iops"] == stats["iops_stddev"] / stats["iops_mean"]
    assert len(spread) == 6


def _sweep(row: StoredResult, rw: str, cap: float, mix: int | None = None) -> list[StoredResult]:
    """``row`` re-stated as a QD 4-32 sweep of ``rw`` against a ``cap`` IOPS limiter."""
    rows = []
    for point in _capped(cap, [4, 8, 16, 32]):
        workload = dataclasses.replace(
            row.workload, rw=rw, iodepth=point.outstanding, numjobs=1, rwmixread_pct=mix
        )
        directions = ("read", "write") if mix is not None else (row.direction,)
        for direction in directions:
            rows.append(
                dataclasses.replace(
                    row,
                    test=f"{rw}-qd{point.outstanding}",
                    direction=direction,
                    workload=workload,
                    iops=point.iops / len(directions),
                    lat_mean_ns=point.lat_mean_ns,
                )
            )
    return rows


def test_a_mix_without_a_write_sweep_says_one_is_needed(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "results.db")) as store:
        import_file(store, FIO_FIXTURES / "quick" / "round-000.json", {})
        run = store.get_run("latest")
    (row,) = [r for r in run.results if r.test == "randread-4k-iops"]
    results = (*_sweep(row, "randread", 2000), *_sweep(row, "randrw", 4000, 50))
    sheet = fingerprint_sheet([dataclasses.replace(run, results=results, raw_outputs=())])
    assert sheet.document["findings"] == [
        "randrw 4k 50/50: a randwrite 4k sweep is needed to tell whether reads and writes"
        " share one budget"
    ]
    assert sheet.document["findings"][0] in sheet.notes
    writes = _sweep(row, "randwrite", 2000)
    both = fingerprint_sheet([dataclasses.replace(run, results=(*results, *writes))])
    assert both.document["findings"] == [
        "randrw 4k 50/50: reads and writes have separate budgets: the mix totals 4,000 IOPS"
        " (2,000 read + 2,000 write), above either cap (2,000 read, 2,000 write)"
    ]


def test_budget_findings_name_missing_or_unlimited_sweeps() -> None:
    capped, free = fingerprint(_capped(2000, [4, 8, 16, 32])), fingerprint(_capped(1e9, [4, 8, 16]))
    assert shared_findings({"rw 1m 70/30": capped}) == [
        "rw 1m 70/30: a read 1m and a write 1m sweep are needed to tell whether reads and"
        " writes share one budget"
    ]
    found = shared_findings(
        {"randrw 4k 50/50": capped, "randread 4k": capped, "randwrite 4k": free}
    )
    assert found == [
        "randrw 4k 50/50: no rate limit found in randwrite 4k: cannot tell whether reads and"
        " writes share one budget"
    ]
    assert shared_findings({"randread 4k": capped}) == []
