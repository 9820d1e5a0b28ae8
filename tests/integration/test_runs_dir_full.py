"""The runs folder (``--runs-dir``): a folder in a folder that does not exist is
refused, not made under ``/``; a runs folder on a full filesystem, where fio's logs
come out empty (fio says nothing and exits 0), gives a warning stored with the run.

The full filesystem is a tmpfs of 8 KiB this test mounts under its own temporary
folder and unmounts whatever happens; the target is a scratch file outside it.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import SHORT_RUN, Volbench, error_line, only_error_line

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
ONE_TEST = ("--rw", "randread", "--iodepth", "1", "--numjobs", "1", "--ramp-time", "0")


def test_a_runs_folder_in_a_missing_folder_is_refused(volbench: Volbench) -> None:
    runs_dir = volbench.home / "nonexistent" / "a" / "b"
    proc = volbench(
        "run",
        "quick",
        "--target",
        str(volbench.home / "scratch.img"),
        *SHORT_RUN,
        "--runs-dir",
        str(runs_dir),
    )
    assert only_error_line(proc, 2) == (
        f"volbench: error: --runs-dir {runs_dir}: the folder {runs_dir.parent} does not exist"
        " (create it first, or choose another --runs-dir)"
    )
    assert not (volbench.home / "nonexistent").exists()
    assert volbench.stored_runs() == []


@pytest.fixture
def full_folder(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 8 KiB (two pages: the job file and one log fit) at ``tmp_path/full``."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if mount is None or umount is None:
        pytest.skip("mount is not installed")
    folder = tmp_path / "full"
    folder.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run([umount, str(folder)], capture_output=True, check=False)


@needs_fio
def test_logs_fio_could_not_write_are_a_stored_warning(
    volbench: Volbench, full_folder: Path
) -> None:
    runs_dir = full_folder / "runs"
    proc = volbench(
        "run",
        "sweep",
        "--target",
        str(volbench.home / "scratch.img"),
        "--size",
        "16m",
        *ONE_TEST,
        "--runtime",
        "2s",
        "--runs-dir",
        str(runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    logs = sorted(runs_dir.glob("*/round-000/*_iops.*.log")) + sorted(
        runs_dir.glob("*/round-000/*_bw.*.log")
    )
    assert any(p.stat().st_size == 0 for p in logs) or len(logs) < 2  # the disk was full
    warning = "fio's per-second logs of round 0 are missing or empty ("
    assert f"warning: {warning}" in proc.stderr
    assert "is its filesystem full?" in proc.stderr
    stored = volbench.stored()
    assert stored["status"] == "completed"
    assert warning in stored["error"]


@needs_fio
def test_a_job_file_that_cannot_be_written_is_named(volbench: Volbench, full_folder: Path) -> None:
    """The runs folder's filesystem is full before the first job file: the one line
    names that file and how to choose another runs folder (ENOSPC from ``write``
    carries no file name of its own)."""
    runs_dir = full_folder / "runs"
    runs_dir.mkdir()
    filler = full_folder / "filler"
    with filler.open("wb") as f, contextlib.suppress(OSError):  # every page of the tmpfs
        f.write(b"\0" * 65536)
    proc = volbench(
        "run",
        "sweep",
        "--target",
        str(volbench.home / "scratch.img"),
        "--size",
        "16m",
        *ONE_TEST,
        "--runtime",
        "1s",
        "--runs-dir",
        str(runs_dir),
    )
    line = error_line(proc, 3)
    assert "No space left on device: " in line and "/round-000/job.fio" in line, line
    assert str(runs_dir) in line and "--runs-dir" in line
