"""The replay's iolog and its job: offsets mapped onto the target, every value checked."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.fio.iolog import CHUNK_BYTES, map_offset, write_iolog
from volbench.fio.job import JobFile, render
from volbench.fio.job_text import JobValueError, read_job
from volbench.model import RW, StoredWorkload, Workload
from volbench.plans.replay import parse_speed
from volbench.trace.events import IoTrace

MiB = 1 << 20


def _trace() -> IoTrace:
    return IoTrace(
        array("q", [0, 1000, 2_000_000, 3_000_000]),
        array("q", [10, 10, 10, -1]),
        array("q", [0, 200 * MiB, 200 * MiB + 65536, 0]),
        array("q", [512, 65536, 65536, 0]),
        "RWWF",
        4_000_000,
    )


def test_iolog_v3(tmp_path: Path) -> None:
    path = tmp_path / "w.iolog"
    summary = write_iolog(_trace(), "/dev/loop9", 64 * MiB, 4096, path)
    lines = path.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog"
    assert lines[1:3] == ["1 /dev/loop9 add", "1 /dev/loop9 open"]
    assert lines[3] == "1 /dev/loop9 read 0 4096"  # one logical block at least
    _, _, _, first, size = lines[4].split()
    _, _, _, second, _ = lines[5].split()
    assert int(second) - int(first) == 65536  # sequential stays sequential within a chunk
    assert int(first) + int(size) <= 64 * MiB
    assert lines[6] == "3001 /dev/loop9 sync 0 0"
    assert lines[7] == "3001 /dev/loop9 close"
    assert summary.counts == {"read": 1, "write": 2, "trim": 0, "sync": 1}
    assert summary.mapping == "scale"
    assert summary.resized == 1


def test_mapping() -> None:
    assert map_offset(5 * MiB, 4096, 64 * MiB, 10 * MiB, "scale") == 5 * MiB  # fits: as is
    high = 256 * MiB
    assert map_offset(128 * MiB + 8192, 4096, 64 * MiB, high, "scale") == 32 * MiB + 8192
    assert map_offset(100 * MiB, 4096, 64 * MiB, high, "wrap") == 36 * MiB
    assert map_offset(64 * MiB - 4096, 65536, 64 * MiB, high, "wrap") == 0  # would run past
    last = map_offset(high - CHUNK_BYTES, CHUNK_BYTES, 64 * MiB, high, "scale")
    assert last + CHUNK_BYTES <= 64 * MiB


def _replay(iolog: str, **extra: object) -> Workload:
    return Workload(
        "replay", RW.RANDRW, runtime_s=None, time_based=False, read_iolog=iolog, **extra
    )  # type: ignore[arg-type]


def test_replay_job_opens_only_the_target() -> None:
    text = render(
        JobFile("/dev/loop9", (_replay("/tmp/runs/w.iolog", replay_no_stall=True),), "io_uring")
    )
    section = read_job(text)[1]
    assert section.get("read_iolog") == "/tmp/runs/w.iolog"
    assert section.get("replay_redirect") == "/dev/loop9"
    assert section.get("replay_no_stall") == "1"
    speed = render(JobFile("/dev/loop9", (_replay("/tmp/w.iolog", replay_speed_pct=200),), "x"))
    assert read_job(speed)[1].get("replay_time_scale") == "200"


@pytest.mark.parametrize(
    "path", ["/tmp/a:b.iolog", "relative.iolog", "/tmp/a;b", "/tmp/${HOME}", "/tmp/a\nb"]
)
def test_iolog_paths_fio_would_read_otherwise_are_refused(path: str) -> None:
    with pytest.raises(JobValueError):
        render(JobFile("/dev/loop9", (_replay(path),), "io_uring"))


def test_a_target_fio_would_split_cannot_be_replayed_onto() -> None:
    with pytest.raises(JobValueError, match="no ':'"):
        render(JobFile("/dev/disk/by-path/pci-0:1", (_replay("/tmp/w.iolog"),), "io_uring"))


def test_replay_is_not_time_based() -> None:
    workload = Workload("replay", RW.RANDRW, read_iolog="/tmp/w.iolog")
    with pytest.raises(UsageError, match="not time-based"):
        render(JobFile("/dev/loop9", (workload,), "io_uring"))


def test_synthetic_job_splits_per_direction() -> None:
    workload = Workload(
        "synthetic",
        RW.RANDRW,
        bssplit=((4096, 100),),
        write_bssplit=((65536, 60), (8192, 40)),
        rwmixread_pct=70,
        random_pct=100,
        write_random_pct=0,
        random_distribution="zoned:50/5:30/15:15/30:5/50",
    )
    section = read_job(render(JobFile("/dev/loop9", (workload,), "io_uring")))[1]
    assert section.get("bssplit") == "4096/100,65536/60:8192/40"
    assert section.get("percentage_random") == "100,0"
    assert section.get("random_distribution") == "zoned:50/5:30/15:15/30:5/50"
    stored = StoredWorkload.of(workload)
    assert StoredWorkload.from_record(stored.record()) == stored


def test_speed() -> None:
    assert parse_speed("2x") == 200
    assert parse_speed("0.5x") == 50
    assert parse_speed("150%") == 150
    with pytest.raises(UsageError, match="invalid speed"):
        parse_speed("fast")
