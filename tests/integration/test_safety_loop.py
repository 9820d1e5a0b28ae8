"""The safety gate and block-device inspection on real loop devices.

Every device here is a loop device over an image file under tmp_path, made by
the ``loop_device`` fixture (which detaches it again); mounts and swap areas
are undone in ``finally`` blocks.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from loops import losetup
from volbench.errors import TargetError
from volbench.targets.blockdev import BlockDevice, root_devices
from volbench.targets.safety import check_write_allowed
from volbench.targets.signature import describe_contents
from volbench.targets.target import inspect, require_capacity
from volbench.units import MiB

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]

Loop = Callable[..., str]
Tool = Callable[[str], str]


def _run(*cmd: str, stdin: str | None = None) -> str:
    proc = subprocess.run(cmd, input=stdin, text=True, capture_output=True, check=True)
    return proc.stdout.strip()


@contextmanager
def mounted(device: str, where: Path, system_tool: Tool) -> Iterator[Path]:
    where.mkdir()
    _run(system_tool("mount"), "-t", "ext4", device, str(where))
    try:
        yield where
    finally:
        subprocess.run([system_tool("umount"), str(where)], capture_output=True, check=False)


def _write_mbr(image: Path) -> None:
    """Two Linux partitions in a DOS partition table, for machines without sfdisk."""
    entries = b""
    for start, sectors in ((2048, 16384), (18432, 16384)):
        entries += struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, sectors)
    with image.open("r+b") as f:
        f.seek(446)
        f.write(entries + bytes(32) + b"\x55\xaa")


def _partition_table(image: Path) -> None:
    sfdisk = shutil.which("sfdisk") or shutil.which("/usr/sbin/sfdisk")
    if sfdisk:
        _run(sfdisk, "-q", str(image), stdin="label: gpt\n,8M\n,8M\n")
    else:
        _write_mbr(image)


def test_blank_loop_device_is_allowed(loop_device: Loop) -> None:
    device = loop_device()
    check_write_allowed(device)
    check_write_allowed(device, destroy_data=device)


def test_ext4_is_refused_with_one_line(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None]
) -> None:
    device = loop_device(setup=mkfs_ext4)
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(device)
    assert str(excinfo.value) == (
        f"refusing to write {device}: it holds an ext4 filesystem "
        f"(use --destroy-data={device} to overwrite it)"
    )


def test_destroy_data_must_name_exactly_this_device(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None], tmp_path: Path
) -> None:
    device = loop_device(setup=mkfs_ext4)
    other = loop_device()
    check_write_allowed(device, destroy_data=device)
    link = tmp_path / "same-device"
    link.symlink_to(device)
    check_write_allowed(device, destroy_data=str(link))  # same real path
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(device, destroy_data=other)
    assert str(excinfo.value) == (
        f"refusing to write {device}: it holds an ext4 filesystem; --destroy-data={other} "
        f"names another device (use --destroy-data={device} to overwrite it)"
    )
    with pytest.raises(TargetError, match="names another device"):
        check_write_allowed(other, destroy_data=device)


def test_mounted_device_is_refused_even_with_destroy_data(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None], tmp_path: Path, system_tool: Tool
) -> None:
    device = loop_device(setup=mkfs_ext4)
    with mounted(device, tmp_path / "mnt", system_tool) as where:
        expected = f"refusing to write {device}: it is mounted on {where} (unmount it first)"
        for destroy in (None, device):
            with pytest.raises(TargetError) as excinfo:
                check_write_allowed(device, destroy_data=destroy)
            assert str(excinfo.value) == expected
        # a file on it is judged by the file rules, and inspect names the device
        scratch = where / "data.bin"
        scratch.write_bytes(b"x")
        file_info = inspect(str(scratch))
        assert file_info.device == device
        assert file_info.filesystem == "ext4"
    check_write_allowed(device, destroy_data=device)  # unmounted again


def test_swap_in_use_is_refused(loop_device: Loop, system_tool: Tool) -> None:
    mkswap, swapon, swapoff = (system_tool(t) for t in ("mkswap", "swapon", "swapoff"))
    device = loop_device(16, setup=lambda image: _run(mkswap, str(image)))
    with pytest.raises(TargetError, match=r"it holds a swap area \(use --destroy-data="):
        check_write_allowed(device)
    if subprocess.run([swapon, device], capture_output=True).returncode != 0:
        pytest.skip("swapon failed on a loop device here")
    try:
        with pytest.raises(TargetError) as excinfo:
            check_write_allowed(device, destroy_data=device)
        assert str(excinfo.value) == (
            f"refusing to write {device}: it is used as swap (swapoff {device} first)"
        )
    finally:
        subprocess.run([swapoff, device], capture_output=True, check=False)


def test_partition_table_is_refused(loop_device: Loop) -> None:
    device = loop_device(setup=_partition_table, partitions=True)
    disk = BlockDevice.from_path(device)
    names = [p.name for p in disk.partitions]
    if not names:
        pytest.skip("the kernel shows no partitions of loop devices here")
    assert names == [f"{disk.name}p1", f"{disk.name}p2"]
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(device)
    message = str(excinfo.value)
    assert message.startswith(f"refusing to write {device}: it holds a")
    assert "partition table with partitions " + ", ".join(names) in message
    assert message.endswith(f"(use --destroy-data={device} to overwrite it)")
    part = f"/dev/{names[0]}"
    check_write_allowed(part)  # an empty partition of it is fine
    info = inspect(part)
    assert info.capacity_bytes == 8 * MiB
    assert info.logical_block_bytes == inspect(device).logical_block_bytes


def test_mounted_partition_is_refused_on_the_disk(
    loop_device: Loop, tmp_path: Path, system_tool: Tool
) -> None:
    device = loop_device(setup=_partition_table, partitions=True)
    parts = BlockDevice.from_path(device).partitions
    if not parts:
        pytest.skip("the kernel shows no partitions of loop devices here")
    part = parts[0].path
    _run(system_tool("mkfs.ext4"), "-q", "-F", part)  # our own device, made from our image
    with mounted(part, tmp_path / "mnt", system_tool) as where:
        with pytest.raises(TargetError) as excinfo:
            check_write_allowed(device, destroy_data=device)
        assert str(excinfo.value) == (
            f"refusing to write {device}: its partition {part} is mounted on {where} "
            f"(unmount it first)"
        )


def test_holders_are_refused(loop_device: Loop, monkeypatch: pytest.MonkeyPatch) -> None:
    """No device-mapper here: pretend dm-7 holds a blank device."""
    device = loop_device()
    name = os.path.basename(device)
    real = BlockDevice.__dict__["holders"].fget
    assert real is not None
    monkeypatch.setattr(
        BlockDevice,
        "holders",
        property(lambda self: ("dm-7",) if self.name == name else real(self)),
    )
    with pytest.raises(TargetError) as excinfo:
        check_write_allowed(device, destroy_data=device)
    assert str(excinfo.value).startswith(f"refusing to write {device}: it is held by dm-7 (")


def test_root_disk_is_refused_whatever_the_options() -> None:
    names = sorted(root_devices())
    if not names:
        pytest.skip("/ is not on a block device here")
    for name in names:
        path = f"/dev/{name}"
        if not os.path.exists(path):
            continue
        for destroy in (None, path):
            with pytest.raises(TargetError) as excinfo:
                check_write_allowed(path, destroy_data=destroy, force=True)
            assert str(excinfo.value) == (
                f"refusing to write {path}: it holds the root filesystem / "
                f"(volbench never writes to it)"
            )


def test_inspect_matches_blockdev(loop_device: Loop, system_tool: Tool) -> None:
    blockdev = system_tool("blockdev")
    device = loop_device(48)
    info = inspect(device)
    assert info.kind == "block"
    assert info.path == device
    assert info.capacity_bytes == int(_run(blockdev, "--getsize64", device)) == 48 * MiB
    assert info.logical_block_bytes == int(_run(blockdev, "--getss", device))
    assert info.physical_block_bytes == int(_run(blockdev, "--getpbsz", device))
    assert info.model is not None and info.model.startswith("loop: ")
    assert info.model.endswith(".img")
    assert info.rotational in (True, False)
    assert info.write_cache in ("write back", "write through")
    assert info.scheduler
    require_capacity(info, 48 * MiB)
    with pytest.raises(TargetError) as excinfo:
        require_capacity(info, 1024 * MiB)
    assert str(excinfo.value) == (f"target {device} is too small: 48 MiB, the plan needs 1.0 GiB")


@contextmanager
def loop_over(backing: str, offset: int) -> Iterator[str]:
    """A loop device over ``backing`` (a file or a device this test made) starting
    ``offset`` bytes in; detached after, and only it."""
    attached = losetup(["losetup", "-f", "--show", "-o", str(offset), backing])
    assert attached.returncode == 0, attached.stderr
    device = attached.stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True, check=False)


def _image_of(device: str) -> str:
    return Path(f"/sys/class/block/{Path(device).name}/loop/backing_file").read_text().strip()


def _refused_below(upper: str, lower: str, how: str) -> None:
    """Writing ``upper`` is refused for the ext4 filesystem on ``lower`` below it, in one
    line naming how it lies there; allowed once --destroy-data names ``lower`` (the
    user's choice)."""
    with pytest.raises(TargetError) as refused:
        check_write_allowed(upper)
    assert str(refused.value) == (
        f"refusing to write {upper}: it is {how} {lower}, which holds an ext4 filesystem"
        f" (use --destroy-data={lower} to overwrite it)"
    )
    check_write_allowed(upper, destroy_data=lower)


def test_a_loop_device_at_an_offset_into_ext4_is_refused(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None]
) -> None:
    """``losetup -o 1M -f --show /dev/loop0`` over ext4: no signature at its start, yet
    its bytes are the filesystem's (issue: "Resize inode not valid" after a run)."""
    lower = loop_device(16, setup=mkfs_ext4)
    with loop_over(lower, MiB) as upper:
        _refused_below(upper, lower, "a loop device at offset 1,048,576 bytes into")


