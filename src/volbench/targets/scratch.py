"""Scratch files: file targets that volbench creates, fills with real data and marks.

A scratch file is filled with pseudo-random data written chunk by chunk and
fsynced: never sparse and never only fallocated, because reading extents that
were never written does not touch the device. Every 4 KiB block starts with its
own offset and a per-file nonce, so no two blocks are equal (no dedup).

volbench marks its files so it never overwrites one it did not create: a sidecar
``.NAME.volbench.json`` beside the file and, where the filesystem supports it,
the extended attribute ``user.volbench`` on the file itself. Where xattrs work
the xattr is what proves ownership (see :func:`read_marker`); elsewhere the
sidecar does, when the inode number it recorded still matches.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import struct
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from volbench import __version__, output_file
from volbench.errors import TargetError
from volbench.model import TargetInfo
from volbench.targets.blockdev import BlockDevice, read_mounts
from volbench.targets.identity import identify
from volbench.units import format_bytes

MARKER_XATTR = "user.volbench"
CHUNK_BYTES = 4 * 1024 * 1024
STAMP_EVERY = 4096

Progress = Callable[[int, int], None]
_NO_XATTRS = {errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}


@dataclass(frozen=True)
class Marker:
    """What volbench records about a scratch file it created."""

    size_bytes: int
    created: str
    volbench_version: str
    inode: int
    complete: bool


def sidecar_path(path: Path) -> Path:
    """The marker file beside ``path``: ``.NAME.volbench.json``."""
    return path.with_name(f".{path.name}.volbench.json")


def _parse_marker(data: bytes | str) -> Marker | None:
    try:
        raw: Any = json.loads(data)
        return Marker(
            size_bytes=int(raw["size_bytes"]),
            created=str(raw["created"]),
            volbench_version=str(raw["volbench_version"]),
            inode=int(raw["inode"]),
            complete=bool(raw["complete"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


def read_marker(path: Path) -> Marker | None:
    """The marker of the file at ``path``, or None when volbench did not create it.

    Where the filesystem supports user xattrs the xattr is required: it lives on
    the file's inode and dies with it, whereas a sidecar can outlive its file
    (and a new file may even get the old inode number). Only on filesystems
    without xattrs does the sidecar (checked against the inode number) decide.
    """
    try:
        st = os.stat(path)
        return _parse_marker(os.getxattr(path, MARKER_XATTR))
    except OSError as exc:
        if exc.errno not in _NO_XATTRS:
            return None
    try:
        marker = _parse_marker(sidecar_path(path).read_text(encoding="utf-8"))
    except OSError:
        return None
    if marker is None or marker.inode != st.st_ino:
        return None
    return marker


def is_volbench_file(path: Path | str) -> bool:
    """True when ``path`` is a regular file that volbench created (it carries our marker)."""
    p = Path(path)
    return p.is_file() and read_marker(p) is not None


def _write_marker(path: Path, fd: int, marker: Marker) -> None:
    """Record ``marker`` in the sidecar (atomically) and, where supported, in the xattr."""
    data = json.dumps(asdict(marker), indent=1).encode()
    sidecar = sidecar_path(path)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    output_file.write_new(tmp, data, "the scratch file's side file")
    os.replace(tmp, sidecar)
    with contextlib.suppress(OSError):  # no user xattrs here: the sidecar suffices
        os.setxattr(fd, MARKER_XATTR, data)


def check_file_overwrite(path: str, force: bool = False) -> None:
    """Refuse to overwrite an existing file volbench did not create, unless ``force``."""
    if os.path.isfile(path) and not force and not is_volbench_file(path):
        raise TargetError(
            f"refusing to overwrite {path}: volbench did not create it "
            f"(use --force to overwrite it)"
        )


def file_info(path: Path | str) -> TargetInfo:
    """A :class:`TargetInfo` for a regular file, with the device and filesystem it is on
    and its identity (:mod:`volbench.targets.identity`)."""
    real = os.path.realpath(path)
    st = os.stat(real)
    num = (os.major(st.st_dev), os.minor(st.st_dev))
    candidates = [m for m in read_mounts() if m.dev == num]
    inside = [m for m in candidates if os.path.commonpath([m.mountpoint, real]) == m.mountpoint]
    mount = max(inside or candidates, key=lambda m: len(m.mountpoint), default=None)
    block = BlockDevice.from_devnum(num)
    device = block.path if block else None
    if device is None and mount is not None and mount.source.startswith("/dev/"):
        device = mount.source
    return TargetInfo(
        path=str(path),
        kind="file",
        capacity_bytes=st.st_size,
        logical_block_bytes=block.logical_block_bytes if block else None,
        physical_block_bytes=block.physical_block_bytes if block else None,
        rotational=block.rotational if block else None,
        model=block.model if block else None,
        scheduler=block.scheduler if block else None,
        write_cache=block.write_cache if block else None,
        device=device,
        filesystem=mount.fstype if mount else None,
        created_by_volbench=is_volbench_file(real),
        identity=identify(real),
    )


def _fill(fd: int, start: int, end: int, progress: Progress | None) -> None:
    """Write unique pseudo-random blocks from ``start`` to ``end`` in 4 MiB chunks."""
    buf = bytearray(os.urandom(CHUNK_BYTES))
    view = memoryview(buf)
    nonce = int.from_bytes(os.urandom(8), "little")
    offset = start
    while offset < end:
        length = min(CHUNK_BYTES, end - offset)
        for block in range(0, length, STAMP_EVERY):
            struct.pack_into("<QQ", buf, block, offset + block, nonce)
        written = os.pwrite(fd, view[:length], offset)
        offset += written
        if progress is not None:
            progress(offset, end)


def _check_dir(path: Path) -> None:
    parent = path.parent
    if not parent.is_dir():
        raise TargetError(f"cannot create {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TargetError(f"cannot create {path}: directory {parent} is not writable")


def prepare_file(
    path: Path,
    size_bytes: int,
    force: bool = False,
    progress: Progress | None = None,
) -> TargetInfo:
    """Create (or reuse, grow or recreate our own) a scratch file of ``size_bytes``.

    A complete volbench file of the same size is reused as it is; a larger
    request appends to it; a smaller one truncates it. Anything else is filled
    from the start. A file volbench did not create is refused unless ``force``.
    ``progress(done_bytes, total_bytes)`` is called after each chunk.
    """
    if size_bytes <= 0:
        raise TargetError(f"cannot create {path}: the size must be positive, not {size_bytes}")
    given = path
    path = Path(os.path.realpath(path))
    _check_dir(path)
    marker: Marker | None = None
    allocated = 0
    size_now = 0
    if os.path.lexists(path):
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise TargetError(f"cannot use {path} as a scratch file: it is not a regular file")
        check_file_overwrite(str(path), force)
        marker = read_marker(path)
        allocated, size_now = st.st_blocks * 512, st.st_size
    ours_complete = marker is not None and marker.complete and marker.size_bytes == size_now
    if ours_complete and size_now == size_bytes:
        return file_info(given)
    start = size_now if ours_complete and size_now < size_bytes else 0
    needed = max(0, size_bytes - allocated)
    vfs = os.statvfs(path.parent)
    free = vfs.f_bavail * vfs.f_frsize
    if needed > free:
        raise TargetError(
            f"not enough space in {path.parent}: {format_bytes(needed)} needed, "
            f"{format_bytes(free)} free"
        )
    verb = "write" if path.exists() else "create"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise TargetError(f"cannot {verb} {path}: {exc.strerror}") from exc
    try:
        inode = os.fstat(fd).st_ino
        created = marker.created if marker else time.strftime("%Y-%m-%dT%H:%M:%S%z")
        new = Marker(size_bytes, created, __version__, inode, complete=False)
        _write_marker(path, fd, new)
        if size_now > size_bytes:
            os.ftruncate(fd, size_bytes)
        if not (ours_complete and size_now > size_bytes):
            _fill(fd, start, size_bytes, progress)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        _write_marker(path, fd, Marker(size_bytes, created, __version__, inode, complete=True))
    except OSError as exc:
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return file_info(given)
