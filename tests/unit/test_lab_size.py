"""A run on lab guests' own disks without ``--size`` takes the smallest guest disk as
its active range; any other remote place still needs ``--size``."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.lab import guest as guests
from volbench.lab.place import DISK, guest_disks_bytes
from volbench.lab.throttle import Limits
from volbench.model import Place


def test_guest_disks_give_the_active_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    for name, size in (("a", 2 << 30), ("b", 1 << 30)):
        guest = guests.Guest(name, "127.0.0.60", 8765, 8766, "tcg", Limits(),
                             str(tmp_path / name), size, "6.1", 5.5, 1)  # fmt: skip
        guest.folder.mkdir(parents=True)
        guests.save(guest)
    both = [Place("lab://a", DISK), Place("lab://b", DISK)]
    assert guest_disks_bytes(both) == 1 << 30
    assert guest_disks_bytes(both[:1]) == 2 << 30
    assert guest_disks_bytes([Place("lab://a", "/tmp/file")]) is None
    assert guest_disks_bytes([Place("ssh://h", DISK)]) is None
    assert guest_disks_bytes([]) is None