def test_a_loop_device_at_an_offset_into_a_blank_device_is_allowed(loop_device: Loop) -> None:
    lower = loop_device(16)
    with loop_over(lower, MiB) as upper:
        check_write_allowed(upper)


def test_a_second_loop_device_over_the_same_image_is_refused(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None], tmp_path: Path, system_tool: Tool
) -> None:
    """Another loop device over the image file (offset 1 MiB): the image's ext4 is
    checked as the target's own, and the first loop device mounted is another user."""
    first = loop_device(16, setup=mkfs_ext4)
    image = _image_of(first)
    with loop_over(image, MiB) as second:
        with pytest.raises(TargetError, match=f"its backing file {image} is also behind {first}"):
            check_write_allowed(second, destroy_data=image)
        held = pytest.raises(TargetError, match=f"also behind {first}, mounted on ")
        with mounted(first, tmp_path / "mnt", system_tool), held:
            check_write_allowed(second, destroy_data=image)


def test_a_loop_device_over_a_mounted_device_is_refused(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None], tmp_path: Path, system_tool: Tool
) -> None:
    lower = loop_device(16, setup=mkfs_ext4)
    held = pytest.raises(TargetError, match=f"it is stacked on {lower}, and {lower} is mounted")
    with loop_over(lower, MiB) as upper, mounted(lower, tmp_path / "mnt", system_tool), held:
        check_write_allowed(upper, destroy_data=lower)


