"""A block device a run writes is held open exclusively from its first check to the
run's end (volbench/targets/hold.py): a colleague's ``mkfs.ext4`` and any other
exclusive open are refused by the kernel while fio writes, and the device is free
again after. Loop devices over image files only."""

from __future__ import annotations

import errno
import os
import subprocess
import time
from collections.abc import Callable

import pytest
from cli_harness import Volbench, finish

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]


def _claim(device: str) -> int:
    """0 when ``device`` could be opened exclusively (and was closed again), else errno."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        return exc.errno or -1
    os.close(fd)
    return 0


def test_a_device_being_written_cannot_be_formatted(
    volbench: Volbench, loop_device: Callable[..., str], system_tool: Callable[[str], str]
) -> None:
    device = loop_device(64)
    proc = volbench.start(
        "run", "sweep", "--target", device, "--rw", "randwrite", "--iodepth", "4",
        "--runtime", "4s", "--ramp-time", "0", "--size", "32m",
        "--runs-dir", str(volbench.runs_dir),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list(volbench.runs_dir.glob("*/round-000/job.fio")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.05)
        assert _claim(device) == errno.EBUSY
        mkfs = subprocess.run(
            [system_tool("mkfs.ext4"), "-q", "-F", device], capture_output=True, text=True
        )
        assert mkfs.returncode != 0 and "in use" in mkfs.stderr, mkfs.stderr
    finally:
        done = finish(proc)
    assert done.returncode == 0, done.stderr
    assert _claim(device) == 0  # given back at the run's end
