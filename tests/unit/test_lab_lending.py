"""A guest's own limits while ``qos verify`` holds others on it: recorded before the
verification changes them, given back when it ends, and, when it was killed
(SIGKILL: its ``finally`` never ran), by the next volbench that finds it gone. The
QMP socket under :func:`volbench.lab.monitor.set_limits` is replaced by a recorder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from volbench.lab import guest as guests
from volbench.lab import monitor
from volbench.lab.promise import LimitChoice
from volbench.lab.throttle import Bucket, HandLimits, Limits
from volbench.store.owner import Owner, current

OWN = Limits(iops_total=Bucket(100_000))
PLANNED = Limits(iops_read=Bucket(200), iops_write=Bucket(200))


@pytest.fixture
def qmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Guest ``g40`` recorded with its own limits, its qemu taken as running; the
    limits each QMP ``qom-set`` would give it, in order."""
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    guest = guests.Guest(
        "g40", "127.0.0.61", 8765, 8766, "tcg", OWN, str(tmp_path / "d.img"), 1 << 27, "6.1", 5.3, 1
    )
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    sent: list[dict[str, Any]] = []

    def execute(socket: Path, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        assert command == "qom-set"
        sent.append(arguments["value"])
        return {}

    monkeypatch.setattr(monitor, "execute", execute)
    monkeypatch.setattr(guests, "running_pid", lambda folder: 1)
    return sent


def test_a_verification_gives_the_guest_its_own_limits_back(qmp: list[dict[str, Any]]) -> None:
    monitor.lend("g40")
    monitor.set_limits("g40", PLANNED)
    monitor.set_limits("g40", Limits())  # the alpha fit: none
    assert guests.load("g40").lent == guests.Lent(OWN, current().text())
    assert monitor.reclaim() == []  # its holder, this process, lives
    assert monitor.give_back("g40") == OWN
    assert guests.load("g40").limits == OWN and guests.load("g40").lent is None
    assert qmp[-1] == OWN.every_property()


def test_a_killed_verifications_guest_gets_its_own_back_from_the_next_volbench(
    qmp: list[dict[str, Any]],
) -> None:
    here = current()
    gone = Owner(here.host, here.boot_id, here.pid, here.start_ticks + 1)  # a reused pid
    guest = guests.load("g40")
    guests.save(
        guests.Guest(**{**vars(guest), "limits": Limits(), "lent": guests.Lent(OWN, gone.text())})
    )
    (line,) = monitor.reclaim()
    assert line.startswith("lab://g40: its own limits given back (iops-total 100,000)")
    assert f"pid {here.pid} on {here.host}, which had changed them, is gone" in line
    assert guests.load("g40").limits == OWN and guests.load("g40").lent is None
    assert qmp == [OWN.every_property()]
    assert monitor.reclaim() == []  # once


def test_limits_the_user_sets_are_the_guests_own(qmp: list[dict[str, Any]]) -> None:
    """``lab limit`` during (or after) a verification: the user's figures are the
    guest's own, not given back over later."""
    monitor.lend("g40")
    monitor.set_limits("g40", PLANNED)
    changed = monitor.change_limits("g40", LimitChoice(HandLimits(iops_total=500)))
    assert changed.limits == Limits(iops_total=Bucket(500)) and changed.lent is None
    assert monitor.give_back("g40") is None
    assert guests.load("g40").limits == Limits(iops_total=Bucket(500))
