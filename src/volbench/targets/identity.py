"""A target by what it is, not by what it is called.

A path is only a name: a link can be re-pointed, a loop device attached to another
image, a file replaced by another under the same name, and fio opens the path again
every round. So a target is resolved once to its canonical absolute path (every
link resolved: the only path fio is given) and to what that path is: a block
device's ``MAJOR:MINOR`` with the kernel's ``diskseq`` (Linux 5.15+, ``Documentation/
ABI/testing/sysfs-block``: a number given to each new medium, counted up when a
loop device is attached again), or a file's filesystem number and inode. The
identity is stored with the run and compared before every round and on resume
(:func:`volbench.targets.safety.check_round`).

Device numbers and ``diskseq`` hold within one boot (``boot_id``, proc(5)); across
a restart a device is recognised by what names it for good (:attr:`source`): its
WWID or serial number, a loop device's backing file and offset, a dm or md UUID.
Everything here only reads.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from volbench.errors import TargetError
from volbench.model import TargetIdentity
from volbench.targets.blockdev import BlockDevice
from volbench.targets.kernel_file import kernel_value
from volbench.units import format_bytes

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _text(path: Path) -> str | None:
    return kernel_value(path) or None


def boot_id() -> str | None:
    """This boot's random id (proc(5)): device numbers are only compared within one."""
    return _text(BOOT_ID)


def device_source(device: BlockDevice) -> str | None:
    """What names ``device`` across restarts, or None (e.g. zram, a RAM disk)."""
    sysfs = device.sysfs
    if device.is_partition:
        disk = device_source(device.disk)
        start = _text(sysfs / "start")
        return None if disk is None else f"{disk}, partition from sector {start}"
    backing = _text(sysfs / "loop" / "backing_file")
    if backing:
        try:
            inode = f", inode {os.stat(backing).st_ino}"
        except OSError:
            inode = ""
        offset = _text(sysfs / "loop" / "offset") or "0"
        return f"loop over {backing}{inode}, offset {offset}"
    for name, where in (
        ("wwid", sysfs / "wwid"),
        ("wwid", sysfs / "device" / "wwid"),
        ("serial", sysfs / "device" / "serial"),
        ("dm uuid", sysfs / "dm" / "uuid"),
        ("md uuid", sysfs / "md" / "uuid"),
    ):
        value = _text(where)
        if value:
            return f"{name} {value}"
    return None


def identify(path: str) -> TargetIdentity:
    """The identity of the existing file or block device at ``path``; TargetError
    when it is gone or is something else."""
    canonical = os.path.realpath(os.path.abspath(path))
    try:
        st = os.stat(canonical)
    except OSError as exc:
        raise TargetError(f"cannot check {path}: {exc.strerror}") from exc
    boot = boot_id()
    if stat.S_ISBLK(st.st_mode):
        device = BlockDevice.from_path(canonical)
        seq = _text(device.disk.sysfs / "diskseq")
        return TargetIdentity(
            path=canonical,
            kind="block",
            number=f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}",
            capacity_bytes=device.capacity_bytes,
            diskseq=int(seq) if seq and seq.isdigit() else None,
            boot=boot,
            source=device_source(device),
        )
    if stat.S_ISREG(st.st_mode):
        return TargetIdentity(
            path=canonical,
            kind="file",
            number=f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}",
            capacity_bytes=st.st_size,
            inode=st.st_ino,
            boot=boot,
        )
    raise TargetError(f"{path} is neither a block device nor a regular file")


def describe(identity: TargetIdentity) -> str:
    """``identity`` in a few words, for a message that names two of them."""
    if identity.kind == "file":
        return f"file inode {identity.inode} on {identity.number}"
    seq = f", diskseq {identity.diskseq}" if identity.diskseq is not None else ""
    source = f", {identity.source}" if identity.source else ""
    size = format_bytes(identity.capacity_bytes)
    return f"block device {identity.number}{seq}, {size}{source}"


def same(then: TargetIdentity, now: TargetIdentity) -> bool:
    """Whether ``now`` is still the target ``then`` was. Within one boot: the same
    number, inode, diskseq and source; across a restart: the same inode (files) or
    the same lasting source and size (devices; one without a source is not
    recognised again)."""
    if (then.path, then.kind) != (now.path, now.kind):
        return False
    one_boot = then.boot is not None and then.boot == now.boot
    if then.kind == "file":
        return then.inode == now.inode and (not one_boot or then.number == now.number)
    if then.capacity_bytes != now.capacity_bytes or then.source != now.source:
        return False
    if not one_boot:
        return then.source is not None
    return then.number == now.number and then.diskseq == now.diskseq


def check_same(then: TargetIdentity) -> None:
    """Return when the target is still what ``then`` recorded, else a one-line
    TargetError naming both (nothing more may be written to it)."""
    try:
        now = identify(then.path)
    except TargetError as exc:
        raise TargetError(
            f"target {then.path} is gone since the run started ({exc}); nothing more is "
            "written (check the device, then start a new run)"
        ) from exc
    if not same(then, now):
        raise TargetError(
            f"target {then.path} is no longer what the run started on: it was "
            f"{describe(then)}, it is now {describe(now)}; nothing more is written to it "
            "(start a new run to measure what is there now)"
        )
