"""Report charts, comparison and HTML on recorded fio outputs.

Every plotted value is checked against fio's own JSON read with ``json.loads``
(not through volbench's parser) or against the stored result rows.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped]
import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.analysis.aggregate import group_tests
from volbench.analysis.timeseries import (
    common_origin_ms,
    round_logs,
    shifted,
    summed,
    weighted_latency,
)
from volbench.errors import UsageError
from volbench.fio.logs import read_series
from volbench.fio.parser import parse
from volbench.model import LogSeries, RunRecord, RunSettings, RunStatus, Stall
from volbench.plans.imported.importing import import_file
from volbench.report.chart import traces_values, window_chart
from volbench.report.comparison import comparison_charts, comparison_sheet
from volbench.report.heatmap import heatmap_chart
from volbench.report.html import render_html
from volbench.report.run_charts import fio_run_charts, timeseries_charts
from volbench.store.repository import Store
from volbench.views import report_document

QUICK = FIO_FIXTURES / "quick" / "round-000.json"
LOGS = FIO_FIXTURES / "logs"


def _imported(tmp_path: Path, *files: tuple[Path, dict[str, str]]) -> list[RunRecord]:
    with Store.open(str(tmp_path / "store.db")) as store:
        ids = [import_file(store, path, labels) for path, labels in files]
        return [store.get_run(i) for i in ids]


def _charts(run: RunRecord) -> dict[str, Any]:
    return {c.id.removeprefix(f"run{run.id}-"): c for c in fio_run_charts(run)}


def _run_with_logs(tmp_path: Path) -> RunRecord:
    """The recorded quick round stored as a run's round, with the recorded logs
    (tests/fixtures/fio/logs) as its series: as a run commits a round."""
    raw = QUICK.read_text()
    with Store.open(str(tmp_path / "store.db")) as store:
        run_id = store.create_run("quick", {"path": "/dev/vdb"}, {}, {}, RunSettings())
        series = read_series(LOGS, 0)
        store.add_round(run_id, 0, raw, group_tests(parse(raw)), {}, series=series)
        store.finish_run(run_id, RunStatus.COMPLETED)
        return store.get_run(run_id)


def test_every_figure_is_valid_plotly(tmp_path: Path) -> None:
    (run,) = _imported(tmp_path, (QUICK, {}))
    charts = fio_run_charts(run)
    assert {c.id for c in charts} == {
        f"run{run.id}-{k}" for k in ("iops", "mbps", "percentiles", "histogram")
    }
    extra = [
        heatmap_chart(
            "b",
            "matrix",
            ["4k", "8k"],
            ["100/0", "0/100"],
            [[1, 2], [3, None]],
            x_title="bs",
            y_title="mix",
            unit="IOPS",
        ),
        window_chart(
            "w", "window", [1, 2, 3], [10, 11, 12], average=11, slope=1, intercept=9, y_title="IOPS"
        ),
    ]
    for chart in [*charts, *extra]:
        go.Figure(chart.figure)  # raises on any invalid property


def test_rate_and_percentile_charts_equal_fio_json(tmp_path: Path) -> None:
    (run,) = _imported(tmp_path, (QUICK, {}))
    charts = _charts(run)
    fio = raw_document("quick/round-000.json")
    expected_iops: dict[str, float] = {}
    expected_bw: dict[str, float] = {}
    for job in fio["jobs"]:
        for direction in ("read", "write"):
            stats = job[direction]
            if stats["io_bytes"]:
                key = job["jobname"]
                expected_iops[key] = expected_iops.get(key, 0.0) + stats["iops"]
                expected_bw[key] = expected_bw.get(key, 0.0) + stats["bw_bytes"] / 1e6
    iops = charts["iops"].figure["data"]
    plotted = {x: y for trace in iops for x, y in zip(trace["x"], trace["y"], strict=True)}
    assert plotted == pytest.approx(expected_iops, rel=1e-9)
    mbps = charts["mbps"].figure["data"]
    plotted = {x: y for trace in mbps for x, y in zip(trace["x"], trace["y"], strict=True)}
    assert plotted == pytest.approx(expected_bw, rel=1e-9)
    # the percentile ladder: fio's own p50/p99 (one job per test here) in the chart's unit
    chart = charts["percentiles"]
    size = {"µs": 1e3, "ms": 1e6, "s": 1e9}[chart.figure["layout"]["meta"]["unit"]]
    levels = {
        t["name"]: dict(zip(t["x"], t["y"], strict=True))
        for t in chart.figure["data"]
        if t.get("hoverinfo") != "skip"
    }
    for job in fio["jobs"]:
        for direction in ("read", "write"):
            if job[direction]["io_bytes"]:
                pct = job[direction]["lat_ns"]["percentile"]
                top = job[direction]["lat_ns"]["max"]
                category = f"{job['jobname']} {direction}"
                assert levels["p50"][category] == pytest.approx(pct["50.000000"] / size)
                assert levels["p99"][category] == pytest.approx(min(pct["99.000000"], top) / size)


def test_histogram_is_the_share_of_the_json_plus_bins(tmp_path: Path) -> None:
    (run,) = _imported(tmp_path, (QUICK, {}))
    chart = _charts(run)["histogram"]
    fio = raw_document("quick/round-000.json")
    job = next(j for j in fio["jobs"] if j["jobname"] == "randread-4k-latency")
    bins = {int(k): v for k, v in job["read"]["lat_ns"]["bins"].items()}
    total = sum(bins.values())
    assert total == job["read"]["total_ios"]
    trace = next(t for t in chart.figure["data"] if t["name"] == "randread-4k-latency read")
    size = {"µs": 1e3, "ms": 1e6, "s": 1e9}[chart.figure["layout"]["meta"]["x_unit"]]
    # ten buckets per decade: each step's share is the bins from its edge to the next
    edges = [x * size for x in trace["x"]]
    shares = trace["y"]
    assert sum(shares[1:-2]) == pytest.approx(100)
    for low, high, share in zip(edges[1:-2], edges[2:-1], shares[1:-2], strict=True):
        low, high = low * (1 - 1e-9), high * (1 - 1e-9)
        inside = sum(n for value, n in bins.items() if low <= value < high)
        assert share == pytest.approx(100 * inside / total)
    assert shares[0] == shares[-1] == 0  # the curve starts and ends at 0


def test_log_parser_and_time_series_agree_with_fio(tmp_path: Path) -> None:
    (logs,) = round_logs(read_series(LOGS, 0)).values()
    assert sorted(logs) == [("randread-4k", "bw"), ("randread-4k", "iops"), ("randread-4k", "lat")]
    (tmp_path / "a_iops.1.log").write_text(
        "1000, 501, 0, 4096, 0\nnot a line\n2000, 7, 1, 0, 0, 1\n"
    )
    assert [s.direction for s in read_series(tmp_path, 0)] == ["read", "write"]
    iops_jobs = logs[("randread-4k", "iops")]
    total = dict(summed(iops_jobs)["read"])
    fio = json.loads((LOGS / "output.json").read_text())
    fio_iops = sum(j["read"]["iops"] for j in fio["jobs"])
    assert total[1.0] == pytest.approx(fio_iops, rel=0.02)  # 2 x 500 IOPS, rate-limited
    latency = dict(weighted_latency(logs[("randread-4k", "lat")], iops_jobs)["read"])
    assert sorted(latency) == [1.0, 2.0, 3.0]  # fio stamped the last window 3001 ms
    lat_jobs = logs[("randread-4k", "lat")]
    first = [p.value for job in lat_jobs for p in job if p.time_ms == 1000]
    weights = [p.value for job in iops_jobs for p in job if p.time_ms == 1000]
    assert latency[1.0] == pytest.approx(
        sum(v * w for v, w in zip(first, weights, strict=True)) / sum(weights)
    )


def _first_values(kind: str) -> list[list[float]]:
    """The first two values of each job's log of ``kind``, read here without volbench."""
    return [
        [float(line.split(",")[1]) for line in path.read_text().splitlines()[:2]]
        for path in sorted(LOGS.glob(f"randread-4k_{kind}.*.log"))
    ]


