"""volbench.output_file: a file volbench writes is never a device, never reached
through a final link, never in /dev (no root needed: /dev/null is a device)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from volbench import output_file
from volbench.errors import UsageError


def test_a_new_file_is_written_and_an_old_one_replaced(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    output_file.write_bytes(path, b"first, longer", "the output file")
    output_file.write_bytes(path, b"second", "the output file")
    assert path.read_bytes() == b"second"


def test_a_final_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_bytes(b"data")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    with pytest.raises(UsageError, match=r"out.json is a symbolic link: give the file's own"):
        output_file.write_bytes(link, b"x", "the output file")
    assert target.read_bytes() == b"data"


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_is_refused(device: str) -> None:
    with pytest.raises(UsageError, match=rf"the output file {device} is a device: give a file"):
        output_file.write_bytes(device, b"x", "the output file")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is not a regular file"):
        output_file.write_bytes(fifo, b"x", "the output file")


def test_a_new_file_in_dev_is_refused() -> None:
    if not output_file.on_device_filesystem(Path("/dev")):
        pytest.skip("/dev is not a filesystem of devices here")  # never on Linux
    with pytest.raises(UsageError, match="is on the filesystem of devices"):
        output_file.check_file("/dev/volbench-out.json", "the output file")
    assert not os.path.exists("/dev/volbench-out.json")


def test_dev_shm_is_a_folder_like_any_other() -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.is_symlink():
        pytest.skip("no /dev/shm here")
    assert output_file.check_folder(shm / "volbench-x", "a folder") == shm / "volbench-x"


def test_a_side_file_is_made_anew_over_a_planted_link(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_bytes(b"data")
    planted = tmp_path / ".x.volbench.json.tmp"
    planted.symlink_to(target)
    output_file.write_new(planted, b"{}", "the side file")
    assert not planted.is_symlink() and planted.read_bytes() == b"{}"
    assert target.read_bytes() == b"data"


def test_a_store_may_be_a_link_to_a_file_but_not_to_a_device(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    real.write_bytes(b"")
    link = tmp_path / "store.db"
    link.symlink_to(real)
    assert output_file.check_resolved(link, "the result store") == link
    (tmp_path / "null.db").symlink_to("/dev/null")
    with pytest.raises(UsageError, match="the result store /dev/null is a device"):
        output_file.check_resolved(tmp_path / "null.db", "the result store")


def test_a_file_given_as_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(UsageError, match="is not a folder"):
        output_file.check_folder(tmp_path / "file", "the runs folder")


def test_a_fio_folder_keeps_no_planted_link(tmp_path: Path) -> None:
    """fio's logs follow links: a link planted in a round's folder (or as the folder)
    is removed before fio runs there, its target untouched."""
    target = tmp_path / "precious"
    target.write_bytes(b"data")
    folder = tmp_path / "round-002"
    folder.mkdir()
    (folder / "randread_iops.1.log").symlink_to(target)
    (folder / "keep.txt").write_bytes(b"mine")
    assert output_file.fio_folder(folder) == folder
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    linked = tmp_path / "round-003"
    linked.symlink_to(tmp_path / "elsewhere")
    output_file.fio_folder(linked)
    assert linked.is_dir() and not linked.is_symlink()
    assert target.read_bytes() == b"data"
