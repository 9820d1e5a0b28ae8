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

Stacked devices are checked downward too, to the bottom of the stack (a loop device's
backing device, a dm or md device's slaves): writing the target writes them. A loop
device does not claim what it is backed by, so the kernel lets another loop device,
or a mount through one, use the same bytes. Rule 2 holds for every device below and
for every other loop device over the same backing file or device (another user of
those bytes: mounted or not, it is refused). Rule 3 holds for a loop device at an
offset (``losetup -o``): its backing's own signature (a filesystem that spans the
backing) is not at the loop device's start, so it is checked on the backing, and
``--destroy-data`` must name the backing; so does it for a dm or md device's slaves,
but for what a slave carries as the stack's member (:data:`STACKING_KINDS`).

A regular file volbench did not create is refused unless ``force``; a missing
file is fine (volbench will create it), except under ``/dev`` or on a devtmpfs.
Reads never need this check. Paths are resolved first (relative parts, ``..``,
``//`` and every link): what is checked is what fio is given.

A target on another host cannot be looked at from here: :func:`check_remote_write`
holds the rules for those (a device named by ``--destroy-data``, a file with
``--force``), asked by every kind of place (:mod:`volbench.places`) for its writes.

:func:`check_round` runs before every round of a run and when it is resumed: the
target must still be what the run started on
(:func:`volbench.targets.identity.check_same`), and a device it writes must still
be out of the running system's use (rules 1 and 2: things another program can
change while the run goes on). Rule 3 is not checked again: the run's own writes
may leave any bytes on the device.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from volbench.errors import TargetError, UsageError
from volbench.model import TargetInfo
from volbench.output_file import on_device_filesystem
from volbench.targets.blockdev import (
    SYS_CLASS_BLOCK,
    BlockDevice,
    Mount,
    read_mounts,
    root_devices,
)
from volbench.targets.hold import held_here
from volbench.targets.identity import check_same
from volbench.targets.scratch import check_file_overwrite
from volbench.targets.signature import describe, describe_contents, probe


def canonical(path: str) -> str:
    """``path`` absolute, with ``.``, ``..``, ``//`` and every link resolved."""
    return os.path.realpath(os.path.abspath(path))


