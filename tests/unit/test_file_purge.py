"""The purge of a scratch file (PTS on a file target): the blocks are freed and
written again, and the target stays the one the run started on (same inode), so the
round guard lets the run go on after it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from volbench.targets.identity import identify
from volbench.targets.purge import purge
from volbench.targets.safety import check_round
from volbench.targets.scratch import is_volbench_file, prepare_file

MiB = 1024 * 1024


def test_a_purged_file_is_the_same_target_refilled(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"
    info = prepare_file(path, 4 * MiB)
    info = dataclasses.replace(info, identity=identify(str(path)))
    inode = os.stat(path).st_ino
    with open(path, "r+b") as handle:
        handle.write(b"written by a round")

    assert purge(info) == "file emptied and refilled"

    after = os.stat(path)
    assert (after.st_ino, after.st_size) == (inode, 4 * MiB)
    assert after.st_blocks * 512 >= 4 * MiB
    with open(path, "rb") as handle:
        assert handle.read(18) != b"written by a round"
    assert is_volbench_file(path)
    check_round(info, writes=True)
