"""Block devices as the kernel describes them in sysfs, plus who uses them.

A :class:`BlockDevice` is named by its sysfs name (``loop3``, ``nvme0n1p1``,
``dm-0``). Queue properties (block sizes, scheduler, write cache, rotational)
live on the whole disk, so a partition reads them from its parent. Users of a
device are found in ``/proc/self/mountinfo`` (matched by major:minor, so
``/dev/mapper`` names, ``/dev/root`` and bind mounts are caught), ``/proc/swaps``
and the sysfs ``holders`` directories (LVM, md, dm, bcache ...).

Everything here only reads.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from volbench.errors import TargetError
from volbench.targets.kernel_file import kernel_value

SYS_CLASS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")
MOUNTINFO = Path("/proc/self/mountinfo")
SWAPS = Path("/proc/swaps")

DevNum = tuple[int, int]


def unescape(field: str) -> str:
    r"""Undo the kernel's octal escapes in mountinfo and swaps (``\040`` = space)."""
    if "\\" not in field:
        return field
    out: list[str] = []
    i = 0
    while i < len(field):
        chunk = field[i + 1 : i + 4]
        if field[i] == "\\" and len(chunk) == 3 and all(c in "01234567" for c in chunk):
            out.append(chr(int(chunk, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Mount:
    """One line of mountinfo: device number, where it is mounted, what, from where."""

    dev: DevNum
    root: str
    mountpoint: str
    fstype: str
    source: str


def parse_mountinfo(text: str) -> list[Mount]:
    """Parse ``/proc/PID/mountinfo`` text (see proc(5)); malformed lines are skipped."""
    mounts: list[Mount] = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 7:
            continue
        sep = fields.index("-")
        if len(fields) < sep + 3:
            continue
        major, _, minor = fields[2].partition(":")
        if not (major.isdigit() and minor.isdigit()):
            continue
        mounts.append(
            Mount(
                dev=(int(major), int(minor)),
                root=unescape(fields[3]),
                mountpoint=unescape(fields[4]),
                fstype=fields[sep + 1],
                source=unescape(fields[sep + 2]),
            )
        )
    return mounts


def read_mounts() -> list[Mount]:
    """The mounts of this process's mount namespace."""
    return parse_mountinfo(kernel_value(MOUNTINFO) or "")


def parse_swaps(text: str) -> list[str]:
    """The file names in ``/proc/swaps`` text (devices or swap files)."""
    lines = text.splitlines()[1:]  # the first line is a header
    return [unescape(line.split()[0]) for line in lines if line.split()]


def read_swaps() -> list[str]:
    """Active swap areas, as listed in /proc/swaps."""
    return parse_swaps(kernel_value(SWAPS) or "")


def path_devnum(path: str) -> DevNum | None:
    """major:minor of the block device node at ``path``, or None if it is not one."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return (os.major(st.st_rdev), os.minor(st.st_rdev))


def mount_devnum(mount: Mount) -> set[DevNum]:
    """Device numbers a mount stands for: its own and its source node's (btrfs, /dev/root)."""
    nums = {mount.dev}
    if mount.source.startswith("/"):
        source = path_devnum(mount.source)
        if source is not None:
            nums.add(source)
    return nums


@dataclass(frozen=True)
class BlockDevice:
    """A block device known to sysfs, by its sysfs name."""

    name: str

    @classmethod
    def from_path(cls, path: str) -> BlockDevice:
        """The block device whose node is ``path`` (symlinks such as /dev/mapper resolved)."""
        num = path_devnum(path)
        if num is None:
            raise TargetError(f"{path} is not a block device")
        device = cls.from_devnum(num)
        if device is None:
            raise TargetError(f"{path} is a block device unknown to sysfs ({num[0]}:{num[1]})")
        return device

    @classmethod
    def from_devnum(cls, num: DevNum) -> BlockDevice | None:
        """The block device with major:minor ``num``, or None (e.g. tmpfs's 0:xx)."""
        link = f"{SYS_DEV_BLOCK}/{num[0]}:{num[1]}"
        try:  # a link to the device's own sysfs folder, named after it (sysfs-dev ABI)
            return cls(os.path.basename(os.readlink(link)))
        except OSError:
            return None

    @property
    def sysfs(self) -> Path:
        """This device's sysfs directory."""
        return SYS_CLASS_BLOCK / self.name

    def _sys(self, *parts: str) -> str:
        """A file of this device's sysfs directory, as a string: a safety check before
        each test reads some 50 of them, and ``Path`` joins cost as much as the reads."""
        return "/".join((str(SYS_CLASS_BLOCK), self.name, *parts))

    @property
    def path(self) -> str:
        """The conventional device node, ``/dev/NAME``."""
        return f"/dev/{self.name}"

    @cached_property
    def devnum(self) -> DevNum:
        """major:minor from sysfs ``dev``."""
        major, _, minor = (kernel_value(self._sys("dev")) or "0:0").partition(":")
        return (int(major), int(minor))

    @property
    def is_partition(self) -> bool:
        return os.path.exists(f"{SYS_CLASS_BLOCK}/{self.name}/partition")

    @property
    def disk(self) -> BlockDevice:
        """The whole disk: the parent of a partition, else the device itself."""
        if self.is_partition:
            return BlockDevice(os.path.basename(os.path.dirname(os.path.realpath(self.sysfs))))
        return self

    @property
    def partitions(self) -> tuple[BlockDevice, ...]:
        """Partitions of this disk as the kernel knows them (none for a partition)."""
        if self.is_partition:
            return ()
        try:
            with os.scandir(self._sys()) as entries:
                # a partition's folder is named after its disk (sda1, nvme0n1p1: the
                # kernel's block/partitions/core.c); an attribute file holds none
                names = [
                    e.name
                    for e in entries
                    if e.name.startswith(self.name) and not e.is_file(follow_symlinks=False)
                ]
        except OSError:
            return ()
        return tuple(
            BlockDevice(name)
            for name in sorted(names)
            if os.path.exists(f"{SYS_CLASS_BLOCK}/{self.name}/{name}/partition")
        )

    def _listdir(self, sub: str) -> tuple[str, ...]:
        try:
            return tuple(sorted(os.listdir(self._sys(sub))))
        except OSError:
            return ()

    @property
    def holders(self) -> tuple[str, ...]:
        """Devices stacked on this one (dm-0, md0 ...), its own only."""
        return self._listdir("holders")

    @property
    def slaves(self) -> tuple[BlockDevice, ...]:
        """Devices this one is stacked on (for dm and md devices)."""
        return tuple(BlockDevice(n) for n in self._listdir("slaves"))

    @property
    def backing(self) -> BlockDevice | None:
        """The block device a loop device reads and writes (``losetup /dev/loopN
        /dev/X``), or None (a loop device over a file, or not a loop device)."""
        path = kernel_value(self.disk._sys("loop", "backing_file"))
        if not path:
            return None
        num = path_devnum(path.removesuffix(" (deleted)"))
        return None if num is None else BlockDevice.from_devnum(num)

    @property
    def backing_file(self) -> str | None:
        """What a loop device reads and writes, a file or a device (the kernel's path,
        without its " (deleted)" mark), or None for a device that is no loop device."""
        path = kernel_value(self.disk._sys("loop", "backing_file"))
        return path.removesuffix(" (deleted)") if path else None

    @property
    def loop_offset(self) -> int:
        """Where a loop device starts in its backing, bytes (``losetup -o``)."""
        text = kernel_value(self.disk._sys("loop", "offset"))
        return int(text) if text and text.isdigit() else 0

    @property
    def loops(self) -> tuple[BlockDevice, ...]:
        """Loop devices whose backing is this very device (not a partition of it):
        loop does not register as a holder in sysfs, so they are found from each loop
        device's ``backing_file``."""
        try:
            names = sorted(n for n in os.listdir(SYS_CLASS_BLOCK) if n.startswith("loop"))
        except OSError:
            return ()
        return tuple(
            d
            for d in (BlockDevice(n) for n in names)
            if (backing := d.backing) is not None and backing.name == self.name
        )

    def users(self) -> list[tuple[BlockDevice, BlockDevice]]:
        """Every device stacked on this one or its partitions, however deep (dm, md,
        bcache holders and loop devices backed by them), each paired with the device
        it is stacked on: writing this device writes under all of them."""
        found: list[tuple[BlockDevice, BlockDevice]] = []
        seen = {self.name}
        todo = [self]
        while todo:
            below = todo.pop(0)
            for part in below.family():
                above = [BlockDevice(h) for h in part.holders] + list(part.loops)
                for device in above:
                    if device.name not in seen:
                        seen.add(device.name)
                        found.append((part, device))
                        todo.append(device)
        return found

    @property
    def capacity_bytes(self) -> int:
        """Size in bytes: sysfs ``size`` is always in 512-byte sectors."""
        return int(kernel_value(self._sys("size")) or "0") * 512

    def _queue(self, attr: str) -> str | None:
        return kernel_value(self.disk._sys("queue", attr))

    @property
    def logical_block_bytes(self) -> int | None:
        value = self._queue("logical_block_size")
        return int(value) if value and value.isdigit() else None

    @property
    def physical_block_bytes(self) -> int | None:
        value = self._queue("physical_block_size")
        return int(value) if value and value.isdigit() else None

    @property
    def rotational(self) -> bool | None:
        value = self._queue("rotational")
        return None if value is None else value == "1"

    @property
    def scheduler(self) -> str | None:
        """The active I/O scheduler: the bracketed word in ``queue/scheduler``."""
        value = self._queue("scheduler")
        if not value:
            return None
        for word in value.split():
            if word.startswith("[") and word.endswith("]"):
                return word[1:-1]
        return value.split()[0]

    @property
    def write_cache(self) -> str | None:
        """``"write back"`` or ``"write through"`` from ``queue/write_cache``."""
        return self._queue("write_cache") or None

    @property
    def read_only(self) -> bool:
        return kernel_value(self._sys("ro")) == "1"

    @property
    def model(self) -> str | None:
        """Vendor model, or what a virtual device stands on (loop file, dm name)."""
        disk = self.disk.sysfs
        model = kernel_value(disk / "device" / "model")
        if model:
            vendor = kernel_value(disk / "device" / "vendor")
            return f"{vendor} {model}" if vendor and vendor not in model else model
        backing = kernel_value(disk / "loop" / "backing_file")
        if backing:
            return f"loop: {backing}"
        dm_name = kernel_value(disk / "dm" / "name")
        if dm_name:
            return f"device-mapper: {dm_name}"
        level = kernel_value(disk / "md" / "level")
        if level:
            return f"md: {level}"
        return None

    def family(self) -> tuple[BlockDevice, ...]:
        """This device followed by its partitions."""
        return (self, *self.partitions)

    def stack(self) -> set[str]:
        """This device and, recursively, the devices it is stacked on (what writing it
        writes): a dm/md device's slaves, a loop device's backing device."""
        seen: set[str] = set()
        todo = [self]
        while todo:
            device = todo.pop()
            if device.name not in seen:
                seen.add(device.name)
                todo.extend(device.slaves)
                if device.backing is not None:
                    todo.append(device.backing)
        return seen

    def mounts(self, mounts: list[Mount] | None = None) -> list[tuple[BlockDevice, Mount]]:
        """Mounts of this device or any of its partitions, paired with the device mounted."""
        table = read_mounts() if mounts is None else mounts
        numbers = [mount_devnum(m) for m in table]  # each mount's source looked up once
        found: list[tuple[BlockDevice, Mount]] = []
        for device in self.family():
            found.extend(
                (device, m) for m, nums in zip(table, numbers, strict=True) if device.devnum in nums
            )
        return found

    def swaps(self, swaps: list[str] | None = None) -> list[BlockDevice]:
        """This device or those of its partitions used as swap."""
        nums = {path_devnum(s) for s in (read_swaps() if swaps is None else swaps)}
        return [d for d in self.family() if d.devnum in nums]


def root_devices(mounts: list[Mount] | None = None) -> set[str]:
    """Sysfs names of what must never be written: the device holding ``/``, what it is
    stacked on, and the whole disks of those (writing a disk writes its partitions).
    ``mounts``: the mount table read already (None: read it)."""
    nums: set[DevNum] = set()
    st = os.stat("/")
    nums.add((os.major(st.st_dev), os.minor(st.st_dev)))
    for mount in read_mounts() if mounts is None else mounts:
        if mount.mountpoint == "/":
            nums |= mount_devnum(mount)
    names: set[str] = set()
    for num in nums:
        device = BlockDevice.from_devnum(num)
        if device is not None:
            stack = device.stack()
            names |= stack | {BlockDevice(n).disk.name for n in stack}
    return names
