"""A blkio cgroup (v1) of the tests' own, capping one device's read and write IOPS:
made with a ``volbench-`` prefix, removed once its processes have ended."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BLKIO = Path("/sys/fs/cgroup/blkio")


@contextmanager
def throttled_group(device: str, name: str, iops: int) -> Iterator[Path]:
    """The cgroup ``volbench-NAME-PID`` capping ``device``'s reads and writes at ``iops``
    each (skips the test where blkio v1 throttling is not available); removed after,
    once the processes moved into it have ended (30 s at most)."""
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    rdev = os.stat(device).st_rdev
    group = BLKIO / f"volbench-{name}-{os.getpid()}"
    group.mkdir()
    try:
        rule = f"{os.major(rdev)}:{os.minor(rdev)} {iops}"
        (group / "blkio.throttle.read_iops_device").write_text(rule)
        (group / "blkio.throttle.write_iops_device").write_text(rule)
        yield group
    finally:
        remove_when_empty(group)


def remove_when_empty(group: Path, seconds: float = 30.0) -> None:
    """Remove the cgroup ``group`` (one a test made) once the processes moved into it
    have ended (``seconds`` at most)."""
    deadline = time.monotonic() + seconds
    while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.1)
    group.rmdir()
