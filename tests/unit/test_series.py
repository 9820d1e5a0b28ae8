"""fio's per-second series: read from a round's log folder, packed into the store and
read back exactly as fio wrote them (SQLite always, PostgreSQL when
VOLBENCH_TEST_PG_URL is set)."""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from recorded import FIO_FIXTURES

from volbench.errors import StoreError
from volbench.fio.logs import read_series
from volbench.model import LogSeries, RunSettings
from volbench.store import database, schema
from volbench.store.repository import Store
from volbench.store.series import pack, unpack

LOGS = FIO_FIXTURES / "logs"
EPOCH_MS = 1_795_414_000_000


def _lines(path: Path) -> list[tuple[int, int]]:
    """(time, value) of every line of a fio log, read here without volbench."""
    return [
        (int(fields[0]), int(fields[1]))
        for fields in (line.split(",") for line in path.read_text().splitlines())
    ]


@pytest.mark.parametrize(
    "points",
    [
        [(1000, 501), (2000, 500), (3001, 499)],
        [(EPOCH_MS + 1000 * i, 12_000 + i % 7) for i in range(1, 61)],
        [(1000, 164_939.5), (2000, 0.25), (2999, 1e300)],
        [(5, -3), (4, 2**63 - 1), (4, -(2**63))],  # backwards in time, int64 extremes
        [(1000, 2**64 - 1)],  # fio's u64 beyond int64: kept, as a float
        [],
    ],
)
def test_points_come_back_as_they_went_in(points: list[tuple[int, int | float]]) -> None:
    jobs = [(1, points), (7, [(1000, 3), (2000, 4)]), (2, [])]
    back = unpack(pack(jobs))
    floats = any(type(v) is float or v >= 2**63 for _, v in points)
    expected = [(job, tuple((t, float(v) if floats else v) for t, v in p)) for job, p in jobs]
    assert back == expected
    assert {type(v) for _, p in back for _, v in p} == ({float} if floats else {int})
    assert unpack(pack([])) == []


def test_a_minute_of_one_job_packs_small() -> None:
    points = [(1000 * i + i % 3, 20_000 + (i * 7919) % 1500) for i in range(1, 61)]
    assert len(pack([(1, points)])) < 250  # 60 x 16 bytes unpacked


def test_blobs_it_did_not_make_are_refused() -> None:
    with pytest.raises(StoreError, match="not readable"):
        unpack(b"not zlib")
    with pytest.raises(StoreError, match="format 9"):
        unpack(zlib.compress(b"\x09q\x00\x00\x00\x00"))
    with pytest.raises(StoreError, match="not readable"):  # a job's header is missing
        unpack(zlib.compress(b"\x01q\x01\x00\x00\x00"))
    one_point = b"\x01q\x01\x00\x00\x00" + b"\x01\x00\x00\x00\x01\x00\x00\x00"
    with pytest.raises(StoreError, match="holds 8 bytes for 1 points"):
        unpack(zlib.compress(one_point + b"\x00" * 8))


def test_a_rounds_logs_are_read_as_fio_wrote_them(tmp_path: Path) -> None:
    for path in LOGS.glob("*.log"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "randread-4k_slat.1.log").write_text("")  # a synchronous engine's
    (tmp_path / "t@2_iops.3.log.127.0.0.3").write_text(
        f"{EPOCH_MS + 1000}, 50, 0, 0, 0\n{EPOCH_MS + 1000}, 20, 1, 0, 0\nnot a line\n"
    )
    (tmp_path / "job.fio").write_text("[x]\n")
    found = read_series(tmp_path, 4)
    assert [(s.test, s.kind, s.job, s.host, s.direction) for s in found] == [
        ("randread-4k", "bw", 1, None, "read"),
        ("randread-4k", "bw", 2, None, "read"),
        ("randread-4k", "iops", 1, None, "read"),
        ("randread-4k", "iops", 2, None, "read"),
        ("randread-4k", "lat", 1, None, "read"),
        ("randread-4k", "lat", 2, None, "read"),
        ("t@2", "iops", 3, "127.0.0.3", "read"),
        ("t@2", "iops", 3, "127.0.0.3", "write"),
    ]
    assert all(s.round == 4 for s in found)
    for s in found[:6]:
        assert list(s.points) == _lines(LOGS / f"{s.test}_{s.kind}.{s.job}.log")
    assert found[-1].points == ((EPOCH_MS + 1000, 20),)
    assert read_series(tmp_path / "gone", 0) == []


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store.open(db_url) as opened:
        yield opened


