"""A lab guest's qemu is found by its pidfile and signalled only when
/proc/PID/cmdline shows it is that guest's qemu; records round-trip."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab import guest as guests
from volbench.lab import lifecycle
from volbench.lab.machine import Launch
from volbench.lab.throttle import Bucket, Limits


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    return tmp_path / "lab"


@pytest.fixture
def fake_qemu(lab: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A process whose command line is a guest's qemu's (python, named qemu-system-x86_64)."""
    folder = lab / "guests" / "g1"
    folder.mkdir(parents=True)
    proc = subprocess.Popen(
        [
            "qemu-system-x86_64",
            "-c",
            "import time; time.sleep(60)",
            "-pidfile",
            str(folder / guests.PIDFILE),
        ],
        executable=sys.executable,
    )
    (folder / guests.PIDFILE).write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + 10
    while not guests.command_line(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)  # the arguments show once the exec is through
    try:
        yield proc, folder
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_is_guest_qemu(tmp_path: Path) -> None:
    pidfile = str(tmp_path / "qemu.pid")
    assert guests.is_guest_qemu(["/usr/bin/qemu-system-x86_64", "-pidfile", pidfile], tmp_path)
    assert not guests.is_guest_qemu(["/usr/bin/qemu-system-x86_64", "-pidfile", "/x"], tmp_path)
    assert not guests.is_guest_qemu(["sleep", "-pidfile", pidfile], tmp_path)
    assert not guests.is_guest_qemu([], tmp_path)


def test_a_pidfile_naming_another_process_is_left_alone(lab: Path) -> None:
    folder = lab / "guests" / "g2"
    folder.mkdir(parents=True)
    (folder / guests.PIDFILE).write_text(str(os.getpid()))
    assert guests.recorded_pid(folder) == os.getpid()
    assert guests.running_pid(folder) is None
    guests.stop(os.getpid(), folder)  # not a qemu of this guest: no signal
    assert lifecycle.down("g2") is False
    assert not folder.exists()


def test_down_stops_the_guests_qemu(fake_qemu: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, folder = fake_qemu
    assert guests.running_pid(folder) == proc.pid
    assert [row.state for row in lifecycle.listing()] == ["booting"]
    assert lifecycle.down("g1") is True
    assert proc.wait(timeout=5) != 0
    assert not folder.exists()
    assert not guests.exists(proc.pid)


def test_record_round_trip(lab: Path) -> None:
    limits = Limits(iops_total=Bucket(1000, 3000, 10), iops_size=262144)
    guest = guests.Guest(
        "g3", "127.0.0.60", 8765, 8766, "tcg", limits, str(lab / "d"), 1 << 30, "6.1", 5.5, 1
    )
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    assert guests.load("g3") == guest
    assert guest.place == "lab://g3"
    assert [(row.name, row.state, row.limits) for row in lifecycle.listing()] == [
        ("g3", "dead", limits.text())
    ]
    with pytest.raises(UsageError, match="lab up nope"):
        guests.load("nope")
    with pytest.raises(UsageError, match="invalid guest name"):
        guests.load("../x")
    assert lifecycle.down_all() == ["g3"]


def test_accelerators(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lifecycle.accelerators("tcg") == ["tcg"]
    monkeypatch.setattr(lifecycle.os, "access", lambda path, mode: True)
    assert lifecycle.accelerators("auto") == ["kvm", "tcg"]
    lab.mkdir()
    lifecycle._remember_tcg()
    assert lifecycle.accelerators("auto") == ["tcg"]
    monkeypatch.setattr(lifecycle.os, "access", lambda path, mode: False)
    (lab / "accel.json").unlink()
    assert lifecycle.accelerators("auto") == ["tcg"]


def test_a_forwarded_port_taken_meanwhile_boots_on_another_address(
    lab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two lab folders (two VOLBENCH_LAB_DIRs) choose an address at once: the one
    whose qemu finds its port taken boots on the next free address."""
    folder = lab / "guests" / "g1"
    folder.mkdir(parents=True)
    tried: list[str] = []

    def boot(launch: Launch, timeout_s: float) -> tuple[None, float]:
        tried.append(launch.address)
        if len(tried) == 1:
            raise UsageError(
                "qemu ended during the boot: qemu-system-x86_64: -netdev user: Could not set"
                f" up host forwarding rule 'tcp:{launch.address}:8766-10.0.2.15:8766'"
            )
        return None, 1.0

    monkeypatch.setattr(lifecycle, "_boot", boot)
    monkeypatch.setattr(lifecycle, "_free", lambda address: True)
    first = lifecycle._reserve(folder)
    launch = Launch(
        folder,
        Path("k"),
        Path("i"),
        Path("d"),
        True,
        first,
        8765,
        8766,
        Limits(),
        "tcg",
        "lab-g1-tcg",
    )
    booted, address = lifecycle._boot_on_a_free_address(launch, 1.0)
    assert booted == (None, 1.0)
    assert tried == [first, address] and address != first
    assert (folder / "address").read_text() == address


def test_another_boot_failure_is_not_retried(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = lab / "guests" / "g1"
    folder.mkdir(parents=True)

    def boot(launch: Launch, timeout_s: float) -> None:
        raise UsageError("qemu ended during the boot: no message")

    monkeypatch.setattr(lifecycle, "_boot", boot)
    launch = Launch(
        folder,
        Path("k"),
        Path("i"),
        Path("d"),
        True,
        "127.0.0.60",
        8765,
        8766,
        Limits(),
        "tcg",
        "lab-g1-tcg",
    )
    with pytest.raises(UsageError, match="no message"):
        lifecycle._boot_on_a_free_address(launch, 1.0)