def test_time_series_charts_come_from_the_stored_series(tmp_path: Path) -> None:
    run = _run_with_logs(tmp_path)
    charts = _charts(run)
    iops = traces_values(charts["ts-iops"])["randread-4k read"]
    firsts = _first_values("iops")
    assert iops[:2] == [firsts[0][0] + firsts[1][0], firsts[0][1] + firsts[1][1]]
    mbps = traces_values(charts["ts-mbps"])["randread-4k read"]
    bw = _first_values("bw")
    assert mbps[0] == pytest.approx((bw[0][0] + bw[1][0]) * 1024 / 1e6)  # fio's KiB/s
    assert "ts-lat" in charts


def _slower_copy(tmp_path: Path) -> Path:
    """The recorded quick round with every latency (bins, percentiles, mean, max) and
    runtime doubled, so its rates halved: another disk, for a group of two runs."""
    document = raw_document("quick/round-000.json")
    for job in document["jobs"]:
        job["job_runtime"] = job["job_runtime"] * 2
        for direction in ("read", "write"):
            stats = job[direction]
            stats["runtime"] = stats["runtime"] * 2
            for key in ("iops", "bw", "bw_bytes"):
                stats[key] = stats[key] // 2 if isinstance(stats[key], int) else stats[key] / 2
            for kind in ("lat_ns", "clat_ns", "slat_ns"):
                lat = stats.get(kind)
                if not lat:
                    continue
                for key in ("min", "max", "mean"):
                    lat[key] = lat[key] * 2
                if "percentile" in lat:
                    lat["percentile"] = {k: v * 2 for k, v in lat["percentile"].items()}
                if "bins" in lat:
                    lat["bins"] = {str(int(k) * 2): v for k, v in lat["bins"].items()}
    path = tmp_path / "slower.json"
    path.write_text(json.dumps(document))
    return path


