"""The one gate every write goes through: refuse anything that could destroy data.

Rules (DESIGN.md, "Safety"), checked in this order for a block device:

1. the device holding ``/`` (its device, what that is stacked on, their disks)
   is never written, whatever the options;
2. a device in use by the running system -- mounted (itself or a partition),
   used as swap, held by LVM/md/dm, or claimed exclusively by the kernel -- is
   refused until it is released: ``--destroy-data`` does not override this,
   because writing under a live filesystem or array corrupts more than the
   device's own data;
3. a device that carries a filesystem, partition table, swap, LVM, RAID or LUKS
   signature (or has kernel-known partitions) is refused unless
   ``--destroy-data`` names exactly this device (same real path).

A regular file volbench did not create is refused unless ``force``; a missing
file is fine (volbench will create it). Reads never need this check.
"""

from __future__ import annotations

import errno
import os
import stat

from volbench.errors import TargetError
from volbench.targets.blockdev import BlockDevice, root_devices
from volbench.targets.scratch import check_file_overwrite
from volbench.targets.signature import describe_contents


def check_write_allowed(path: str, destroy_data: str | None = None, force: bool = False) -> None:
    """Return when writing ``path`` is allowed, else raise a one-line :class:`TargetError`."""
    if not os.path.lexists(path):
        if os.path.abspath(path).startswith("/dev/"):
            raise TargetError(
                f"refusing to write {path}: it does not exist (check the device name)"
            )
        return
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TargetError(f"cannot check {path}: {exc.strerror}") from exc
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise TargetError(
            f"cannot write {path}: it is a directory (give a file path inside it, "
            f"e.g. {os.path.join(path, 'volbench.dat')})"
        )
    if stat.S_ISREG(mode):
        check_file_overwrite(path, force)
        return
    if stat.S_ISCHR(mode):
        raise TargetError(
            f"refusing to write {path}: it is a character device "
            f"(volbench writes block devices and regular files)"
        )
    if not stat.S_ISBLK(mode):
        raise TargetError(
            f"refusing to write {path}: it is neither a block device nor a regular file"
        )
    _check_block_device(path, destroy_data)


def _check_block_device(path: str, destroy_data: str | None) -> None:
    device = BlockDevice.from_path(path)
    if device.stack() & root_devices():
        raise TargetError(
            f"refusing to write {path}: it holds the root filesystem / "
            f"(volbench never writes to it)"
        )
    in_use = _in_use(path, device)
    if in_use:
        raise TargetError(f"refusing to write {path}: {in_use}")
    if device.read_only:
        raise TargetError(f"cannot write {path}: the device is read-only")
    real = os.path.realpath(path)
    named = destroy_data is not None and os.path.realpath(destroy_data) == real
    if named:
        return
    contents = _contents(path, device)
    if destroy_data is not None:
        found = f"it holds {contents}; " if contents else ""
        raise TargetError(
            f"refusing to write {path}: {found}--destroy-data={destroy_data} names another "
            f"device (use --destroy-data={path} to overwrite it)"
        )
    if contents:
        raise TargetError(
            f"refusing to write {path}: it holds {contents} "
            f"(use --destroy-data={path} to overwrite it)"
        )


def _whose(device: BlockDevice, part: BlockDevice) -> str:
    return "it" if part == device else f"its partition {part.path}"


def _in_use(path: str, device: BlockDevice) -> str | None:
    """Why the running system uses ``device`` (a phrase), or None when nothing does."""
    mounts = device.mounts()
    if mounts:
        part = mounts[0][0]
        places = ", ".join(dict.fromkeys(m.mountpoint for d, m in mounts if d == part))
        return f"{_whose(device, part)} is mounted on {places} (unmount it first)"
    swaps = device.swaps()
    if swaps:
        return f"{_whose(device, swaps[0])} is used as swap (swapoff {swaps[0].path} first)"
    holders = device.all_holders()
    if holders:
        part = holders[0][0]
        names = ", ".join(h for d, h in holders if d == part)
        return (
            f"{_whose(device, part)} is held by {names} (LVM, md or device-mapper; "
            f"release it first, e.g. vgchange -an, mdadm --stop or dmsetup remove)"
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return "it is in use (claimed exclusively by the kernel or another program)"
        raise TargetError(f"cannot open {path}: {exc.strerror}") from exc
    os.close(fd)
    return None


def _contents(path: str, device: BlockDevice) -> str | None:
    """What the device holds: its signatures, else its kernel-known partitions."""
    found = describe_contents(path)
    parts = ", ".join(p.name for p in device.partitions)
    if found and parts:
        return f"{found} with partitions {parts}"
    if parts:
        return f"partitions {parts}"
    return found
