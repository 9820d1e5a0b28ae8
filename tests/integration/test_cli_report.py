"""``volbench report`` and ``volbench compare`` end to end: real fio runs, the page
opened in headless Chromium (Debian's chromium, driven by Playwright), the PDF
read back with pdftotext and rendered with pdftoppm."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import (
    assert_summary_first,
    chromium,
    hover_shows,
    needs_chromium,
    opened_in,
    rendered,
)
from cli_harness import Volbench

from volbench.report.chart import Series, bar_chart
from volbench.report.document import Document, Section
from volbench.report.html import render_html
from volbench.report.sheet import fmt_count, fmt_latency


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Volbench]:
    """Two short quick runs on a scratch file, labelled as two vendors' disks."""
    volbench = Volbench(tmp_path_factory.mktemp("report"))
    target = volbench.home / "scratch.img"
    for vendor in ("alpha", "beta"):
        # 1.5 s tests: fio logs a per-second window only once a whole second has passed
        proc = volbench.quick(target, "--runtime", "1500ms", "--label", f"vendor={vendor}")
        assert proc.returncode == 0, proc.stderr
    yield volbench


def _stored(volbench: Volbench, ref: str) -> dict[str, Any]:
    return volbench.stored(ref)


@needs_chromium
def test_html_report_renders_offline_with_hover_values(two_runs: Volbench, tmp_path: Path) -> None:
    page_file = tmp_path / "report.html"
    proc = two_runs("report", "1", "2", "--by", "vendor", "-o", str(page_file))
    assert proc.returncode == 0, proc.stderr
    one_run = tmp_path / "run1.html"
    proc = two_runs("report", "1", "-o", str(one_run))
    assert proc.returncode == 0, proc.stderr
    html = page_file.read_text()
    chart_ids = re.findall(r'<div class="chart" id="([^"]+)"[^>]*>', html)
    # every generic chart of both runs (time series of fio's stored logs too), the comparison
    for run_id in (1, 2):
        for kind in ("iops", "mbps", "percentiles", "histogram", "ts-iops", "ts-mbps", "ts-lat"):
            assert f"run{run_id}-{kind}" in chart_ids
    assert "compare-radar" in chart_ids

    with chromium() as browser:
        with opened_in(browser, page_file.as_uri()) as opened:
            page = opened.page
            for chart_id in chart_ids:
                svg = page.locator(f"#{chart_id} .main-svg").first
                assert svg.count() == 1, f"{chart_id} did not render"
            assert page.locator(".js-plotly-plot").count() == len(chart_ids)
            # the runs at a glance (then the comparison's table) before any chart
            assert_summary_first(opened, tmp_path / "runs-first-screen.png")

            # hover the first bar of run 1's IOPS chart: its value appears
            stored = _stored(two_runs, "1")["results"]
            chart = page.locator("#run1-iops")
            bar = chart.locator(".barlayer .point path").first
            hover_shows(page, chart, bar, "#run1-iops .hoverlayer .hovertext")
            hover = chart.locator(".hoverlayer").text_content() or ""
            first = next(r for r in stored if r["direction"] == "read")  # first bar, first series
            assert f"{first['iops']:,.6g}" in hover, hover
            # and every bar is labelled with its value
            labels = chart.locator(".barlayer .point text").all_text_contents()
            assert fmt_count(first["iops"]) in labels
        assert opened.errors == []
        assert opened.network_requests == []
        # one run's report: its summary table (a row per test) on the first screen
        with opened_in(browser, one_run.as_uri()) as opened:
            assert_summary_first(opened, tmp_path / "run1-first-screen.png")
            rows = opened.page.locator("table.summary tbody tr").count()
            assert rows == len(stored)
        assert opened.errors == []


@needs_chromium
@pytest.mark.parametrize(("latency_test_iops", "axis"), [(11_000.0, "linear"), (3_000.0, "log")])
def test_a_bars_value_shows_on_hover_on_either_axis(
    latency_test_iops: float, axis: str, tmp_path: Path
) -> None:
    """A QD 1 test 20 times below the best one puts the IOPS chart on a log axis, where
    plotly draws each bar from far below the plot (a busy machine's quick run did so
    in CI): its value still shows where a user points at the bar."""
    series = [
        Series("read", ("randread-4k-iops", "randread-4k-latency"), (138_944.0, latency_test_iops)),
        Series("write", ("randwrite-4k-iops",), (144_291.0,)),
    ]
    chart = bar_chart("iops", "IOPS per test", series, y_title="IOPS")
    assert chart.figure["layout"]["yaxis"]["type"] == axis
    page_file = tmp_path / "bars.html"
    page_file.write_bytes(render_html(Document("bars", "", (Section("bars", charts=(chart,)),))))
    with rendered(page_file) as opened:
        shown = opened.page.locator("#iops")
        for index, value in enumerate(("138,944", "144,291")):
            bar = shown.locator(".barlayer .trace").nth(index).locator(".point path").first
            hover_shows(opened.page, shown, bar, "#iops .hoverlayer .hovertext")
            assert value in (shown.locator(".hoverlayer").text_content() or "")
    assert opened.errors == []