def _p99(bins: dict[int, int]) -> int:
    """The 99th percentile of json+ bins: the first bucket whose cumulative count
    reaches 99% of the total (fio's rule, read here without volbench)."""
    total, seen = sum(bins.values()), 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= 0.99 * total:
            return value
    raise AssertionError("no bins")


def test_comparison_values_spread_and_merged_p99(tmp_path: Path) -> None:
    runs = _imported(
        tmp_path,
        (QUICK, {"vendor": "a", "size_gib": "50"}),
        (QUICK, {"vendor": "b", "size_gib": "50"}),
        (_slower_copy(tmp_path), {"vendor": "b", "size_gib": "50"}),
    )
    sheet = comparison_sheet(runs, ("vendor",))
    assert [g["name"] for g in sheet.document["groups"]] == ["vendor=a", "vendor=b"]
    assert sheet.document["groups"][1]["runs"] == [runs[1].id, runs[2].id]

    def row(metric: str) -> dict[str, Any]:
        return next(
            r for r in sheet.rows if r["test"] == "randread-4k-iops" and r["metric_key"] == metric
        )

    iops = row("iops")
    assert iops["value_0"] == pytest.approx(76_603.4, rel=1e-4)
    # group b: the mean of a run and its half, with the two as its spread
    assert iops["value_1"] == pytest.approx(76_603.4 * 0.75, rel=1e-4)
    assert (iops["min_1"], iops["max_1"]) == pytest.approx((76_603.4 / 2, 76_603.4), rel=1e-4)
    assert iops["stdev_1"] == pytest.approx(76_603.4 / 2 / 2**0.5, rel=1e-4)
    assert iops["diff_pct_1"] == pytest.approx(-25, rel=1e-3)
    # p99 of the group: of all its I/Os from both runs' bins merged, never an average
    fio = raw_document("quick/round-000.json")
    job = next(j for j in fio["jobs"] if j["jobname"] == "randread-4k-iops")
    bins = {int(k): v for k, v in job["read"]["lat_ns"]["bins"].items()}
    merged = dict(bins)
    for value, count in bins.items():
        merged[value * 2] = merged.get(value * 2, 0) + count
    p99 = row("lat_p99_ns")
    assert p99["source_1"] == "json+ bins"
    assert p99["value_1"] == pytest.approx(_p99(merged) / 1e3)
    own = job["read"]["lat_ns"]["percentile"]["99.000000"] / 1e3
    assert (p99["min_1"], p99["max_1"]) == pytest.approx((own, 2 * own))
    assert p99["value_1"] != pytest.approx((own + 2 * own) / 2)
    # mean latency over all I/Os: both runs did as many (the slower one in twice the time)
    mean = row("lat_mean_ns")
    fast = job["read"]["lat_ns"]["mean"] / 1e3
    assert mean["value_1"] == pytest.approx((fast + 2 * fast) / 2, rel=1e-6)
    cells = dict(
        zip([c.header for c in sheet.columns], sheet.cells()[sheet.rows.index(iops)], strict=True)
    )
    assert cells["vendor=b (2 runs)"] == f"{iops['value_1']:,.0f}"
    # (the last "min-max" column: group b's)
    assert cells["min-max"] == f"{iops['min_1']:,.0f}-{iops['max_1']:,.0f} (sd 47%)"

    charts = comparison_charts(sheet)
    assert charts[-1].id == "compare-radar"
    bars = next(t for t in charts[0].figure["data"] if t["name"] == "vendor=b")
    at = bars["x"].index("randread-4k-iops read")
    assert bars["error_y"]["array"][at] == pytest.approx(76_603.4 - 76_603.4 * 0.75, rel=1e-4)
    with pytest.raises(UsageError, match="same vendor"):
        comparison_sheet(runs[1:], ("vendor",))
    with pytest.raises(UsageError, match="no label 'region'"):
        comparison_sheet(runs, ("region",))


