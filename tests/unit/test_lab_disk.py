"""A lab guest's own disk as a place: without ``--size`` a run takes the smallest guest
disk as its active range (any other remote place still needs ``--size``), and PTS
purges it from this machine."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from volbench.errors import TargetError
from volbench.lab import guest as guests
from volbench.lab.throttle import Limits
from volbench.model import Place, TargetInfo
from volbench.places.lab import DISK
from volbench.places.table import default_size as guest_disks_bytes
from volbench.places.table import purge


def test_guest_disks_give_the_active_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    for name, size in (("a", 2 << 30), ("b", 1 << 30)):
        guest = guests.Guest(
            name,
            "127.0.0.60",
            8765,
            8766,
            "tcg",
            Limits(),
            str(tmp_path / name),
            size,
            "6.1",
            5.5,
            1,
        )
        guest.folder.mkdir(parents=True)
        guests.save(guest)
    both = [Place("lab://a", DISK), Place("lab://b", DISK)]
    assert guest_disks_bytes(both) == 1 << 30
    assert guest_disks_bytes(both[:1]) == 2 << 30
    assert guest_disks_bytes([Place("lab://a", "/tmp/file")]) is None
    assert guest_disks_bytes([Place("ssh://h", DISK)]) is None
    assert guest_disks_bytes([]) is None


def test_a_guest_disk_is_purged_by_deallocating_its_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pts --hosts lab://NAME`` purges the guest's disk from this machine: its image's
    blocks deallocated (reads as zeros), its size kept; another remote place is refused
    with what to do, and a guest whose qemu is not running is refused too."""
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    image = tmp_path / "disk.img"
    image.write_bytes(b"\xab" * (1 << 20))
    guest = guests.Guest(
        "p", "127.0.0.60", 8765, 8766, "tcg", Limits(), str(image), 1 << 20, "6.1", 5.5, 1
    )
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    target = TargetInfo(f"lab://p:{DISK}", "remote", 1 << 20)
    with pytest.raises(TargetError, match="lab guest p is not running"):
        purge(target)
    qemu = subprocess.Popen(
        [
            "qemu-system-x86_64",
            "-c",
            "import time; time.sleep(60)",
            "-pidfile",
            str(guest.folder / guests.PIDFILE),
        ],
        executable=sys.executable,
    )
    try:
        (guest.folder / guests.PIDFILE).write_text(f"{qemu.pid}\n")
        deadline = time.monotonic() + 10
        while not guests.command_line(qemu.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert purge(target) == "lab image deallocated (fallocate --punch-hole)"
    finally:
        qemu.kill()
        qemu.wait()
    assert image.stat().st_size == 1 << 20
    assert image.read_bytes() == bytes(1 << 20)
    assert image.stat().st_blocks == 0
    with pytest.raises(TargetError, match="add --no-purge"):
        purge(TargetInfo("ssh://h:/dev/sdb", "remote", 1 << 20))
