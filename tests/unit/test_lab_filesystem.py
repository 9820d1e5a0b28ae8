"""``lab up --filesystem``: the filesystem made in the guest's own image file on this
machine (never in a device), with nothing left for the guest's kernel to write in the
background (inode tables and journal written now)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab.filesystem import make, mkfs_command

pytestmark = pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="no e2fsprogs")


def test_ext4_is_made_in_the_image_with_no_lazy_init(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    with image.open("wb") as out:
        out.truncate(64 << 20)
    make("ext4", image)
    found = subprocess.run(
        ["dumpe2fs", "-h", str(image)], capture_output=True, text=True, check=True
    ).stdout
    assert "Filesystem volume name:   volbench-lab" in found
    assert "Filesystem state:         clean" in found
    # every group's inode table zeroed here (mke2fs zeroes a file's anyway; asked
    # for, so a device-backed image gets the same): no ext4lazyinit in the guest
    groups = subprocess.run(
        ["dumpe2fs", str(image)], capture_output=True, text=True, check=True
    ).stdout
    assert "ITABLE_ZEROED" in groups and "ITABLE_ZEROED" in groups.split("Group 1:")[1]
    command = mkfs_command("ext4", image)
    assert command[command.index("-E") + 1] == "lazy_itable_init=0,lazy_journal_init=0"


def test_only_a_regular_file_is_formatted(tmp_path: Path) -> None:
    link = tmp_path / "link.img"
    link.symlink_to("/dev/null")
    with pytest.raises(UsageError, match="not a regular file"):
        make("ext4", link)
    with pytest.raises(UsageError, match="not a regular file"):
        make("ext4", tmp_path)
    with pytest.raises(UsageError, match="volbench makes ext4"):
        mkfs_command("xfs", tmp_path / "x")