@needs_chromium
def test_pdf_report_has_the_header_and_the_stored_values(
    two_runs: Volbench, tmp_path: Path
) -> None:
    pdf = tmp_path / "report.pdf"
    proc = two_runs("report", "2", "-o", str(pdf))
    assert proc.returncode == 0, proc.stderr
    assert pdf.read_bytes().startswith(b"%PDF")
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    document = _stored(two_runs, "2")
    for field in ("Target", "Host", "fio", str(document["target"]["path"]), "vendor=beta"):
        assert field in text
    for row in document["results"]:
        assert fmt_count(row["iops"]) in text
        assert fmt_latency(row["lat_mean_ns"]) in text
    # charts are vector: their titles and axis labels are text in the PDF
    for title in ("IOPS per test", "Latency percentiles", "Latency histogram", "IOPS per second"):
        assert title in text
    subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 2 and all(p.stat().st_size > 2_000 for p in pages)


def test_compare_prints_values_and_differences(two_runs: Volbench) -> None:
    document = two_runs.document("compare", "1", "2", "--by", "vendor")
    alpha, beta = _stored(two_runs, "1")["results"], _stored(two_runs, "2")["results"]
    assert [g["name"] for g in document["groups"]] == ["vendor=alpha", "vendor=beta"]
    for a, b in zip(alpha, beta, strict=True):
        row = next(
            r
            for r in document["rows"]
            if r["test"] == a["test"] and r["direction"] == a["direction"] and r["metric"] == "IOPS"
        )
        assert row["value_0"] == pytest.approx(a["iops"]) and row["value_1"] == pytest.approx(
            b["iops"]
        )
        assert row["diff_pct_1"] == pytest.approx((b["iops"] - a["iops"]) / a["iops"] * 100)
    table = two_runs("compare", "1", "2", "--by", "vendor")
    assert table.returncode == 0 and "vendor=beta vs vendor=alpha" in table.stdout


def test_report_bad_input_is_one_line(two_runs: Volbench, tmp_path: Path) -> None:
    for args, message in (
        (("report", "1", "-o", str(tmp_path / "x.docx")), "name it FILE.html or FILE.pdf"),
        (("report", "99", "-o", str(tmp_path / "x.html")), "99"),
        (("compare", "1"), "at least two runs"),
        (("compare", "1", "2", "--by", "region"), "no label 'region'"),
    ):
        proc = two_runs(*args)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def _figures(page: Path) -> dict[str, Any]:
    html = page.read_text()
    text = html.split('id="volbench-figures">')[1].split("</script>")[0].replace("<\\/", "</")
    figures: dict[str, Any] = json.loads(text)
    return figures


def _trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    trace: dict[str, Any] = next(t for t in figure["data"] if t["name"] == name)
    return trace


def test_plan_charts_show_their_tables_values(volbench: Volbench, tmp_path: Path) -> None:
    """sweep, iometer and scan charts plot exactly the rows their tables show."""
    target = str(tmp_path / "scratch.img")
    common = ("--target", target, "--size", "32m", "--runs-dir", str(volbench.runs_dir))
    short = ("--runtime", "0.5s", "--ramp-time", "0")
    for args in (
        ("run", "sweep", "--iodepth", "1,4", "--numjobs", "1,2", *short),
        ("run", "iometer", "--spec", "8k-random-read", "--workers", "1..2", *short),
        ("run", "scan", "--zones", "4", "--zone-time", "0.3s", "--access-time", "0.3s"),
    ):
        proc = volbench(*args, *common)
        assert proc.returncode == 0, proc.stderr
    page = tmp_path / "plans.html"
    proc = volbench("report", "1", "2", "3", "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    figures = _figures(page)

    sweep = volbench.show("1")["points"]
    iops = _trace(figures["run1-sweep-iops"], "2 job(s)")
    two = sorted((p for p in sweep if p["numjobs"] == 2), key=lambda p: p["iodepth"])
    assert iops["x"] == [1, 4] and iops["y"] == pytest.approx([p["iops"] for p in two])
    mean = _trace(figures["run1-sweep-latency"], "1 job(s) mean")
    one = sorted((p for p in sweep if p["numjobs"] == 1), key=lambda p: p["iops"])
    size = {"µs": 1e3, "ms": 1e6, "s": 1e9}[figures["run1-sweep-latency"]["layout"]["meta"]["unit"]]
    assert mean["y"] == pytest.approx([p["lat_mean_ns"] / size for p in one])
    # the knee and the peak the table names are marked on the chart
    marked = _trace(figures["run1-sweep-iops"], "marked")
    for point in (p for p in sweep if p["mark"]):
        assert f"{point['mark']}: {point['point']}" in marked["text"]

    specs = volbench.show("2")["specs"]
    workers = _trace(figures["run2-iometer-iops"], "8k-random-read")
    assert workers["x"] == [1, 2] and workers["y"] == pytest.approx([s["iops"] for s in specs])

    zones = volbench.show("3")["zones"]
    rate = _trace(figures["run3-scan"], "transfer rate")
    assert rate["x"] == pytest.approx([z["position_pct"] for z in zones])
    assert rate["y"] == pytest.approx([z["bw_mb_per_s"] for z in zones])
