"""lab://NAME as a place: its name, its default target /dev/vda, which needs no
--destroy-data, and the qemu command line that makes the guest."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab.machine import Launch, qemu_command
from volbench.lab.throttle import Bucket, Limits
from volbench.model import Place
from volbench.places import lab
from volbench.places.lab import DISK, LAB, lab_address, lab_name
from volbench.places.table import check_write, host_name, kind_of
from volbench.plans.places import places_from


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


def test_the_guest_disk_needs_no_destroy_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab, "guest_disk", lambda place: None)  # no guest here
    assert check_write(Place("lab://a", DISK), True, [], False) is None
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
        folder, folder / "vmlinuz", folder / "initramfs.cpio", folder / "disk.img", direct,
        "127.0.0.60", 8765, 8766, limits, "tcg", "lab-a-tcg",
    )  # fmt: skip


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
