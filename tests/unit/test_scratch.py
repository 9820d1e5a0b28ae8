"""Scratch files: real data, markers, reuse, and the file rules of the safety gate."""

from __future__ import annotations

import errno
import json
import os
import types
from pathlib import Path

import pytest

from volbench.errors import TargetError
from volbench.targets import scratch
from volbench.targets.safety import check_write_allowed
from volbench.targets.scratch import (
    MARKER_XATTR,
    is_volbench_file,
    prepare_file,
    read_marker,
    sidecar_path,
)
from volbench.targets.target import inspect
from volbench.units import GiB, MiB

SIZE = 6 * MiB + 4096  # not a whole number of chunks


def _has_xattr(path: Path) -> bool:
    try:
        os.getxattr(path, MARKER_XATTR)
    except OSError:
        return False
    return True


def test_prepare_creates_a_real_marked_file(tmp_path: Path) -> None:
    path = tmp_path / "scratch.dat"
    info = prepare_file(path, SIZE)
    st = path.stat()
    assert st.st_size == SIZE
    assert st.st_blocks * 512 >= SIZE, "the file must not be sparse"
    data = path.read_bytes()
    blocks = [data[i : i + 4096] for i in range(0, SIZE, 4096)]
    assert all(any(b) for b in blocks), "no block may be all zeros"
    assert len(set(blocks)) == len(blocks), "every 4 KiB block is unique"
    assert info.kind == "file"
    assert info.capacity_bytes == SIZE
    assert info.created_by_volbench
    assert info.filesystem
    assert is_volbench_file(path)
    marker = json.loads(sidecar_path(path).read_text())
    assert marker["size_bytes"] == SIZE
    assert marker["complete"] is True
    assert marker["volbench_version"]
    assert marker["created"]
    assert sidecar_path(path).name == ".scratch.dat.volbench.json"


