"""Inspect a target (an existing file or block device) without writing to it."""

from __future__ import annotations

import os
import stat

from volbench.errors import TargetError
from volbench.model import TargetInfo
from volbench.targets.blockdev import BlockDevice
from volbench.targets.identity import identify
from volbench.targets.scratch import file_info
from volbench.units import format_bytes


def inspect(path: str) -> TargetInfo:
    """What volbench knows about ``path``: a regular file or a block device.

    Raises :class:`TargetError` when the path does not exist, cannot be read,
    or is something else (a directory, a character device ...).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError as exc:
        raise TargetError(
            f"target {path} does not exist (give an existing block device or file, "
            f"or a new file path for volbench to create)"
        ) from exc
    except PermissionError as exc:
        raise TargetError(f"cannot inspect target {path}: permission denied") from exc
    except OSError as exc:
        raise TargetError(f"cannot inspect target {path}: {exc.strerror}") from exc
    if not os.access(path, os.R_OK):
        raise TargetError(f"cannot read target {path}: permission denied (run as root?)")
    if stat.S_ISREG(st.st_mode):
        return file_info(path)
    if stat.S_ISBLK(st.st_mode):
        return block_info(path)
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(
            f"target {path} is a directory (give a file path inside it, "
            f"e.g. {os.path.join(path, 'volbench.dat')})"
        )
    raise TargetError(f"target {path} is neither a block device nor a regular file")


def block_info(path: str) -> TargetInfo:
    """A :class:`TargetInfo` for the block device at ``path``, from sysfs, with its
    identity (:mod:`volbench.targets.identity`)."""
    device = BlockDevice.from_path(path)
    return TargetInfo(
        path=path,
        kind="block",
        capacity_bytes=device.capacity_bytes,
        logical_block_bytes=device.logical_block_bytes,
        physical_block_bytes=device.physical_block_bytes,
        rotational=device.rotational,
        model=device.model,
        scheduler=device.scheduler,
        write_cache=device.write_cache,
        device=device.path,
        identity=identify(path),
    )


def require_capacity(info: TargetInfo, needed_bytes: int) -> None:
    """Raise :class:`TargetError` when ``info`` is smaller than ``needed_bytes``."""
    if info.capacity_bytes < needed_bytes:
        raise TargetError(
            f"target {info.path} is too small: {format_bytes(info.capacity_bytes)}, "
            f"the plan needs {format_bytes(needed_bytes)}"
        )
