"""``volbench run iometer`` end to end on a scratch file with the real fio."""

from __future__ import annotations

import json
import shutil

import pytest
from cli_harness import Volbench, error_line, raw_job, raw_jobs

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def test_iometer_runs_builtin_and_file_specs_with_workers(volbench: Volbench) -> None:
    spec_file = volbench.home / "specs.toml"
    spec_file.write_text(
        '[[spec]]\nname = "mixed-4k"\ntransfer = "4k"\nread_pct = 70\nrandom_pct = 50\n'
        'align = "4k"\n'
    )
    proc = volbench(
        "run",
        "iometer",
        "--target",
        str(volbench.home / "io.img"),
        "--size",
        "32m",
        "--spec",
        "8k-random-read",
        "--spec",
        "mixed-4k",
        "--spec-file",
        str(spec_file),
        "--workers",
        "1..2",
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
    rows = [(r["spec"], r["workers"]) for r in document["specs"]]
    assert rows == [("8k-random-read", 1), ("8k-random-read", 2), ("mixed-4k", 1), ("mixed-4k", 2)]
    for row in document["specs"]:
        name = f"{row['spec']}.w{row['workers']}"
        jobs = [j for j in raw_jobs(document) if j["jobname"] == name]
        assert len(jobs) == row["workers"]  # one fio job per worker
        fio_iops = sum(j[d]["iops"] for j in jobs for d in ("read", "write"))
        assert row["iops"] == pytest.approx(fio_iops, rel=1e-12)
        fio_max = max(
            j[d]["lat_ns"]["max"] for j in jobs for d in ("read", "write") if j[d]["total_ios"]
        )
        assert row["lat_max_ns"] == fio_max
    job_text = "".join(p.read_text() for p in volbench.runs_dir.glob("*/round-*/job.fio"))
    assert "percentage_random=50" in job_text and "blockalign=4096" in job_text


def test_unknown_spec_is_one_line(volbench: Volbench) -> None:
    proc = volbench("run", "iometer", "--target", str(volbench.home / "x.img"), "--spec", "nope")
    assert "unknown access spec 'nope'" in error_line(proc, 2)
    assert not (volbench.home / "x.img").exists()


def test_cache_both_runs_buffered_twins_and_warns_when_they_differ(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "iometer",
        "--target",
        str(volbench.home / "c.img"),
        "--size",
        "32m",
        "--spec",
        "8k-random-read",
        "--workers",
        "1",
        "--runtime",
        "1s",
        "--ramp-time",
        "0",
        "--cache",
        "both",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    specs = {r["spec"]: r for r in document["specs"]}
    assert set(specs) == {"8k-random-read", "buffered.8k-random-read"}
    assert raw_job(document, "8k-random-read.w1")["job options"]["direct"] == "1"
    assert raw_job(document, "buffered.8k-random-read.w1")["job options"]["direct"] == "0"
    ratio = specs["buffered.8k-random-read"]["iops"] / specs["8k-random-read"]["iops"]
    warned = any(n.startswith("warning: 8k-random-read.w1 buffered") for n in document["notes"])
    assert warned == (ratio > 2 or ratio < 0.5)
