"""A block device a run writes is held open exclusively from its first check to the
run's end (volbench/targets/hold.py): a colleague's ``mkfs.ext4`` and any other
exclusive open are refused by the kernel while fio writes, and the device is free
again after. Loop devices over image files only."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

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
        "run",
        "sweep",
        "--target",
        device,
        "--rw",
        "randwrite",
        "--iodepth",
        "4",
        "--runtime",
        "4s",
        "--ramp-time",
        "0",
        "--size",
        "32m",
        "--runs-dir",
        str(volbench.runs_dir),
    )
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


def _protected_ext4(
    loop_device: Callable[..., str], system_tool: Callable[[str], str]
) -> tuple[str, Path, str]:
    """A 16 MiB loop device holding ext4: its path, its image and the image's sha256."""
    mkfs = system_tool("mkfs.ext4")
    device = loop_device(
        16,
        setup=lambda image: subprocess.run(
            [mkfs, "-q", "-F", str(image)], check=True, capture_output=True
        ),
    )
    name = Path(device).name
    image = Path(Path(f"/sys/class/block/{name}/loop/backing_file").read_text().strip())
    return device, image, hashlib.sha256(image.read_bytes()).hexdigest()


def _pts(volbench: Volbench, target: str, *args: str) -> subprocess.Popen[str]:
    return volbench.start(
        "pts",
        "iops",
        "--target",
        target,
        "--block-sizes",
        "4k",
        "--mixes",
        "100/0,0/100",
        "--cell-seconds",
        "1s",
        "--max-rounds",
        "5",
        "--threads",
        "1",
        "--iodepth",
        "4",
        "--runs-dir",
        str(volbench.runs_dir),
        *args,
    )


def _wait_for_round(volbench: Volbench, proc: subprocess.Popen[str], number: int) -> None:
    deadline = time.monotonic() + 120
    while not list(volbench.runs_dir.glob(f"*/round-{number:03d}/job.fio")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.02)


def test_mkfs_during_a_pts_run_is_refused_and_the_run_goes_on(
    volbench: Volbench, loop_device: Callable[..., str], system_tool: Callable[[str], str]
) -> None:
    """A colleague's ``mkfs.ext4`` of the blank device a PTS run measures, during its
    cells (one held ahead of the next): refused by the kernel, the run completes."""
    device = loop_device(64)
    proc = _pts(volbench, device)
    try:
        _wait_for_round(volbench, proc, 2)
        mkfs = subprocess.run(
            [system_tool("mkfs.ext4"), "-q", "-F", device], capture_output=True, text=True
        )
        assert mkfs.returncode != 0 and "in use" in mkfs.stderr, mkfs.stderr
    finally:
        done = finish(proc, 300)
    assert done.returncode == 0, done.stderr
    assert _claim(device) == 0


def test_a_file_swapped_for_a_device_during_a_pts_cell_is_not_written(
    volbench: Volbench, loop_device: Callable[..., str], system_tool: Callable[[str], str]
) -> None:
    """The PTS file target replaced by a link to an ext4 device while a cell runs and
    the next is held at its gate: the gate stays shut (checked just before), the run
    stops in one line, the device is unchanged. (Before, the held cell opened the
    target at its gate unchecked and wrote 16 MiB to the device.)"""
    device, image, before = _protected_ext4(loop_device, system_tool)
    target = volbench.home / "pts.img"
    proc = _pts(volbench, str(target), "--size", "16m", "--no-purge")
    try:
        _wait_for_round(volbench, proc, 3)  # a cell runs, the next is held ahead
        swapped = volbench.home / "swap.tmp"
        swapped.symlink_to(device)
        os.replace(swapped, target)
    finally:
        done = finish(proc, 300)
    assert done.returncode != 0, done.stdout
    # the refusal at the gate; or, when the swap came while the held fio was still
    # setting up its file, fio's own failure on what it found there (no I/O either)
    said = done.stderr
    assert "no longer what the run started on" in said or "failed with error" in said, said
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("delay_s", [0.0, 0.05, 0.15, 0.3])
def test_a_file_swapped_as_its_round_starts_is_not_written(
    volbench: Volbench,
    loop_device: Callable[..., str],
    system_tool: Callable[[str], str],
    delay_s: float,
) -> None:
    """A file target replaced by a link to an ext4 device when a round's job file
    appears, then ``delay_s`` later (the window between the check and fio's open was
    0.1-0.4 s): fio opens the file the run checked and holds (/proc/PID/fd/N), never
    the device; the next round's check stops the run in one line. (Before, the round
    wrote 8 MiB to the device.)"""
    device, image, before = _protected_ext4(loop_device, system_tool)
    target = volbench.home / "scratch.img"
    proc = volbench.start(
        "run",
        "sweep",
        "--target",
        str(target),
        "--rw",
        "randwrite",
        "--iodepth",
        "1,2,4",
        "--runtime",
        "1s",
        "--ramp-time",
        "0",
        "--size",
        "16m",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    try:
        _wait_for_round(volbench, proc, 1)
        time.sleep(delay_s)
        swapped = volbench.home / "swap.tmp"
        swapped.symlink_to(device)
        os.replace(swapped, target)
    finally:
        done = finish(proc, 120)
    assert done.returncode != 0, done.stdout
    assert "no longer what the run started on" in done.stderr, done.stderr
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before
    (job,) = volbench.runs_dir.glob("*/round-001/job.fio")
    assert f"description=volbench target: {target}" in job.read_text()
