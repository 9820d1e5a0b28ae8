"""``volbench run quick --replay DIR``: the whole command on a recorded fio output.

No fio is on PATH: the plan, store and rendering layers run on what fio printed
in a real quick run (tests/fixtures/fio/quick), and every figure is checked
against that recorded JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import QUICK_TESTS, Volbench

REPLAY_DIR = Path(__file__).parents[1] / "fixtures" / "fio" / "quick"


def test_replayed_quick_run_reports_fios_recorded_figures(volbench: Volbench) -> None:
    recorded = (REPLAY_DIR / "round-000.json").read_text()
    raw = json.loads(recorded)
    target = volbench.home / "scratch.img"
    proc = volbench(
        "run",
        "quick",
        "--target",
        str(target),
        "--size",
        "1m",
        "--replay",
        str(REPLAY_DIR),
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
        env={"PATH": str(volbench.home / "no-fio-here")},
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["status"] == "completed"
    # one fio process per test: each round gets its test's part of the recording
    parts = [json.loads(output) for output in document["fio_outputs"]]
    assert [[j["jobname"] for j in part["jobs"]] for part in parts] == [[t] for t in QUICK_TESTS]
    assert all(part["global options"] == raw["global options"] for part in parts)
    assert document["host"]["fio_version"] == "fio-3.33 (replay)"
    assert document["settings"]["ioengine"] == "io_uring"
    assert [r["test"] for r in document["results"]] == list(QUICK_TESTS)
    by_name = {job["jobname"]: job for job in raw["jobs"]}
    for row in document["results"]:
        stats = by_name[row["test"]][row["direction"]]
        assert row["iops"] == stats["iops"]
        assert row["bw_bytes_per_s"] == stats["bw_bytes"]
        assert row["lat_mean_ns"] == stats["lat_ns"]["mean"]
        assert row["lat_p99_ns"] == stats["lat_ns"]["percentile"]["99.000000"]
        implied = stats["iops"] * stats["lat_ns"]["mean"] / 1e9
        assert abs(row["outstanding_implied"] - implied) < 1e-9
    logs = Path(document["settings"]["logs_dir"])
    assert logs.parent == volbench.runs_dir and (logs / "round-000" / "job.fio").is_file()


def test_replay_table_has_the_littles_law_column(volbench: Volbench) -> None:
    proc = volbench(
        "run",
        "quick",
        "--target",
        str(volbench.home / "scratch.img"),
        "--size",
        "1m",
        "--replay",
        str(REPLAY_DIR),
        "--runs-dir",
        str(volbench.runs_dir),
        env={"PATH": str(volbench.home / "no-fio-here")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Little's law" in proc.stdout
    assert "64.0 / 64" in proc.stdout and "1.0 / 1" in proc.stdout