def check_write_allowed(path: str, destroy_data: str | None = None, force: bool = False) -> None:
    """Return when writing ``path`` is allowed, else raise a one-line :class:`TargetError`."""
    given, path = path, canonical(path)
    if not os.path.lexists(path):
        if path.startswith("/dev/") or _on_devtmpfs(os.path.dirname(path)):
            shown = given if given == path else f"{given} ({path})"
            raise TargetError(
                f"refusing to write {shown}: it does not exist (check the device name)"
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


def check_remote_write(label: str, path: str, named: bool, force: bool) -> None:
    """Return when writing ``path`` on another host (the place ``label``) is allowed,
    else raise a one-line :class:`UsageError`. volbench cannot look at another host's
    devices and files: a device (under ``/dev/``) is written only when ``named`` (the
    user's ``--destroy-data`` names the place, or its kind vouches for it: a lab
    guest's own disk, an image volbench made), a file only with ``force`` (fio
    creates or overwrites it there). Every kind of place checks its writes here
    (:meth:`volbench.places.kind.PlaceKind.check_write`)."""
    if path.startswith("/dev/") and not named:
        raise UsageError(
            f"refusing to write {label}: volbench cannot check a device on another "
            f"host for data (use --destroy-data={label} to overwrite it)"
        )
    if not path.startswith("/dev/") and not force:
        raise UsageError(
            f"refusing to write {label}: volbench cannot check a file on another "
            "host (use --force to let fio create or overwrite it)"
        )


def _on_devtmpfs(folder: str) -> bool:
    """Whether ``folder`` is on the filesystem of devices (where device nodes live, not
    files): :func:`volbench.output_file.on_device_filesystem`."""
    try:
        return on_device_filesystem(Path(folder))
    except OSError:
        return False


def check_round(info: TargetInfo, writes: bool) -> None:
    """Before a round (or a resume): ``info``'s target is still what it was when the
    run started, and a device the round writes is still not used by the running
    system (neither holds ``/`` nor is mounted, swap, held or claimed, itself or
    anything stacked on it). A one-line TargetError otherwise. Targets without a
    recorded identity (on another host, or stored by an older volbench) pass."""
    if info.identity is None:
        return
    check_same(info.identity)
    if writes and info.identity.kind == "block":
        path = info.identity.path
        device = BlockDevice.from_path(path)
        _check_in_use(path, device)


def _check_in_use(path: str, device: BlockDevice) -> None:
    """Rules 1 and 2 of the module docstring, on the device and downward (the mount
    table read once for them all)."""
    stack = device.stack()
    mounts = read_mounts()
    if stack & root_devices(mounts):
        raise TargetError(
            f"refusing to write {path}: it holds the root filesystem / "
            f"(volbench never writes to it)"
        )
    in_use = _in_use(path, device, mounts=mounts)
    if in_use:
        raise TargetError(f"refusing to write {path}: {in_use}")
    ours = stack | {BlockDevice(name).disk.name for name in stack}  # a partition's disk
    for below in sorted(stack - {device.name}):
        lower = BlockDevice(below)
        used = _in_use(lower.path, lower, ours, me=lower.path, mounts=mounts)
        if used:
            raise TargetError(
                f"refusing to write {path}: it is stacked on {lower.path}, and {used}"
            )
    for loop in (BlockDevice(name) for name in sorted(stack)):
        twin = _same_backing_file(loop, ours)
        if twin is not None:
            file, other = twin
            mounted = [m.mountpoint for _, m in other.mounts()]
            where = f", mounted on {mounted[0]}" if mounted else ""
            raise TargetError(
                f"refusing to write {path}: its backing file {file} is also behind"
                f" {other.path}{where} (another user of the same bytes: unmount it and"
                f" losetup -d {other.path} first)"
            )


def _same_backing_file(loop: BlockDevice, ours: set[str]) -> tuple[str, BlockDevice] | None:
    """(the file, another loop device over it) when ``loop`` is backed by a regular
    file that a loop device outside ``ours`` is backed by too (the same inode)."""
    file = loop.backing_file
    if not file:
        return None
    try:
        mine = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(mine.st_mode):
        return None
    for name in sorted(os.listdir(SYS_CLASS_BLOCK)):
        if not name.startswith("loop") or name in ours or BlockDevice(name).is_partition:
            continue
        other = BlockDevice(name).backing_file
        try:
            theirs = os.stat(other) if other else None
        except OSError:
            continue
        if theirs is not None and (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino):
            return file, BlockDevice(name)
    return None


def _check_block_device(path: str, destroy_data: str | None) -> None:
    device = BlockDevice.from_path(path)
    _check_in_use(path, device)
    if device.read_only:
        raise TargetError(f"cannot write {path}: the device is read-only")
    backings = _check_offset_backings(path, device, destroy_data)
    named = destroy_data is not None and canonical(destroy_data) in {path, *backings}
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


STACKING_KINDS = frozenset({"LVM2_member", "linux_raid_member", "crypto_LUKS"})
"""Signatures a dm or md device's slave carries because it is that device's member (an
LVM physical volume, an md RAID member, a LUKS container): the stack itself, not data
beside it."""


def _check_offset_backings(path: str, device: BlockDevice, destroy_data: str | None) -> set[str]:
    """Rule 3 downward: a device of the stack whose own start shows no signature of what
    lies below it. A loop device at an offset into its backing: the backing's signature
    (at the backing's start). A dm or md device (a linear map at an offset, a RAID's
    data area): each slave's signature, but for its membership of the stack
    (:data:`STACKING_KINDS`). The lower devices' real paths: ``--destroy-data`` may
    name one of them."""
    found: set[str] = set()
    for lower in (BlockDevice(name) for name in sorted(device.stack())):
        below = _lower_contents(lower)
        for where, contents, how in below:
            found.add(canonical(where))
            if destroy_data is not None and canonical(destroy_data) == canonical(where):
                continue
            if contents:
                via = "it is" if lower.name == device.name else f"{lower.path}, below it, is"
                raise TargetError(
                    f"refusing to write {path}: {via} {how} {where}, which holds {contents}"
                    f" (use --destroy-data={where} to overwrite it)"
                )
    return found


def _lower_contents(device: BlockDevice) -> list[tuple[str, str | None, str]]:
    """What lies directly below ``device`` and its start does not show: (the lower
    device's or file's path, what it holds, how ``device`` lies on it)."""
    backing, offset = device.backing_file, device.loop_offset
    if backing and offset:
        into = f"a loop device at offset {offset:,} bytes into"
        return [(backing, describe_contents(backing), into)]
    if not device.slaves:
        return []
    own = {sig.family for sig in probe(device.path)}  # a RAID1 member's filesystem: its own
    found = []
    for slave in device.slaves:
        kept = [
            sig
            for sig in probe(slave.path)
            if sig.kind not in STACKING_KINDS and sig.family not in own
        ]
        found.append((slave.path, describe(kept), "a device-mapper or md device over"))
    return found


def _whose(device: BlockDevice, part: BlockDevice, me: str) -> str:
    """``me`` (the device, as the message names it) or its partition ``part``."""
    if part == device:
        return me
    return f"{'its' if me == 'it' else me + chr(39) + 's'} partition {part.path}"


def _in_use(
    path: str,
    device: BlockDevice,
    ours: frozenset[str] | set[str] = frozenset(),
    me: str = "it",
    mounts: list[Mount] | None = None,
) -> str | None:
    """Why the running system uses ``device`` (a phrase naming it ``me``), or None when
    nothing does. ``ours``: the target's own stack when ``device`` lies under it (its
    users there are the target's way down, and the kernel's exclusive claim is theirs
    too). ``mounts``: the mount table read already (None: read it)."""
    table = read_mounts() if mounts is None else mounts
    own = device.mounts(table)
    if own:
        part = own[0][0]
        places = ", ".join(dict.fromkeys(m.mountpoint for d, m in own if d == part))
        return f"{_whose(device, part, me)} is mounted on {places} (unmount it first)"
    swaps = device.swaps()
    if swaps:
        return f"{_whose(device, swaps[0], me)} is used as swap (swapoff {swaps[0].path} first)"
    users = [(below, above) for below, above in device.users() if above.name not in ours]
    for below, above in users:  # a mount anywhere above says the most
        mounted = above.mounts(table)
        if mounted:
            return (
                f"{mounted[0][0].path}, stacked on {_whose(device, below, me)}, is mounted on "
                f"{mounted[0][1].mountpoint} (unmount it and release {above.path} first)"
            )
    if users:
        below = users[0][0]
        names = ", ".join(a.name for b, a in users if b == below)
        return (
            f"{_whose(device, below, me)} is held by {names} (a loop device backed by it, LVM, "
            f"md or device-mapper; release it first, e.g. losetup -d, vgchange -an, "
            f"mdadm --stop or dmsetup remove)"
        )
    if ours or held_here("{}:{}".format(*device.devnum)):  # the claim is this run's own
        return None
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
