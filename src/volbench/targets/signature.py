"""What a device (or image file) holds, judged from its on-disk signatures.

Only the first and last MiB are read, read-only. The pure-Python checks
(:func:`scan_bytes`) look for filesystems, partition tables, swap, LVM, md RAID
and LUKS at their documented offsets; when util-linux ``blkid`` is installed
its low-level probe (``blkid -p``) is asked as a second opinion and anything it
found that the checks did not is added, marked as found by blkid.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from dataclasses import dataclass

from volbench.errors import TargetError

HEAD_BYTES = 1024 * 1024
TAIL_BYTES = 1024 * 1024
MD_MAGIC = 0xA92B4EFC
BCACHE_MAGIC = bytes.fromhex("c68573f64e1a45ca8265f57f48ba6d81")

#: Descriptions by blkid TYPE / PTTYPE name; the checks below use the same names.
DESCRIPTIONS: dict[str, str] = {
    "ext2": "an ext2 filesystem",
    "ext3": "an ext3 filesystem",
    "ext4": "an ext4 filesystem",
    "xfs": "an XFS filesystem",
    "btrfs": "a btrfs filesystem",
    "vfat": "a FAT filesystem",
    "ntfs": "an NTFS filesystem",
    "exfat": "an exFAT filesystem",
    "iso9660": "an ISO 9660 filesystem",
    "swap": "a swap area",
    "LVM2_member": "an LVM2 physical volume",
    "linux_raid_member": "an md RAID member",
    "crypto_LUKS": "a LUKS encrypted volume",
    "bcache": "a bcache device",
    "zfs_member": "a ZFS pool member",
    "gpt": "a GPT partition table",
    "gpt-backup": "a backup GPT partition table",
    "dos": "an MBR partition table",
    "ambivalent": "several signatures",
}


@dataclass(frozen=True)
class Signature:
    """One thing found on a device: ``kind`` uses blkid's names (``ext4``, ``gpt`` ...)."""

    kind: str
    offset: int
    source: str = "volbench"

    @property
    def description(self) -> str:
        text = DESCRIPTIONS.get(self.kind, f"a {self.kind} signature")
        return f"{text} (found by blkid)" if self.source == "blkid" else text

    @property
    def family(self) -> str:
        """Kinds that are the same thing told apart differently (ext2/3/4)."""
        return "ext" if self.kind.startswith("ext") else self.kind


class _Image:
    """The first and last bytes of a device, addressed by absolute offset."""

    def __init__(self, head: bytes, tail: bytes, size: int) -> None:
        self.head, self.tail, self.size = head, tail, size
        self.tail_start = size - len(tail)

    def at(self, offset: int, length: int) -> bytes:
        if offset < 0 or offset + length > self.size:
            return b""
        if offset + length <= len(self.head):
            return self.head[offset : offset + length]
        if offset >= self.tail_start:
            return self.tail[offset - self.tail_start : offset - self.tail_start + length]
        return b""

    def le32(self, offset: int) -> int | None:
        data = self.at(offset, 4)
        return struct.unpack("<I", data)[0] if len(data) == 4 else None


def _ext_kind(img: _Image) -> str:
    """ext2, ext3 or ext4 from the superblock feature flags (as blkid decides)."""
    compat = img.le32(1024 + 0x5C) or 0
    incompat = img.le32(1024 + 0x60) or 0
    ro_compat = img.le32(1024 + 0x64) or 0
    ext3_incompat = 0x0002 | 0x0004 | 0x0008 | 0x0010  # filetype, recover, journal_dev, meta_bg
    ext3_ro_compat = 0x0001 | 0x0002 | 0x0004  # sparse_super, large_file, btree_dir
    if incompat & ~ext3_incompat or ro_compat & ~ext3_ro_compat:
        return "ext4"
    return "ext3" if compat & 0x0004 else "ext2"  # has_journal


def _boot_sector_fs(img: _Image) -> str | None:
    """A FAT, NTFS or exFAT volume boot record (which also ends in 0x55AA)."""
    oem = img.at(3, 8)
    if oem == b"NTFS    ":
        return "ntfs"
    if oem == b"EXFAT   ":
        return "exfat"
    boot = img.at(510, 2) == b"\x55\xaa" and img.at(0, 1) in (b"\xeb", b"\xe9")
    if boot and (img.at(54, 5) in (b"FAT12", b"FAT16") or img.at(82, 5) == b"FAT32"):
        return "vfat"
    return None


def _mbr(img: _Image) -> bool:
    """A DOS partition table: 0x55AA and at least one valid, non-empty entry."""
    if img.at(510, 2) != b"\x55\xaa":
        return False
    entries = [img.at(446 + 16 * i, 16) for i in range(4)]
    if any(len(e) != 16 or e[0] not in (0x00, 0x80) for e in entries):
        return False
    return any(e[4] != 0 and struct.unpack("<I", e[12:16])[0] != 0 for e in entries)


