"""Signature detection: real tools on image files, and crafted bytes for the rest."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from volbench.targets import signature
from volbench.targets.signature import (
    MD_MAGIC,
    Signature,
    blkid,
    describe,
    describe_contents,
    parse_blkid_export,
    scan,
    scan_bytes,
)

MiB = 1024 * 1024
Tool = Callable[[str], str]


def _image(tmp_path: Path, size: int = 32 * MiB, name: str = "disk.img") -> Path:
    path = tmp_path / name
    with path.open("wb") as f:
        f.truncate(size)
    return path


def _run(*cmd: str, stdin: str | None = None) -> None:
    env = {**os.environ, "LVM_SUPPRESS_FD_WARNINGS": "1"}
    subprocess.run(cmd, input=stdin, text=True, capture_output=True, check=True, env=env)


def _assert_found(path: Path, kind: str, description: str) -> None:
    """The pure-Python scan finds ``kind``; blkid, where installed, agrees."""
    found = scan(str(path))
    assert [s.kind for s in found] == [kind]
    assert describe(found) == description
    assert describe_contents(str(path)) == description
    opinion = blkid(str(path))
    if opinion is not None:
        assert {s.family for s in opinion} == {s.family for s in found}


# --- real tools on image files ----------------------------------------------------


def test_blank_image_holds_nothing(tmp_path: Path) -> None:
    path = _image(tmp_path)
    assert scan(str(path)) == []
    assert describe_contents(str(path)) is None


@pytest.mark.parametrize(("tool", "kind"), [("mkfs.ext2", "ext2"), ("mkfs.ext3", "ext3")])
def test_older_ext_filesystems(tmp_path: Path, system_tool: Tool, tool: str, kind: str) -> None:
    path = _image(tmp_path)
    _run(system_tool(tool), "-q", "-F", str(path))
    _assert_found(path, kind, f"an {kind} filesystem")


def test_ext4(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("mkfs.ext4"), "-q", "-F", str(path))
    _assert_found(path, "ext4", "an ext4 filesystem")


def test_swap(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("mkswap"), str(path))
    _assert_found(path, "swap", "a swap area")


def test_vfat_is_not_taken_for_an_mbr(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("mkfs.vfat"), str(path))
    _assert_found(path, "vfat", "a FAT filesystem")


def test_mbr_partition_table(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("sfdisk"), "-q", str(path), stdin="label: dos\n,16M\n,\n")
    _assert_found(path, "dos", "an MBR partition table")


def test_gpt_partition_table_with_sfdisk(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("sfdisk"), "-q", str(path), stdin="label: gpt\n,16M\n,\n")
    _assert_found(path, "gpt", "a GPT partition table")


def test_gpt_partition_table_with_sgdisk(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("sgdisk"), "-o", "-n", "1:0:+8M", str(path))
    _assert_found(path, "gpt", "a GPT partition table")


def test_backup_gpt_alone_is_still_a_partition_table(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("sgdisk"), "-o", "-n", "1:0:+8M", str(path))
    with path.open("r+b") as f:  # wipe the protective MBR and the primary GPT
        f.write(bytes(64 * 1024))
    assert [s.kind for s in scan(str(path))] == ["gpt-backup"]
    assert describe_contents(str(path)) == "a backup GPT partition table"


def test_lvm2_physical_volume(system_tool: Tool, loop_device: Callable[..., str]) -> None:
    """pvcreate refuses plain files, so it runs on a loop device over the image."""
    pvcreate = system_tool("pvcreate")
    image_paths: list[Path] = []
    device = loop_device(16, setup=image_paths.append)
    _run(pvcreate, "--devicesfile", "", "-qq", device)
    _assert_found(image_paths[0], "LVM2_member", "an LVM2 physical volume")


def test_scan_does_not_modify_the_image(tmp_path: Path, system_tool: Tool) -> None:
    path = _image(tmp_path)
    _run(system_tool("mkfs.ext4"), "-q", "-F", str(path))
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    describe_contents(str(path))
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


# --- crafted bytes for formats whose tools are not installed ----------------------


def _scan_crafted(size: int, writes: dict[int, bytes]) -> list[str]:
    image = bytearray(size)
    for offset, data in writes.items():
        image[offset : offset + len(data)] = data
    head, tail = bytes(image[: signature.HEAD_BYTES]), bytes(image[-signature.TAIL_BYTES :])
    return [s.kind for s in scan_bytes(head, tail, size)]


SIZE = 8 * MiB + 12345 * 512  # not a multiple of 64 KiB, to exercise end offsets


@pytest.mark.parametrize(
    ("writes", "kind"),
    [
        ({0: b"XFSB"}, "xfs"),
        ({65600: b"_BHRfS_M"}, "btrfs"),
        ({0: b"LUKS\xba\xbe\x00\x01"}, "crypto_LUKS"),
        ({32769: b"CD001"}, "iso9660"),
        ({3: b"NTFS    ", 510: b"\x55\xaa"}, "ntfs"),
        ({3: b"EXFAT   ", 510: b"\x55\xaa"}, "exfat"),
        ({512: b"LABELONE", 512 + 24: b"LVM2 001"}, "LVM2_member"),
        ({1536: b"LABELONE", 1536 + 24: b"LVM2 001"}, "LVM2_member"),
        ({4096 - 10: b"SWAPSPACE2"}, "swap"),
        ({65536 - 10: b"SWAP-SPACE"}, "swap"),
        ({0: struct.pack("<II", MD_MAGIC, 1)}, "linux_raid_member"),  # v1.1
        ({4096: struct.pack("<II", MD_MAGIC, 1)}, "linux_raid_member"),  # v1.2
        ({(((SIZE >> 9) - 16) & ~7) << 9: struct.pack("<II", MD_MAGIC, 1)}, "linux_raid_member"),
        ({(SIZE & ~65535) - 65536: struct.pack("<I", MD_MAGIC)}, "linux_raid_member"),  # 0.90
        ({4096 + 24: signature.BCACHE_MAGIC}, "bcache"),
        ({512: b"EFI PART", 510: b"\x55\xaa", 446 + 4: b"\xee"}, "gpt"),
        ({4096: b"EFI PART"}, "gpt"),
    ],
)
def test_crafted_signatures(writes: dict[int, bytes], kind: str) -> None:
    assert _scan_crafted(SIZE, writes) == [kind]


def test_mbr_needs_a_non_empty_valid_entry() -> None:
    empty_table = {510: b"\x55\xaa"}
    assert _scan_crafted(SIZE, empty_table) == []
    entry = b"\x00" * 4 + b"\x83" + b"\x00" * 7 + struct.pack("<I", 2048)
    assert _scan_crafted(SIZE, {**empty_table, 446: entry}) == ["dos"]
    bad_boot_flag = b"\x42" + entry[1:]
    assert _scan_crafted(SIZE, {**empty_table, 446: bad_boot_flag}) == []


def test_md_magic_needs_version_one_at_the_start() -> None:
    assert _scan_crafted(SIZE, {0: struct.pack("<II", MD_MAGIC, 7)}) == []


def test_tiny_device_does_not_crash() -> None:
    assert scan_bytes(b"", b"", 0) == []
    assert scan_bytes(b"\x00" * 100, b"\x00" * 100, 100) == []


# --- blkid as a second opinion ----------------------------------------------------


def test_parse_blkid_export() -> None:
    text = "DEVNAME=/dev/loop3\nUUID=abc\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\n"
    assert parse_blkid_export(text) == [Signature("ext4", 0, "blkid")]
    assert parse_blkid_export("PTUUID=x\nPTTYPE=gpt\n") == [Signature("gpt", 0, "blkid")]
    assert parse_blkid_export("PTTYPE=PMBR\n") == []
    assert parse_blkid_export("") == []


def test_probe_adds_what_only_blkid_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _image(tmp_path)
    monkeypatch.setattr(signature, "blkid", lambda p: [Signature("zfs_member", 0, "blkid")])
    assert describe_contents(str(path)) == "a ZFS pool member (found by blkid)"


def test_probe_keeps_its_own_finding_when_blkid_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _image(tmp_path)
    with path.open("r+b") as f:
        f.write(b"XFSB")
    monkeypatch.setattr(signature, "blkid", lambda p: [Signature("xfs", 0, "blkid")])
    assert describe_contents(str(path)) == "an XFS filesystem"


def test_probe_works_without_blkid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _image(tmp_path)
    with path.open("r+b") as f:
        f.seek(4096 - 10)
        f.write(b"SWAPSPACE2")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    assert blkid(str(path)) is None
    assert describe_contents(str(path)) == "a swap area"


def test_describe_joins_several_findings() -> None:
    found = [Signature("ext4", 1024), Signature("dos", 446)]
    assert describe(found) == "an ext4 filesystem and an MBR partition table"
    assert describe([]) is None
