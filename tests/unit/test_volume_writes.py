"""What was written on a run's volume, from a real SQLite store (volume_writes.py): the
runs on the same place (``lab://NAME:/dev/vda``, as ``--hosts lab://NAME`` records it)
count, another place's do not, and a PTS run's deallocating purge un-writes it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from volbench.analysis.validity_unwritten import run_marks
from volbench.lab import guest as guests
from volbench.lab.throttle import Limits
from volbench.model import (
    RW,
    DirectionResult,
    Place,
    PlaceRecord,
    RunSettings,
    StoredWorkload,
    TargetIdentity,
    TargetInfo,
    Workload,
)
from volbench.model import TestResult as Result  # not "Test*": pytest would collect it
from volbench.places.lab import guest_disk
from volbench.plans.pts.options import NAME as PTS
from volbench.plans.pts.options import PtsOptions, PtsSetup
from volbench.records import json_object
from volbench.store.repository import Store
from volbench.units import MiB
from volbench.volume_writes import volume_history

DISK = 256 * MiB


def _run(
    store: Store,
    guest: str,
    tests: list[tuple[Workload, int]],
    plan: str = "quick",
    options: dict[str, object] | None = None,
    boot: int = 1,
) -> int:
    """A stored run on the lab guest ``guest``'s disk (as it was after its ``boot``th
    ``volbench lab up``), each test a round of its own with fio's ``io_bytes`` as given."""
    label = f"lab://{guest}:/dev/vda"
    source = f"lab guest {guest}, image inode 12, qemu pid {1000 + boot}"
    disk = TargetIdentity(f"/lab/{guest}/disk.img", "file", "8:1", DISK, 12, source=source)
    target = TargetInfo(label, "remote", DISK, identity=disk)
    settings = RunSettings(
        places=(PlaceRecord(label, f"lab://{guest}", "/dev/vda", target),),
        options=options or {},
    )
    run_id = store.create_run(plan, TargetInfo(label, "fleet", DISK), {}, {}, settings)
    for round_no, (work, io_bytes) in enumerate(tests):
        direction = "write" if work.rw.writes else "read"
        done = DirectionResult(direction, io_bytes, 1000.0, 1.0, io_bytes, io_bytes // 4096, None)
        test = Result(work.name, {direction: done}, 0.0, 0.0, 1000.0, 1)
        store.add_round(run_id, round_no, "{}", [test], {work.name: StoredWorkload.of(work)})
    return run_id


def _marked(store: Store, run_id: int) -> list[str]:
    run = store.get_run(run_id, raw=False)
    return [test for _, test in run_marks(run, volume_history(store, run))]


READ = Workload("randread", RW.RANDREAD)
FILL = Workload("fill", RW.WRITE, bs_bytes=128 * 1024, time_based=False, runtime_s=None)


def test_runs_on_the_same_guest_disk_count_others_do_not(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "v.db")) as store:
        first = _run(store, "g1", [(READ, 64 * MiB)])
        _run(store, "g1", [(FILL, DISK)])
        again = _run(store, "g1", [(READ, 64 * MiB)])
        other = _run(store, "g2", [(READ, 64 * MiB)])
        assert _marked(store, first) == ["randread"]  # nothing wrote it before
        assert _marked(store, again) == []  # the fill of the run before
        assert _marked(store, other) == ["randread"]  # another guest's disk
        history = volume_history(store, store.get_run(again))
        assert history is not None and [w.run_id for w in history] == [1, 2, 3]


def test_a_run_on_two_guests_at_once_is_not_judged(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "v.db")) as store:
        one = _run(store, "g1", [(READ, 64 * MiB)])
        run = store.get_run(one, raw=False)
        both = dataclasses.replace(
            run.settings, places=(*run.settings.places, PlaceRecord("lab://g2:/dev/vda"))
        )
        two = dataclasses.replace(run, settings=both)
        assert volume_history(store, two) is None  # which guest's writes would count?
        assert run_marks(two, None) == {}
        assert _marked(store, one) == ["randread"]  # the control: one guest, judged


@pytest.mark.parametrize(
    ("method", "marked"),
    [
        ("lab image deallocated (fallocate --punch-hole)", ["randread"]),
        ("discard (blkdiscard)", ["randread"]),
        ("zero fill (blkdiscard --zeroout)", []),  # the control: it writes every block
        ("none (--no-purge)", []),
    ],
)
def test_a_pts_purge_of_the_guest_disk_unwrites_it(
    tmp_path: Path, method: str, marked: list[str]
) -> None:
    setup = PtsSetup(PtsOptions(tests=("iops",)), DISK, purge_method=method)
    with Store.open(str(tmp_path / "v.db")) as store:
        _run(store, "g1", [(FILL, DISK)])
        _run(store, "g1", [], plan=PTS, options=json_object(setup))
        after = _run(store, "g1", [(READ, 64 * MiB)])
        assert _marked(store, after) == marked


def test_a_guest_made_anew_is_another_disk(tmp_path: Path) -> None:
    """``volbench lab up`` makes a guest's disk anew: what the guest of the same name
    wrote before is not on it."""
    with Store.open(str(tmp_path / "v.db")) as store:
        _run(store, "g1", [(FILL, DISK)], boot=1)
        same = _run(store, "g1", [(READ, 64 * MiB)], boot=1)
        anew = _run(store, "g1", [(READ, 64 * MiB)], boot=2)
        assert _marked(store, same) == []
        assert _marked(store, anew) == ["randread"]


def test_a_lab_guest_s_disk_is_named_by_its_image_and_qemu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What prepare_fleet records of a ``--hosts lab://NAME`` place's disk: its image's
    identity on this machine and the guest's qemu (a new one each ``lab up``); no other
    place has one."""
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    image = tmp_path / "disk.img"
    image.write_bytes(b"")
    guest = guests.Guest(
        "g1", "127.0.0.60", 8765, 8766, "tcg", Limits(), str(image), DISK, "6.1", 3.0, 4321
    )
    guest.folder.mkdir(parents=True)
    guests.save(guest)
    found = guest_disk(Place("lab://g1", "/dev/vda"))
    assert found is not None and found.inode == image.stat().st_ino
    assert found.source == f"lab guest g1, image inode {found.inode}, qemu pid 4321"
    assert guest_disk(Place("lab://g1", "/dev/vdb")) is None  # not the guest's own disk
    assert guest_disk(Place("ssh://h", "/dev/vda")) is None