def _md(img: _Image) -> int | None:
    """Offset of an md RAID superblock (v1.1 at 0, v1.2 at 4 KiB, v1.0 and v0.90 at the end)."""
    v10 = (((img.size >> 9) - 16) & ~7) << 9
    v090 = (img.size & ~(65536 - 1)) - 65536
    for offset in (0, 4096, v10):
        if img.le32(offset) == MD_MAGIC and img.le32(offset + 4) == 1:
            return offset
    data = img.at(v090, 4)
    if len(data) == 4 and MD_MAGIC in struct.unpack("<I", data) + struct.unpack(">I", data):
        return v090
    return None


def scan_bytes(head: bytes, tail: bytes, size: int) -> list[Signature]:
    """Signatures in a device of ``size`` bytes whose first and last bytes are given."""
    img = _Image(head, tail, size)
    found: list[Signature] = []
    if img.at(1080, 2) == b"\x53\xef":
        found.append(Signature(_ext_kind(img), 1024))
    if img.at(0, 4) == b"XFSB":
        found.append(Signature("xfs", 0))
    if img.at(65600, 8) == b"_BHRfS_M":
        found.append(Signature("btrfs", 65536))
    if img.at(0, 6) == b"LUKS\xba\xbe":
        found.append(Signature("crypto_LUKS", 0))
    if img.at(32769, 5) == b"CD001":
        found.append(Signature("iso9660", 32768))
    if img.at(4096 + 24, 16) == BCACHE_MAGIC:
        found.append(Signature("bcache", 4096))
    for sector in range(4):
        if img.at(512 * sector, 8) == b"LABELONE" and img.at(512 * sector + 24, 8) == b"LVM2 001":
            found.append(Signature("LVM2_member", 512 * sector))
            break
    for page in (4096, 8192, 16384, 65536):
        if img.at(page - 10, 10) in (b"SWAPSPACE2", b"SWAP-SPACE"):
            found.append(Signature("swap", page - 10))
            break
    md = _md(img)
    if md is not None:
        found.append(Signature("linux_raid_member", md))
    boot_fs = _boot_sector_fs(img)
    if boot_fs is not None:
        found.append(Signature(boot_fs, 0))
    gpt = next((o for o in (512, 4096) if img.at(o, 8) == b"EFI PART"), None)
    if gpt is not None:
        found.append(Signature("gpt", gpt))
    elif boot_fs is None and _mbr(img):
        found.append(Signature("dos", 446))
    elif img.at(size - 512, 8) == b"EFI PART":
        found.append(Signature("gpt-backup", size - 512))
    return found


def scan(path: str) -> list[Signature]:
    """Read the first and last MiB of ``path`` (read-only) and run :func:`scan_bytes`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise TargetError(
            f"cannot read {path} to check what it holds: {exc.strerror or exc}"
        ) from exc
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        head = os.pread(fd, min(HEAD_BYTES, size), 0)
        tail_len = min(TAIL_BYTES, size)
        tail = os.pread(fd, tail_len, size - tail_len)
    except OSError as exc:
        raise TargetError(f"cannot read {path} to check what it holds: {exc.strerror}") from exc
    finally:
        os.close(fd)
    return scan_bytes(head, tail, size)


def parse_blkid_export(text: str) -> list[Signature]:
    """Signatures from ``blkid -p -o export`` output (TYPE and PTTYPE lines)."""
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    found = [Signature(values[key], 0, "blkid") for key in ("TYPE", "PTTYPE") if key in values]
    return [s for s in found if s.kind != "PMBR"]  # protective MBR: GPT reports itself


def blkid(path: str) -> list[Signature] | None:
    """blkid's low-level probe of ``path``; None when blkid is absent or failed to run."""
    exe = shutil.which("blkid") or next(
        (p for p in ("/usr/sbin/blkid", "/sbin/blkid") if os.access(p, os.X_OK)), None
    )
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, "-p", "-o", "export", path],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode == 8:  # ambivalent: several signatures
        return [Signature("ambivalent", 0, "blkid")]
    return parse_blkid_export(proc.stdout) if proc.returncode == 0 else []


def probe(path: str) -> list[Signature]:
    """The pure-Python findings, plus whatever blkid found that they did not."""
    found = scan(path)
    families = {s.family for s in found}
    if "gpt-backup" in families:
        families.add("gpt")
    for extra in blkid(path) or []:
        if extra.family not in families:
            if extra.kind == "ambivalent" and found:
                continue
            found.append(extra)
            families.add(extra.family)
    return found


def describe(signatures: list[Signature]) -> str | None:
    """``"an ext4 filesystem"``, several joined with "and", or None for a blank device."""
    if not signatures:
        return None
    return " and ".join(dict.fromkeys(s.description for s in signatures))


def describe_contents(path: str) -> str | None:
    """What ``path`` holds, in a few words, or None when no signature was found."""
    return describe(probe(path))