@contextmanager
def dm_linear(lower: str, offset: int) -> Iterator[str]:
    """A device-mapper linear map over ``lower`` from ``offset`` bytes on (``dmsetup
    create``, removed again even when the test fails)."""
    dmsetup = shutil.which("dmsetup")
    if dmsetup is None:
        pytest.skip("dmsetup is not installed")
    name = f"volbench-test-{os.getpid()}"
    sectors = BlockDevice.from_path(lower).capacity_bytes // 512 - offset // 512
    table = f"0 {sectors} linear {lower} {offset // 512}"
    made = subprocess.run([dmsetup, "create", name, "--table", table], capture_output=True)
    if made.returncode != 0 and b"kernel device-mapper driver" in made.stderr:
        pytest.skip("the kernel has no device-mapper driver here")
    assert made.returncode == 0, made.stderr.decode()
    try:
        yield os.path.realpath(f"/dev/mapper/{name}")
    finally:
        subprocess.run([dmsetup, "remove", "--retry", name], capture_output=True)


def test_a_device_mapper_map_at_an_offset_into_ext4_is_refused(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None]
) -> None:
    """A dm linear map 1 MiB into an ext4 device shows no signature at its start, yet
    writes the filesystem: the slave's own signature is checked, and --destroy-data
    must name the slave; over a blank device it is allowed."""
    lower = loop_device(16, setup=mkfs_ext4)
    with dm_linear(lower, MiB) as upper:
        _refused_below(upper, lower, "a device-mapper or md device over")
    blank = loop_device(16)
    with dm_linear(blank, MiB) as upper:
        check_write_allowed(upper)


def _slaves_of(monkeypatch: pytest.MonkeyPatch, upper: str, lower: str) -> None:
    """Pretend ``upper`` is a dm or md device over ``lower`` (its sysfs ``slaves``)."""
    name = os.path.basename(upper)
    real = BlockDevice.__dict__["slaves"].fget
    assert real is not None
    below = BlockDevice(os.path.basename(lower))
    monkeypatch.setattr(
        BlockDevice,
        "slaves",
        property(lambda self: (below,) if self.name == name else real(self)),
    )


def test_a_slave_holding_a_filesystem_is_checked_below_a_stack(
    loop_device: Loop, mkfs_ext4: Callable[[Path], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel has no device-mapper (as on the machines CI runs on): a blank
    device made to look stacked over an ext4 one is refused, naming the slave; a
    slave's membership of the stack (an LVM physical volume) is not data beside it."""
    upper, lower = loop_device(16), loop_device(16, setup=mkfs_ext4)
    _slaves_of(monkeypatch, upper, lower)
    _refused_below(upper, lower, "a device-mapper or md device over")
    pv = loop_device(16, setup=_lvm2_label)
    assert describe_contents(pv) == "an LVM2 physical volume"
    _slaves_of(monkeypatch, upper, pv)
    check_write_allowed(upper)


def _lvm2_label(image: Path) -> None:
    """An LVM2 physical volume's label in sector 1 ("LABELONE" ... "LVM2 001")."""
    with image.open("r+b") as f:
        f.seek(512)
        f.write(b"LABELONE" + bytes(16) + b"LVM2 001")
