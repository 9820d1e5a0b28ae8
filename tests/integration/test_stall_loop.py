"""Stall detection with the real fio on a loop device made to stall.

A blkio cgroup (v1) throttles the device's reads to 512 bytes/s: a 4 KiB read then
completes only every 8 s, so a QD 1 read test sees about 8 s of zero completions
with one I/O outstanding. The rule is written once fio's job file exists, so that
volbench's own preparation reads are not throttled; writes are never throttled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from cli_harness import Volbench, cgroup_prefix

BLKIO = Path("/sys/fs/cgroup/blkio")
Loop = Callable[..., str]
READ_BPS = 512


@pytest.fixture
def stalling(loop_device: Loop) -> Iterator[tuple[str, Path]]:
    """A 32 MiB loop device and an empty ``volbench-`` cgroup (removed afterwards)."""
    if not (BLKIO / "blkio.throttle.read_bps_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    device = loop_device(32)
    group = BLKIO / f"volbench-stall-{os.getpid()}"
    group.mkdir()
    try:
        yield device, group
    finally:
        for _ in range(50):  # the processes in it have ended; the kernel may lag a little
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def _run_stalling(volbench: Volbench, group: Path, device: str, *args: str) -> tuple[int, str]:
    """``volbench ARGS`` inside ``group``; the read throttle is set when fio's job file
    appears. Returns the exit code and stderr."""
    command = [*cgroup_prefix(group), sys.executable, "-m", "volbench", *args]
    proc = subprocess.Popen(
        command, env=volbench.env, cwd=volbench.home, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not list(volbench.runs_dir.glob("*/round-000/job.fio")):
            assert proc.poll() is None and time.monotonic() < deadline, "fio never started"
            time.sleep(0.02)
        rdev = os.stat(device).st_rdev
        rule = f"{os.major(rdev)}:{os.minor(rdev)} {READ_BPS}"
        (group / "blkio.throttle.read_bps_device").write_text(rule)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_a_stall_is_recorded_with_times_inside_the_run(
    volbench: Volbench, stalling: tuple[str, Path]
) -> None:
    device, group = stalling
    code, stderr = _run_stalling(
        volbench,
        group,
        device,
        *("run", "sweep", "--target", device, "--size", "32m", "--rw", "randread"),
        *("--iodepth", "1", "--numjobs", "1", "--runtime", "1s", "--ramp-time", "0"),
        *("--stall-seconds", "3", "--runs-dir", str(volbench.runs_dir), "--format", "json"),
    )
    assert code == 0, stderr
    assert "warning: stalled: 0 IOPS for 3 s" in stderr
    shown = volbench("show", "latest", "--format", "json")
    document = json.loads(shown.stdout)
    run = json.loads(volbench("export", "latest", "--format", "json").stdout)
    assert document["status"] == "completed"
    (stall,) = document["stalls"]
    assert stall["round"] == 0 and stall["resolved"] is True
    assert stall["test"] == document["results"][0]["test"]
    # one 4 KiB read per 8 s: the first completes about 8 s after fio started
    assert 5.0 <= stall["seconds"] <= 12.0
    start, end = _moment(stall["started_at"]), _moment(stall["ended_at"])
    assert _moment(run["started_at"]) <= start < end <= _moment(run["ended_at"])
    assert abs((end - start).total_seconds() - stall["seconds"]) <= 1.0
    markdown = volbench("show", "latest", "--format", "markdown").stdout
    assert "stalls (0 IOPS with I/O outstanding)" in markdown
    csv = volbench("export", "latest", "--format", "csv").stdout
    assert "started_at,ended_at,seconds,resolved" in csv


def test_abort_on_stall_ends_the_run_and_keeps_finished_tests(
    volbench: Volbench, stalling: tuple[str, Path]
) -> None:
    device, group = stalling
    started = time.monotonic()
    code, stderr = _run_stalling(
        volbench,
        group,
        device,
        *("run", "quick", "--target", device, "--size", "32m", "--iodepth", "1"),
        *("--runtime", "1s", "--ramp-time", "0", "--stall-seconds", "4", "--abort-on-stall"),
        *("--runs-dir", str(volbench.runs_dir)),
    )
    elapsed = time.monotonic() - started
    assert code == 3, stderr
    assert "stalled: 0 IOPS for 4 s at " in stderr and "on randread-4k-iops" in stderr
    assert elapsed < 40  # the six tests were not all run
    document = json.loads(volbench("show", "latest", "--format", "json").stdout)
    assert document["status"] == "failed"
    assert document["error"].startswith("stalled: 0 IOPS for 4 s at ")
    assert document["error"].endswith("UTC on randread-4k-iops")
    tests = {row["test"] for row in document["results"]}
    assert tests == {"randwrite-4k-iops"}  # finished before the stall, kept
    assert document["stalls"][0]["test"] == "randread-4k-iops"
