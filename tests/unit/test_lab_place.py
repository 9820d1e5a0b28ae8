"""lab://NAME as a place: its name, its default target /dev/vda, which needs no
--destroy-data, the qemu command line that makes the guest, and its disk's cache mode
as the place records it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from validity_facts import row, workload
from volbench.analysis.run_validity import validity_of
from volbench.analysis.validity import MarkKind
from volbench.errors import UsageError
from volbench.lab import guest as guests
from volbench.lab.machine import Launch, qemu_command
from volbench.lab.throttle import Bucket, Limits
from volbench.model import (
    HostInfo,
    Place,
    PlaceRecord,
    RunRecord,
    RunSettings,
    RunStatus,
    TargetInfo,
)
from volbench.places import lab
from volbench.places.lab import DISK, LAB, guest_cache, lab_address, lab_name
from volbench.places.table import check_write, host_name, kind_of
from volbench.plans.placement.named import places_from


def test_lab_names() -> None:
    assert kind_of("lab://gp2") is LAB and kind_of(" LAB://gp2") is LAB
    assert kind_of("ssh://gp2") is not LAB
    assert lab_name("lab://Gp2-100") == "gp2-100"
    assert host_name("lab://gp2") == "lab://gp2"
    for bad in ("lab://", "lab://a b", "lab://-x", "lab://a:/dev/vda"):
        with pytest.raises(UsageError, match="lab://NAME"):
            lab_name(bad)


def test_a_lab_host_measures_its_disk_by_default() -> None:
    assert places_from([], ["lab://a", "lab://b"]) == (
        Place("lab://a", DISK),
        Place("lab://b", DISK),
    )
    assert places_from(["lab://a:/dev/vdb"], ["lab://a"]) == (Place("lab://a", "/dev/vdb"),)
    assert places_from(["/dev/vda"], ["lab://a", "10.0.0.5"]) == (
        Place("lab://a", "/dev/vda"),
        Place("10.0.0.5", "/dev/vda"),
    )
    with pytest.raises(UsageError, match="not in --hosts"):
        places_from(["lab://c:/dev/vda"], ["lab://a"])
    with pytest.raises(UsageError, match=r"no target for host 10\.0\.0\.5"):
        places_from([], ["lab://a", "10.0.0.5"])


def test_the_guest_disk_needs_no_destroy_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path))
    guest = _guest("a", "none")
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    assert check_write(Place("lab://a", DISK), True, [], False) is None  # no image here
    with pytest.raises(UsageError, match="use --destroy-data=lab://a:/dev/vdb"):
        check_write(Place("lab://a", "/dev/vdb"), True, [], False)
    check_write(Place("lab://a", "/dev/vdb"), True, ["lab://a:/dev/vdb"], False)
    with pytest.raises(UsageError, match=r"use --destroy-data=10\.0\.0\.5:/dev/vda"):
        check_write(Place("10.0.0.5", DISK), True, [], False)


def test_an_unknown_guest_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path))
    with pytest.raises(UsageError, match="volbench lab up nope"):
        lab_address("lab://nope")


def launch(folder: Path, direct: bool = True) -> Launch:
    limits = Limits(iops_total=Bucket(1000, 3000, 10), iops_size=262144)
    return Launch(
        folder,
        folder / "vmlinuz",
        folder / "initramfs.cpio",
        folder / "disk.img",
        direct,
        "127.0.0.60",
        8765,
        8766,
        limits,
        "tcg",
        "lab-a-tcg",
    )


def test_qemu_command(tmp_path: Path) -> None:
    command = qemu_command(launch(tmp_path))
    text = " ".join(command)
    assert command[0] == "qemu-system-x86_64"
    assert command[command.index("-pidfile") + 1] == str(tmp_path / "qemu.pid")
    assert command[command.index("-accel") + 1] == "tcg"
    assert (
        "throttle-group,id=tg0,x-iops-total=1000,x-iops-total-max=3000,"
        "x-iops-total-max-length=10,x-iops-size=262144"
    ) in command
    assert "driver=throttle,node-name=disk,throttle-group=tg0,file=disk-raw" in command
    assert f"filename={tmp_path / 'disk.img'},cache.direct=on" in text
    assert "restrict=on,hostfwd=tcp:127.0.0.60:8765-10.0.2.15:8765," in text
    assert "hostfwd=tcp:127.0.0.60:8766-10.0.2.15:8766" in text
    assert f"unix:{tmp_path / 'qmp.sock'},server=on,wait=off" in command
    assert "volbench.hostname=lab-a-tcg" in text
    assert "cache.direct=off" in " ".join(qemu_command(launch(tmp_path, direct=False)))
    with pytest.raises(UsageError, match="no ','"):
        qemu_command(launch(tmp_path / "a,b"))


def _guest(name: str, disk_cache: str | None, disk: str | None = None) -> guests.Guest:
    return guests.Guest(
        name,
        "127.0.0.61",
        8765,
        8766,
        "tcg",
        Limits(),
        disk or f"/lab/{name}/disk.img",
        64 << 20,
        "6.1.0",
        5.0,
        4242,
        disk_cache=disk_cache,
    )


@pytest.mark.parametrize(("disk_cache", "marked"), [("writeback", True), ("none", False)])
def test_a_guests_disk_cache_is_in_its_place_and_marks_its_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_cache: str, marked: bool
) -> None:
    """``lab up --disk-cache writeback``: the guest records QEMU's cache mode, a run's place
    on its disk records it with this machine's memory, and the validity check "a cache
    answered" reads it there: a working set that fits is marked; cache=none is not."""
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path))
    guest = _guest("a", disk_cache)
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    assert guests.load("a").disk_cache == disk_cache
    place = Place("lab://a", DISK)
    cache = guest_cache(place)
    assert cache is not None and cache.mode == disk_cache
    assert (cache.size_bytes or 0) > (1 << 20) if marked else cache.size_bytes is None
    assert guest_cache(Place(None, "/dev/loop9")) is None  # not a guest's disk
    target = TargetInfo("lab://a:/dev/vda", "remote", 64 << 20, host_cache=cache)
    work = workload(direct=True, size_bytes=64 << 20)
    run = RunRecord(
        id=3,
        plan="sweep",
        status=RunStatus.COMPLETED,
        started_at="",
        ended_at=None,
        target=TargetInfo("lab://a:/dev/vda", "fleet", 64 << 20),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(places=(PlaceRecord(place.label, "lab://a", DISK, target),)),
        results=(row("read", 2000.0, work),),
        uuid="u-3",
    )
    found = validity_of(run)[(0, "t")]
    assert found.kinds == ((MarkKind.CACHE,) if marked else ())
    if marked:
        assert "QEMU's cache=writeback on the guest's disk" in found.marks[0].evidence[0]