def test_html_is_self_contained(tmp_path: Path) -> None:
    runs = _imported(tmp_path, (QUICK, {"vendor": "a"}), (QUICK, {"vendor": "b"}))
    page = render_html(report_document(runs, ("vendor",))).decode()
    assert "<script src" not in page
    assert re.findall(r"<link[^>]*>", page) == ['<link rel="icon" href="data:,">']
    # outside the inlined plotly.js (whose code names plotly.com etc.), no address at all
    ours = re.sub(r'<script type="text/javascript">.*?</script>', "", page, flags=re.S)
    assert len(ours) < len(page) - 4_000_000
    assert not re.search(r"https?://", ours)
    figures = json.loads(
        page.split('id="volbench-figures">')[1].split("</script>")[0].replace("<\\/", "</")
    )
    divs = re.findall(r'<div class="chart" id="([^"]+)"[^>]*>', page)
    assert divs == list(figures) and len(divs) == len(set(divs)) > 8


def test_logs_of_several_places_share_one_clock(tmp_path: Path) -> None:
    """Multi-target runs log Unix-epoch ms (fio ``log_unix_epoch``), one log per place
    and client (``NAME@N_iops.J.log.HOST``): the series start one window after the
    earliest place's first point, and a place that started later stays later."""
    epoch = 1_795_414_000_000
    (tmp_path / "t@1_iops.1.log.127.0.0.2").write_text(
        f"{epoch + 1000}, 100, 0, 4096, 0\n{epoch + 2000}, 110, 0, 4096, 0\n"
    )
    (tmp_path / "t@2_iops.2.log.127.0.0.3").write_text(
        f"{epoch + 2000}, 50, 0, 4096, 0\n{epoch + 3000}, 60, 0, 4096, 0\n"
    )
    (logs,) = round_logs(read_series(tmp_path, 0)).values()
    assert sorted(logs) == [("t@1", "iops"), ("t@2", "iops")]
    jobs = [points for found in logs.values() for points in found]
    origin = common_origin_ms(jobs)
    assert origin == epoch
    first, second = (summed([p])["read"] for p in shifted(jobs, origin))
    assert first == [(1.0, 100.0), (2.0, 110.0)]
    assert second == [(2.0, 50.0), (3.0, 60.0)]
    (own,) = round_logs(read_series(LOGS, 0)).values()
    assert common_origin_ms(own[("randread-4k", "iops")]) == 0  # ms since the job started


def test_stalls_are_shaded_on_the_time_series(tmp_path: Path) -> None:
    """A stored stall is a shaded span on each per-second chart, from where it began in
    its test (fio's own clock) for as long as it lasted, named with its test."""
    stall = Stall(
        0,
        "randread-4k",
        "2026-11-23T06:00:03+00:00",
        "2026-11-23T06:00:09+00:00",
        6.0,
        True,
        test_offset_s=3.0,
    )
    unknown = dataclasses.replace(stall, test_offset_s=None)
    series = _run_with_logs(tmp_path).series
    charts = timeseries_charts("run1", series, [stall, unknown])
    for chart in charts:
        (shape,) = chart.figure["layout"]["shapes"]
        assert (shape["x0"], shape["x1"]) == (3.0, 9.0)
        (note,) = chart.figure["layout"]["annotations"]
        assert note["text"] == "stall: randread-4k (6 s at 0 IOPS)"
    assert "shapes" not in timeseries_charts("run1", series)[0].figure["layout"]


def test_a_burst_is_shaded_on_the_iops_series() -> None:
    """A test that ran at 3,000 IOPS for 12 s and 2,800 for 1 s, then at 1,000 (a
    credit bucket drained: the lab issue's gp2-like guest) is one span on the IOPS
    chart from the test's start for its 12.9 s at the ceiling, named with its figures;
    the latency chart and a flat test have none."""
    rates = [3000] * 12 + [2800] + [1000] * 27
    burst = LogSeries(
        0,
        "randwrite-4k",
        "iops",
        1,
        None,
        "write",
        tuple((1000 * (i + 1), r) for i, r in enumerate(rates)),
    )
    flat = dataclasses.replace(
        burst,
        test="randread-4k",
        direction="read",
        points=tuple((1000 * (i + 1), 1000) for i in range(40)),
    )
    latency = dataclasses.replace(burst, kind="lat", points=((1000, 980_000), (2000, 990_000)))
    charts = {c.id: c for c in timeseries_charts("run1", [burst, flat, latency])}
    (shape,) = charts["run1-ts-iops"].figure["layout"]["shapes"]
    assert (shape["x0"], shape["x1"]) == (0.0, pytest.approx(12.9))
    (note,) = charts["run1-ts-iops"].figure["layout"]["annotations"]
    assert note["text"] == "burst: randwrite-4k 3,000 IOPS for 12.9 s (~25,800 I/Os above 1,000)"
    assert "shapes" not in charts["run1-ts-lat"].figure["layout"]
