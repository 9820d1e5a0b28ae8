"""``volbench pts --replay`` then ``volbench report``: the PTS pages end to end.

The recorded PTS run (tests/fixtures/fio/pts, all eight tests, reduced) is
stored by the real command with no fio on PATH; its report opens in headless
Chromium (every chart drawn, no console error, no request) and its PDF holds
the PTS header and the IOPS table's stored values.
"""

from __future__ import annotations

import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from browser import assert_summary_first, needs_chromium, rendered
from cli_harness import Volbench

from volbench.report.sheet import fmt_count

RECORDING = Path(__file__).parents[1] / "fixtures" / "fio" / "pts" / "recording.tar.xz"
OPTIONS = (
    "--size",
    "64m",
    "--cell-seconds",
    "1",
    "--max-rounds",
    "5",
    "--block-sizes",
    "4k,64k",
    "--mixes",
    "100/0,0/100",
    "--threads",
    "1",
    "--iodepth",
    "4",
    "--hir-cycles",
    "2",
    "--xsr-cells",
    "3",
    "--toio-grid",
    "2,1",
    "--wsat-max-rounds",
    "3",
)
"""The options the fixture was recorded with (tests/fixtures/fio/README.md)."""
CHARTS = (
    "iops-2d",
    "iops-matrix",
    "throughput-1024k-bars",
    "throughput-128k-bars",
    "latency-lat_mean_ns",
    "wsat-gb-log",
    "hir-waits",
    "xsr-bw",
    "ecw-intensity",
    "dirth-histograms",
    "iops-window0",
)
TESTS = (
    "IOPS",
    "Throughput SEQ 1024 KiB",
    "Throughput SEQ 128 KiB",
    "Latency",
    "WSAT",
    "HIR",
    "XSR",
    "ECW",
    "DIRTH",
)


def split_throughput(folder: Path) -> None:
    """The recording's Throughput outputs (one test, both block sizes in each round, as
    recorded) also as the outputs of the two Throughput tests: the WIPC passes, or one
    block size's cells, named as that test's; fio's figures unchanged."""
    for path in sorted(folder.glob("*-throughput.*.json")):
        document = json.loads(path.read_text())
        for test, bs in (("throughput-1024k", "1m"), ("throughput-128k", "128k")):
            jobs = [
                {**job, "jobname": job["jobname"].replace("throughput.", f"{test}.", 1)}
                for job in document["jobs"]
                if ".wipc." in job["jobname"] or job["jobname"].endswith(f".{bs}")
            ]
            (folder / f"{path.stem}-{test}.json").write_text(json.dumps({**document, "jobs": jobs}))


@pytest.fixture
def replayed(volbench: Volbench, tmp_path: Path) -> Volbench:
    with tarfile.open(RECORDING) as tar:
        tar.extractall(tmp_path / "rec", filter="data")
    split_throughput(tmp_path / "rec")
    proc = volbench(
        "pts",
        "all",
        "--target",
        str(volbench.home / "pts.img"),
        *OPTIONS,
        "--replay",
        str(tmp_path / "rec"),
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
        env={"PATH": str(volbench.home / "no-fio-here")},
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["status"] == "completed"
    assert document["settings"]["purge_method"] == "none (replayed fio outputs)"
    return volbench


@needs_chromium
def test_pts_report_pages_render_in_html_and_pdf(replayed: Volbench, tmp_path: Path) -> None:
    page_file = tmp_path / "pts.html"
    assert replayed("report", "latest", "-o", str(page_file)).returncode == 0
    chart_ids = re.findall(r'<div class="chart" id="([^"]+)"[^>]*>', page_file.read_text())
    for kind in CHARTS:
        assert f"run1-pts-{kind}" in chart_ids
    with rendered(page_file) as opened:
        for chart_id in chart_ids:
            assert opened.page.locator(f"#{chart_id} .main-svg").count() >= 1, chart_id
        # the headline figures of every test, with its steady state, before any chart
        assert_summary_first(opened, tmp_path / "pts-first-screen.png")
        summary = opened.page.locator("table.summary").inner_text()  # the one summary
        for test in TESTS:
            assert test in summary
    assert opened.errors == []
    assert opened.network_requests == []

    pdf = tmp_path / "pts.pdf"
    assert replayed("report", "latest", "-o", str(pdf)).returncode == 0
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    for field in (
        "Purge",
        "Preconditioning",
        "Active range",
        "TC x QD",
        "Data pattern",
        "Write cache",
        "Steady state",
        "none (replayed fio outputs)",
    ):
        assert field in text
    for test in TESTS:
        assert f"Run 1: PTS {test}" in text
    pts = json.loads(replayed("pts-report", "latest", "--format", "json").stdout)
    iops = next(t for t in pts["tables"] if t["title"].startswith("IOPS"))
    for row in iops["rows"]:
        assert fmt_count(row["iops_100"]) in text and fmt_count(row["iops_0"]) in text
