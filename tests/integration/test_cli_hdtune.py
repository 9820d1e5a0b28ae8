"""``volbench run scan`` and ``volbench run filebench`` with the real fio (the EC2/Azure
disk article)."""

from __future__ import annotations

import json
import shutil
from statistics import mean

import pytest
from cli_harness import Volbench, error_line, raw_jobs

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

MiB = 1 << 20


def test_scan_reads_every_zone_and_reports_hd_tune_figures(volbench: Volbench) -> None:
    target = volbench.home / "scan.img"
    proc = volbench(
        "run",
        "scan",
        "--target",
        str(target),
        "--size",
        "32m",
        "--zones",
        "4",
        "--zone-time",
        "200ms",
        "--access-time",
        "500ms",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    zones = document["zones"]
    assert [z["offset_bytes"] for z in zones] == [0, 8 * MiB, 16 * MiB, 24 * MiB]
    assert [z["position_pct"] for z in zones] == [0.0, 25.0, 50.0, 75.0]
    raw = {j["jobname"]: j for j in raw_jobs(document)}
    for zone in zones:
        job = raw[f"zone-{zone['zone']:04d}"]
        assert job["job options"]["offset"] == str(zone["offset_bytes"])
        assert zone["bw_bytes_per_s"] == job["read"]["bw_bytes"]
        assert job["write"]["total_ios"] == 0  # a scan only reads
    summary = document["summary"]
    rates = [z["bw_bytes_per_s"] / 1e6 for z in zones]
    assert summary["min_mb_per_s"] == min(rates) and summary["max_mb_per_s"] == max(rates)
    assert summary["avg_mb_per_s"] == pytest.approx(mean(rates))
    assert summary["access_time_ns"] == raw["access-time"]["read"]["lat_ns"]["mean"]
    assert raw["access-time"]["job options"]["iodepth"] == "1"
    assert summary["burst_mb_per_s"] == raw["burst-rate"]["read"]["bw_bytes"] / 1e6
    assert raw["burst-rate"]["job options"]["size"] == "65536"


def test_too_many_zones_is_one_line(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "scan",
        "--target",
        str(volbench.home / "tiny.img"),
        "--size",
        "1m",
        "--zones",
        "100",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    assert "use fewer --zones" in error_line(proc, 2)


def test_filebench_gives_seed_003s_row(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "filebench",
        "--target",
        str(volbench.home / "fb.img"),
        "--size",
        "32m",
        "--runtime",
        "1s",
        "--ramp-time",
        "0",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    row = document["filebench"]
    raw = {j["jobname"]: j for j in raw_jobs(document)}
    assert row["sequential-read"] == raw["sequential-read"]["read"]["bw_bytes"] / 1000
    assert row["sequential-write"] == raw["sequential-write"]["write"]["bw_bytes"] / 1000
    assert row["random-read-4k"] == raw["random-read-4k"]["read"]["iops"]
    assert row["random-write-4k-qd32"] == raw["random-write-4k-qd32"]["write"]["iops"]
    assert raw["random-read-4k-qd32"]["job options"]["iodepth"] == "32"
    assert raw["random-read-4k"]["job options"]["iodepth"] == "1"


def test_firsttouch_reads_the_same_region_twice(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "firsttouch",
        "--target",
        str(volbench.home / "ft.img"),
        "--size",
        "32m",
        "--offset",
        "8m",
        "--region",
        "16m",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    raw = {j["jobname"]: j for j in raw_jobs(document)}
    first, second = raw["first-pass"], raw["second-pass"]
    for job in (first, second):
        assert job["job options"]["offset"] == str(8 * MiB)
        assert job["job options"]["size"] == str(16 * MiB)
        assert job["read"]["io_bytes"] == 16 * MiB  # every block once
        assert job["write"]["total_ios"] == 0
    expected = 100 * (1 - first["read"]["bw_bytes"] / second["read"]["bw_bytes"])
    assert document["penalty_pct"] == pytest.approx(expected)
    assert any("sparse files" in n for n in document["notes"])


def test_firsttouch_region_beyond_the_target_is_one_line(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "firsttouch",
        "--target",
        str(volbench.home / "ft.img"),
        "--size",
        "8m",
        "--offset",
        "4m",
        "--region",
        "8m",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    assert "is beyond the target's" in error_line(proc, 2)
