"""Block-device properties from a fake sysfs tree, and mountinfo/swaps parsing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from volbench.targets import blockdev
from volbench.targets.blockdev import BlockDevice, Mount, parse_mountinfo, parse_swaps, unescape

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
40 27 7:3 / /mnt/my\\040data rw,relatime - ext4 /dev/loop3 rw
41 27 7:3 /sub /srv/bind rw,relatime - ext4 /dev/loop3 rw
42 27 0:45 / /mnt/btrfs rw,relatime - btrfs /dev/mapper/vg-lv rw
garbage line
"""


def test_parse_mountinfo() -> None:
    mounts = parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 5
    assert mounts[1] == Mount((254, 0), "/", "/", "ext4", "/dev/vda")
    assert mounts[2].mountpoint == "/mnt/my data"
    assert mounts[3] == Mount((7, 3), "/sub", "/srv/bind", "ext4", "/dev/loop3")
    assert mounts[4].fstype == "btrfs"


def test_parse_swaps() -> None:
    text = (
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/zram0                              partition\t8388604\t\t0\t\t100\n"
        "/swap\\040file                           file\t\t1048572\t\t0\t\t-2\n"
    )
    assert parse_swaps(text) == ["/dev/zram0", "/swap file"]
    assert parse_swaps("Filename Type Size Used Priority\n") == []


def test_unescape() -> None:
    assert unescape("a\\040b\\011c\\134d") == "a b\tc\\d"
    assert unescape("plain") == "plain"
    assert unescape("bad\\04") == "bad\\04"


@pytest.fixture
def fake_sysfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """/sys/class/block with a disk sdx (two partitions, one held by dm-0) and dm-0."""
    devices = tmp_path / "devices"
    classes = tmp_path / "class" / "block"
    classes.mkdir(parents=True)
    disk = devices / "pci" / "sdx"
    files = {
        disk / "dev": "8:16",
        disk / "size": "2097152",
        disk / "ro": "0",
        disk / "queue" / "logical_block_size": "512",
        disk / "queue" / "physical_block_size": "4096",
        disk / "queue" / "rotational": "0",
        disk / "queue" / "scheduler": "none [mq-deadline] kyber bfq",
        disk / "queue" / "write_cache": "write through",
        disk / "device" / "model": "Fast SSD 1TB    ",
        disk / "device" / "vendor": "ACME",
        disk / "sdx1" / "dev": "8:17",
        disk / "sdx1" / "size": "2048",
        disk / "sdx1" / "partition": "1",
        disk / "sdx2" / "dev": "8:18",
        disk / "sdx2" / "size": "4096",
        disk / "sdx2" / "partition": "2",
        devices / "virtual" / "dm-0" / "dev": "253:0",
        devices / "virtual" / "dm-0" / "size": "4096",
        devices / "virtual" / "dm-0" / "dm" / "name": "vg-lv",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    (disk / "holders").mkdir()
    (disk / "sdx1" / "holders").mkdir()
    (disk / "sdx2" / "holders" / "dm-0").mkdir(parents=True)
    (devices / "virtual" / "dm-0" / "slaves" / "sdx2").mkdir(parents=True)
    for name, target in (
        ("sdx", disk),
        ("sdx1", disk / "sdx1"),
        ("sdx2", disk / "sdx2"),
        ("dm-0", devices / "virtual" / "dm-0"),
    ):
        os.symlink(target, classes / name)
    monkeypatch.setattr(blockdev, "SYS_CLASS_BLOCK", classes)
    return classes


def test_disk_properties(fake_sysfs: Path) -> None:
    sdx = BlockDevice("sdx")
    assert sdx.devnum == (8, 16)
    assert sdx.capacity_bytes == 1024**3
    assert (sdx.logical_block_bytes, sdx.physical_block_bytes) == (512, 4096)
    assert sdx.rotational is False
    assert sdx.scheduler == "mq-deadline"
    assert sdx.write_cache == "write through"
    assert sdx.model == "ACME Fast SSD 1TB"
    assert not sdx.read_only
    assert [p.name for p in sdx.partitions] == ["sdx1", "sdx2"]
    assert sdx.users() == [(BlockDevice("sdx2"), BlockDevice("dm-0"))]


def test_partition_reads_queue_properties_from_its_disk(fake_sysfs: Path) -> None:
    part = BlockDevice("sdx1")
    assert part.is_partition
    assert part.disk == BlockDevice("sdx")
    assert part.capacity_bytes == 1024 * 1024
    assert part.logical_block_bytes == 512
    assert part.scheduler == "mq-deadline"
    assert part.model == "ACME Fast SSD 1TB"
    assert part.partitions == ()


def test_stacked_device(fake_sysfs: Path) -> None:
    dm = BlockDevice("dm-0")
    assert dm.model == "device-mapper: vg-lv"
    assert dm.stack() == {"dm-0", "sdx2"}
    assert dm.logical_block_bytes is None


def test_mounts_and_swaps_of_a_disk_include_its_partitions(fake_sysfs: Path) -> None:
    mounts = [Mount((8, 17), "/", "/boot", "ext4", "/dev/sdx1")]
    found = BlockDevice("sdx").mounts(mounts)
    assert found == [(BlockDevice("sdx1"), mounts[0])]
    assert BlockDevice("sdx2").mounts(mounts) == []


def test_partitions_are_looked_for_in_folders_only(
    fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk's attribute files (dev, size, ro) and its other folders (queue, holders)
    hold no partition: only the folders named after it are looked into (the safety
    check before every PTS cell lists a disk's partitions three times)."""
    looked: list[str] = []
    stat = os.stat

    def counted(path: str | os.PathLike[str], *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.fspath(path))
        return stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counted)
    assert [p.name for p in BlockDevice("sdx").partitions] == ["sdx1", "sdx2"]
    into = sorted(Path(p).parent.name for p in looked if p.endswith("/partition"))
    assert into == ["sdx", "sdx1", "sdx2"]


def test_each_mount_source_is_looked_up_once(
    fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk's mounts are matched for it and each partition, each mount's source node
    looked up once, not once a partition."""
    looked: list[str] = []
    lookup = blockdev.path_devnum
    monkeypatch.setattr(blockdev, "path_devnum", lambda p: looked.append(p) or lookup(p))
    mounts = [
        Mount((8, 17), "/", "/boot", "ext4", "/dev/sdx1"),
        Mount((254, 0), "/", "/", "ext4", "/dev/vda"),
    ]
    assert BlockDevice("sdx").mounts(mounts) == [(BlockDevice("sdx1"), mounts[0])]
    assert looked == ["/dev/sdx1", "/dev/vda"]
