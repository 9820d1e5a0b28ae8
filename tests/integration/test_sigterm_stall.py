"""SIGTERM ends a run within seconds even while fio is stuck on a stalled device.

A blkio cgroup (v1) throttles reads of a loop device to 512 bytes/s: with 16 reads of
4 KiB outstanding, fio cannot finish its I/O for about two minutes, so the SIGINT
volbench forwards cannot stop it. volbench must then kill fio's process group, store
the run as interrupted and exit 128 + 15 = 143 within about two seconds. fio itself
can only leave once its outstanding reads complete (the kernel holds a process in
I/O wait), so the test lifts the throttle afterwards and checks that the fio it
started is gone (by pid) soon after.

Only this test's cgroup, loop device and processes are touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench, cgroup_prefix
from test_cli_kill import fio_processes, wait_for

BLKIO = Path("/sys/fs/cgroup/blkio")
Loop = Callable[..., str]


@pytest.fixture
def stalled_group(loop_device: Loop) -> Iterator[tuple[str, Path]]:
    """A 32 MiB loop device and an empty ``volbench-`` blkio cgroup (removed afterwards,
    its throttle lifted first)."""
    if not (BLKIO / "blkio.throttle.read_bps_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    device = loop_device(32)
    group = BLKIO / f"volbench-sigterm-{os.getpid()}"
    group.mkdir()
    try:
        yield device, group
    finally:
        _throttle(group, device, 0)  # lets fio's held reads complete
        for _ in range(100):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def _throttle(group: Path, device: str, bytes_per_s: int) -> None:
    """Set (0: lift) the read throttle of ``device`` in ``group``."""
    rdev = os.stat(device).st_rdev
    with contextlib.suppress(OSError):
        rule = f"{os.major(rdev)}:{os.minor(rdev)} {bytes_per_s}"
        (group / "blkio.throttle.read_bps_device").write_text(rule)


def _waiting_for_io(pids: list[int]) -> bool:
    """Whether a thread of ``pids`` sleeps in the kernel waiting for I/O completions:
    its ``/proc/PID/task/TID/wchan`` is io_uring's ``io_cqring_wait`` or libaio's
    ``read_events`` (io_getevents)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                if (task / "wchan").read_text().strip() in {"io_cqring_wait", "read_events"}:
                    return True
    return False


def test_sigterm_while_fio_is_stuck_ends_the_run_within_seconds(
    volbench: Volbench, stalled_group: tuple[str, Path], tmp_path: Path
) -> None:
    device, group = stalled_group
    command = [
        *cgroup_prefix(group),
        sys.executable,
        "-m",
        "volbench",
        "run",
        "sweep",
        "--target",
        device,
        "--size",
        "32m",
        "--rw",
        "randread",
        "--iodepth",
        "16",
        "--numjobs",
        "1",
        "--runtime",
        "30s",
        "--ramp-time",
        "0",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    ]
    proc = subprocess.Popen(
        command,
        env=volbench.env,
        cwd=volbench.home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fio: list[int] = []
    try:
        jobs = volbench.runs_dir
        assert wait_for(lambda: bool(list(jobs.glob("*/round-000/job.fio"))), 60)
        _throttle(group, device, 512)
        assert wait_for(lambda: bool(fio_processes(tmp_path)), 30), "fio never started"
        # fio's job waits for its reads, held by the throttle: before that, on a busy
        # machine, fio may still be setting up and leave at once on SIGINT
        assert wait_for(lambda: _waiting_for_io(fio_processes(tmp_path)), 60), "no reads held"
        fio = fio_processes(tmp_path)
        assert proc.poll() is None
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)  # the volbench this test started
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
        assert proc.returncode == 143, err
        assert elapsed < 4.0, elapsed
        assert "terminated by SIGTERM" in err and "Traceback" not in err
        document = json.loads(volbench("show", "latest", "--format", "json").stdout)
        assert document["status"] == "interrupted"
        assert "fio did not stop" in document["error"]
        assert json.loads(out)["id"] == document["id"]
        _throttle(group, device, 0)  # the reads held complete: the killed fio leaves
        assert wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in fio), 10), fio
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        _throttle(group, device, 0)
        for pid in fio:  # only the fio started for this test, should it be left
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