def _series(round_no: int) -> list[LogSeries]:
    """Series in the order the store gives them back: by test, kind, host and direction
    (one row each), jobs in order."""
    return [
        LogSeries(round_no, "randrw", "iops", 1, None, "read", ((1000, 700), (2000, 702))),
        LogSeries(round_no, "randrw", "iops", 2, None, "read", ((1001, 650), (2001, 1))),
        LogSeries(round_no, "randrw", "iops", 1, None, "write", ((1000, 300), (2000, 298))),
        LogSeries(round_no, "randrw@2", "lat", 3, "10.0.0.2", "read", ((EPOCH_MS, 81_000.5),)),
    ]


def _rows(engine: sa.Engine) -> list[tuple[object, ...]]:
    table = schema.series
    query = sa.select(
        table.c.run_id, table.c.round, table.c.test, table.c.direction, table.c.samples
    ).order_by(table.c.id)
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def test_series_are_stored_with_their_round(db_url: str, store: Store) -> None:
    run_id = store.create_run("quick", {"path": "/dev/vdb"}, {}, {}, RunSettings())
    store.add_round(run_id, 0, "{}", [], {}, series=_series(0))
    store.add_round(run_id, 1, "{}", [], {}, series=_series(1)[:1])
    store.add_round(run_id, 2, "{}", [], {})
    assert store.get_run(run_id).series == (*_series(0), *_series(1)[:1])
    engine = database.connect(db_url)
    try:  # one row per test, kind, host and direction: both jobs' reads in one
        assert _rows(engine) == [
            (run_id, 0, "randrw", "read", 4),
            (run_id, 0, "randrw", "write", 2),
            (run_id, 0, "randrw@2", "read", 1),
            (run_id, 1, "randrw", "read", 2),
        ]
    finally:
        engine.dispose()
    assert store.get_run(run_id, raw=False).series == ()
    with pytest.raises(ValueError, match="another round"):
        store.add_round(run_id, 3, "{}", [], {}, series=_series(4))
    assert store.round_count(run_id) == 3  # nothing of round 3 was stored


def test_a_round_that_cannot_be_stored_leaves_no_series(store: Store) -> None:
    run_id = store.create_run("quick", {"path": "/dev/vdb"}, {}, {}, RunSettings())
    store.add_round(run_id, 0, "{}", [], {}, series=_series(0))
    with pytest.raises(StoreError, match="already stored"):
        store.add_round(run_id, 0, "{}", [], {}, series=_series(0))
    assert store.get_run(run_id).series == tuple(_series(0))


def test_deleting_a_run_deletes_its_series(db_url: str, store: Store) -> None:
    kept = store.create_run("quick", {"path": "/dev/vdb"}, {}, {}, RunSettings())
    store.add_round(kept, 0, "{}", [], {}, series=_series(0))
    gone = store.create_run("quick", {"path": "/dev/vdc"}, {}, {}, RunSettings())
    store.add_round(gone, 0, "{}", [], {}, series=_series(0))
    store.delete_run(gone)
    engine = database.connect(db_url)
    try:
        with engine.connect() as conn:
            runs = conn.execute(sa.select(schema.series.c.run_id).distinct()).scalars().all()
    finally:
        engine.dispose()
    assert runs == [kept]