def test_progress_reports_every_chunk_up_to_the_size(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    prepare_file(tmp_path / "f", SIZE, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) == 2
    assert calls[-1] == (SIZE, SIZE)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_same_size_is_reused_without_rewriting(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, SIZE)
    before = path.read_bytes(), path.stat().st_mtime_ns
    calls: list[int] = []
    info = prepare_file(path, SIZE, progress=lambda done, total: calls.append(done))
    assert calls == []
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert info.created_by_volbench


def test_own_file_grows_by_appending(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, SIZE)
    first = path.read_bytes()
    calls: list[int] = []
    prepare_file(path, 2 * SIZE, progress=lambda done, total: calls.append(done))
    data = path.read_bytes()
    assert len(data) == 2 * SIZE
    assert data[:SIZE] == first
    assert calls[0] > SIZE
    assert read_marker(path) is not None
    assert read_marker(path).size_bytes == 2 * SIZE  # type: ignore[union-attr]


def test_own_file_shrinks(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, SIZE)
    prepare_file(path, MiB)
    assert path.stat().st_size == MiB
    assert read_marker(path).size_bytes == MiB  # type: ignore[union-attr]


def test_incomplete_own_file_is_filled_again(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, SIZE)
    marker = json.loads(sidecar_path(path).read_text())
    marker["complete"] = False
    sidecar_path(path).write_text(json.dumps(marker))
    if _has_xattr(path):
        os.setxattr(path, MARKER_XATTR, json.dumps(marker).encode())
    calls: list[int] = []
    prepare_file(path, SIZE, progress=lambda done, total: calls.append(done))
    assert calls[0] <= scratch.CHUNK_BYTES
    assert read_marker(path).complete  # type: ignore[union-attr]


def test_foreign_file_is_refused_without_force(tmp_path: Path) -> None:
    path = tmp_path / "precious.db"
    path.write_bytes(b"my data")
    with pytest.raises(TargetError) as excinfo:
        prepare_file(path, SIZE)
    assert str(excinfo.value) == (
        f"refusing to overwrite {path}: volbench did not create it (use --force to overwrite it)"
    )
    assert path.read_bytes() == b"my data"
    assert not sidecar_path(path).exists()


def test_force_takes_over_a_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "old.img"
    path.write_bytes(b"x" * (2 * SIZE))
    info = prepare_file(path, SIZE, force=True)
    assert path.stat().st_size == SIZE
    assert info.created_by_volbench


def test_a_file_put_in_place_of_ours_is_not_ours(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, SIZE)
    path.unlink()
    path.write_bytes(b"somebody else's")  # new inode, no xattr; the sidecar is stale
    assert not is_volbench_file(path)
    with pytest.raises(TargetError, match="volbench did not create it"):
        check_write_allowed(str(path))


def test_where_xattrs_work_the_xattr_decides(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, MiB)
    if not _has_xattr(path):
        pytest.skip("this filesystem has no user xattrs")
    sidecar_path(path).unlink()
    assert is_volbench_file(path), "the xattr alone suffices"
    prepare_file(path, 2 * MiB)  # writes the sidecar again
    os.removexattr(path, MARKER_XATTR)
    assert not is_volbench_file(path), "a sidecar alone is not enough where xattrs work"


def test_without_xattrs_the_sidecar_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_xattrs(*args: object) -> bytes:
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(os, "getxattr", no_xattrs)
    monkeypatch.setattr(os, "setxattr", no_xattrs)
    path = tmp_path / "f"
    prepare_file(path, MiB)
    assert is_volbench_file(path)
    inode = path.stat().st_ino
    marker = json.loads(sidecar_path(path).read_text())
    marker["inode"] = inode + 1
    sidecar_path(path).write_text(json.dumps(marker))
    assert not is_volbench_file(path), "the sidecar must name this file's inode"
    sidecar_path(path).unlink()
    assert not is_volbench_file(path)


def test_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "f"
    with pytest.raises(TargetError) as excinfo:
        prepare_file(path, MiB)
    assert str(excinfo.value) == (f"cannot create {path}: directory {path.parent} does not exist")


def test_unwritable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    with pytest.raises(TargetError, match=r"directory .* is not writable$"):
        prepare_file(tmp_path / "f", MiB)


def test_not_enough_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(f_bavail=200 * MiB // 4096, f_frsize=4096)
    monkeypatch.setattr(os, "statvfs", lambda p: fake)
    with pytest.raises(TargetError) as excinfo:
        prepare_file(tmp_path / "f", GiB)
    assert str(excinfo.value) == f"not enough space in {tmp_path}: 1.0 GiB needed, 200 MiB free"
    assert not (tmp_path / "f").exists()


def test_a_directory_is_not_a_scratch_file(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(TargetError, match="not a regular file"):
        prepare_file(tmp_path / "d", MiB)


def test_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="positive"):
        prepare_file(tmp_path / "f", 0)


# --- the file rules of check_write_allowed, and inspect on files ----------------


def test_write_check_for_files(tmp_path: Path) -> None:
    check_write_allowed(str(tmp_path / "new.dat"))  # missing: volbench will create it
    foreign = tmp_path / "foreign"
    foreign.write_text("x")
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(str(foreign))
    assert str(excinfo.value) == (
        f"refusing to overwrite {foreign}: volbench did not create it (use --force to overwrite it)"
    )
    check_write_allowed(str(foreign), force=True)
    ours = tmp_path / "ours"
    prepare_file(ours, MiB)
    check_write_allowed(str(ours))
    link = tmp_path / "link"
    link.symlink_to(foreign)
    with pytest.raises(TargetError, match="volbench did not create it"):
        check_write_allowed(str(link))


def test_write_check_rejects_directories_and_character_devices(tmp_path: Path) -> None:
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(str(tmp_path))
    assert str(excinfo.value) == (
        f"cannot write {tmp_path}: it is a directory "
        f"(give a file path inside it, e.g. {tmp_path}/volbench.dat)"
    )
    with pytest.raises(TargetError, match="it is a character device"):
        check_write_allowed("/dev/null", destroy_data="/dev/null", force=True)


def test_write_check_refuses_missing_device_nodes() -> None:
    with pytest.raises(TargetError, match="does not exist"):
        check_write_allowed("/dev/volbench-no-such-device")


def test_inspect_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    prepare_file(path, MiB)
    info = inspect(str(path))
    assert (info.path, info.kind, info.capacity_bytes) == (str(path), "file", MiB)
    assert info.created_by_volbench
    assert info.filesystem
    other = tmp_path / "other"
    other.write_bytes(b"abc")
    assert not inspect(str(other)).created_by_volbench


def test_inspect_errors(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"^target .*/missing does not exist"):
        inspect(str(tmp_path / "missing"))
    with pytest.raises(TargetError, match="is a directory"):
        inspect(str(tmp_path))
    with pytest.raises(TargetError, match="neither a block device nor a regular file"):
        inspect("/dev/null")
