"""Files and folders volbench writes that are not a benchmark target: the store, exports,
reports, the published site, run folders, side files, the lab's folder.

None of them may ever be a device or land in ``/dev``: a store given ``/dev/loop0``
would overwrite the filesystem on it, ``-o /dev/sdb`` a disk's first blocks. So every
such file is opened here, and

- never through a final symbolic link (``O_NOFOLLOW``: a link planted where a side file
  goes cannot redirect the write to a device);
- only when it is, or is created as, a regular file (``fstat`` of the open file: a block
  or character device, a FIFO or a socket is refused before one byte is written);
- never on devtmpfs or whatever is mounted at ``/dev`` (found by the folder's device
  number in ``/proc/self/mountinfo``): a new file there is a stray node among the
  devices. ``/dev/shm``, a tmpfs of its own, is a folder like any other.

Each refusal is one line saying what to do (:class:`~volbench.errors.UsageError`).
Benchmark targets are checked by :mod:`volbench.targets.safety` instead: writing to
a device is their purpose, after their own checks.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from volbench.errors import UsageError
from volbench.targets.blockdev import MOUNTINFO, parse_mountinfo

DEVICE_FILESYSTEMS = frozenset({"devtmpfs"})
"""Filesystem types that hold device nodes (mountinfo's type field)."""


def _existing(folder: Path) -> Path:
    """``folder`` or its nearest ancestor that exists (where a new folder would go)."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def on_device_filesystem(path: Path) -> bool:
    """Whether ``path`` (which exists) is on a filesystem of device nodes: devtmpfs, or
    whatever is mounted at ``/dev`` (a container's tmpfs there), found by the device
    number in mountinfo (every mount of that filesystem, bind mounts too)."""
    device = os.stat(path).st_dev
    number = (os.major(device), os.minor(device))
    try:
        mounts = parse_mountinfo(MOUNTINFO.read_text(errors="replace"))
    except OSError:
        return Path(os.path.realpath(path)).is_relative_to("/dev")
    return any(
        m.dev == number and (m.fstype in DEVICE_FILESYSTEMS or m.mountpoint == "/dev")
        for m in mounts
    )


def check_folder(folder: str | Path, what: str) -> Path:
    """``folder`` (made or not yet), refused in one line when it is, or would be made,
    on a filesystem of devices, or names something other than a folder."""
    path = Path(folder).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} {path} is not a folder: give a folder (it is made if new)")
    place = _existing(path)
    if on_device_filesystem(place):
        raise UsageError(
            f"{what} {path} is on the filesystem of devices ({place}): give a folder"
            " on a disk, such as one under your home folder"
        )
    return path


def check_file(path: str | Path, what: str) -> Path:
    """``path`` of a file volbench will write, refused in one line when it is a symbolic
    link, a device or anything but a regular file, or its folder is on devtmpfs."""
    given = Path(path).expanduser().absolute()
    try:
        found = os.lstat(given)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise UsageError(f"cannot write {what} {given}: {exc.strerror}") from exc
    if found is not None:
        _refuse_kind(found.st_mode, given, what)
    check_folder(given.parent, f"the folder of {what}")
    return given


def check_resolved(path: str | Path, what: str) -> Path:
    """``path`` of a file another library opens and may reach through links (SQLite's
    store): where the links lead must be a regular file or nothing yet, in a folder
    not on devtmpfs; refused in one line otherwise."""
    given = Path(path).expanduser().absolute()
    real = Path(os.path.realpath(given))
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(real).st_mode
        if not stat.S_ISREG(mode):
            _refuse_kind(mode, given if real == given else real, what)
    check_folder(real.parent, f"the folder of {what}")
    return given


def _refuse_kind(mode: int, path: Path, what: str) -> None:
    if stat.S_ISLNK(mode):
        raise UsageError(
            f"{what} {path} is a symbolic link: give the file's own path (volbench writes"
            " no file through a link)"
        )
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        raise UsageError(
            f"{what} {path} is a device: give a file path (volbench writes results only"
            " to files; a device is a benchmark target, --target)"
        )
    if not stat.S_ISREG(mode):
        raise UsageError(f"{what} {path} is not a regular file: give a file path")


def open_new(path: str | Path, what: str, mode: int = 0o644, append: bool = False) -> BinaryIO:
    """``path`` opened for writing from its start (created with ``mode``, or emptied when
    it is a regular file already; at its end with ``append``), never through a final
    link and never a device: see the module's rules."""
    given = check_file(path, what)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_APPEND if append else 0
    try:
        fd = os.open(given, flags, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # made a link since check_file
            _refuse_kind(stat.S_IFLNK, given, what)
        if exc.errno == errno.ENOENT and not given.parent.is_dir():
            raise UsageError(
                f"cannot write {what} {given}: its folder {given.parent} does not exist"
                " (create it first)"
            ) from None
        raise UsageError(f"cannot write {what} {given}: {exc.strerror}") from exc
    try:
        _refuse_kind(os.fstat(fd).st_mode, given, what)  # swapped since check_file
        os.set_blocking(fd, True)
        if not append:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab" if append else "wb")


def fio_folder(folder: Path) -> Path:
    """A folder fio writes its job's files into (a round's: job file, per-second logs,
    output), made if new. fio follows links when it creates its logs, so a link put
    where the folder or one of its files goes is removed first, never followed: a log
    planted as a link to a device would otherwise receive fio's log text."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(folder).st_mode):
            folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(folder):
        if entry.is_symlink():
            os.unlink(entry.path)
    return folder


def write_bytes(path: str | Path, data: bytes, what: str) -> None:
    """Write ``data`` to the file ``path`` by :func:`open_new`'s rules."""
    with open_new(path, what) as handle:
        handle.write(data)


def write_new(path: str | Path, data: bytes, what: str) -> None:
    """Create ``path`` anew with ``data``: a side file's temporary copy, say. Whatever
    is at ``path`` (a stale copy, or a link planted there) is removed first, never
    followed; then the file is created exclusively (``O_EXCL``)."""
    given = Path(path)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(given).st_mode):
            raise UsageError(f"{what} {given} is a folder: remove it or give another path")
        given.unlink()
    check_folder(given.parent, f"the folder of {what}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(given, flags, 0o644)
    except OSError as exc:
        raise UsageError(f"cannot write {what} {given}: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