def test_a_guest_recorded_before_its_disk_cache_says_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path))
    guest = _guest("old", None)
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    assert guest_cache(Place("lab://old", DISK)) is None


def test_a_guest_with_a_filesystem_is_written_in_it_not_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lab up --filesystem ext4``: the disk under the mounted filesystem is never
    written (as a mounted device here, whatever --destroy-data says) nor purged; a file
    in the filesystem needs no --force (volbench made it, on its own image) and is known
    by the image, a folder there is refused, a file elsewhere in the guest still needs
    --force; with no --target a run measures a file in it, on half the disk."""
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path))
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * 4096)
    guest = dataclasses.replace(
        _guest("fs", "none", str(image)), filesystem="ext4", mount="/mnt/vda"
    )
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    asked: list[str] = []

    def shell(name: str, command: str) -> str:
        asked.append(command)
        return "folder\n" if "/mnt/vda/dir" in command else "file\n"

    monkeypatch.setattr(lab, "run_in_guest", shell)
    with pytest.raises(UsageError, match="mounted its ext4 filesystem on it at /mnt/vda"):
        check_write(Place("lab://fs", DISK), True, ["lab://fs:/dev/vda"], True)
    assert check_write(Place("lab://fs", DISK), False, [], False) is not None  # reads
    known = check_write(Place("lab://fs", "/mnt/vda/nocache/a.0.0"), True, [], False)
    assert known is not None and known.inode == image.stat().st_ino
    assert known.source == (
        f"lab guest fs, image inode {image.stat().st_ino}, qemu pid 4242,"
        " ext4 file /mnt/vda/nocache/a.0.0"
    )
    assert asked == [
        "mkdir -p /mnt/vda/nocache 2>/dev/null; if [ ! -d /mnt/vda/nocache ]; then echo"
        " no-folder; elif [ -d /mnt/vda/nocache/a.0.0 ]; then echo folder;"
        " elif [ -e /mnt/vda/nocache/a.0.0 ] && [ ! -f /mnt/vda/nocache/a.0.0 ];"
        " then echo other; else echo file; fi"
    ]
    with pytest.raises(UsageError, match="it is a directory"):
        check_write(Place("lab://fs", "/mnt/vda/dir"), True, [], False)
    with pytest.raises(UsageError, match="use --force"):
        check_write(Place("lab://fs", "/mnt/vdax/file"), True, [], False)
    with pytest.raises(UsageError, match="use --force"):
        check_write(Place("lab://fs", "/mnt/vda"), True, [], False)
    assert LAB.default_target("lab://fs") == "/mnt/vda/volbench.dat"
    assert LAB.default_size(Place("lab://fs", "/mnt/vda/volbench.dat")) == 32 << 20
    assert not LAB.can_purge(Place("lab://fs", DISK))
    cache = guest_cache(Place("lab://fs", "/mnt/vda/x"))
    assert cache is not None and cache.mode == "none"
    raw = _guest("raw", "none")
    raw.folder.mkdir(parents=True)
    guests.save(raw)
    assert LAB.can_purge(Place("lab://raw", DISK))
    assert LAB.default_target("lab://raw") == DISK


def test_a_guest_with_a_filesystem_boots_with_its_mount(tmp_path: Path) -> None:
    text = " ".join(qemu_command(dataclasses.replace(launch(tmp_path), filesystem="ext4")))
    assert "volbench.hostname=lab-a-tcg volbench.filesystem=ext4" in text
    assert "volbench.filesystem" not in " ".join(qemu_command(launch(tmp_path)))
    command = qemu_command(dataclasses.replace(launch(tmp_path), memory_mib=2048))
    assert command[command.index("-m") + 1] == "2048"
    assert qemu_command(launch(tmp_path))[command.index("-m") + 1] == "512"
