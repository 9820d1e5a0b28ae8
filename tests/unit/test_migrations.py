"""Schema versions: old databases are upgraded with their data, newer ones refused.

Runs on SQLite always and on PostgreSQL when VOLBENCH_TEST_PG_URL is set (each
PostgreSQL test in its own scratch database).
"""

from __future__ import annotations

import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from recorded import FIO_FIXTURES
from sqlalchemy.engine import Connection

from volbench.errors import StoreError
from volbench.fio.logs import read_series
from volbench.model import RunSettings, RunStatus, Stall
from volbench.store import database, migrations, schema
from volbench.store.repository import Store


@contextmanager
def engine_for(url: str) -> Iterator[sa.Engine]:
    engine = database.connect(url)
    try:
        yield engine
    finally:
        engine.dispose()


def _version(url: str) -> int:
    with engine_for(url) as engine, engine.connect() as conn:
        return migrations.current_version(conn)


def _indexes(conn: Connection, table: str) -> set[str]:
    return {str(ix["name"]) for ix in sa.inspect(conn).get_indexes(table)}


def test_migrations_are_numbered_one_by_one() -> None:
    assert [m.version for m in migrations.MIGRATIONS] == list(
        range(1, len(migrations.MIGRATIONS) + 1)
    )
    assert migrations.LATEST_VERSION == len(migrations.MIGRATIONS) >= 3


def test_a_new_database_matches_the_schema_module(db_url: str) -> None:
    Store.open(db_url).close()
    with engine_for(db_url) as engine, engine.connect() as conn:
        inspector = sa.inspect(conn)
        assert set(inspector.get_table_names()) == set(schema.metadata.tables)
        for table in schema.metadata.sorted_tables:
            columns = {c["name"] for c in inspector.get_columns(table.name)}
            assert columns == set(table.c.keys()), table.name
            assert _indexes(conn, table.name) == {str(ix.name) for ix in table.indexes}
            for fk in inspector.get_foreign_keys(table.name):
                assert fk["options"].get("ondelete", "").upper() == "CASCADE", table.name
        versions = conn.execute(sa.select(schema.schema_version)).all()
    assert [row.version for row in versions] == list(range(1, migrations.LATEST_VERSION + 1))
    assert _version(db_url) == migrations.LATEST_VERSION


def _fill_version_1(conn: Connection) -> None:
    """One run with a label, a round and a result, written as version 1 knew them."""
    tables = sa.MetaData()
    tables.reflect(conn)
    runs, labels, rounds, results = (
        tables.tables[name] for name in ("runs", "labels", "rounds", "results")
    )
    conn.execute(
        runs.insert().values(
            id=1,
            plan="quick",
            status="completed",
            started_at="2023-05-01T10:00:00+00:00",
            ended_at="2023-05-01T10:05:00+00:00",
            target={"path": "/dev/vdb", "kind": "block", "capacity_bytes": 10**11},
            host={"hostname": "old-host"},
            settings={"plan": "quick"},
            error=None,
            non_compliant=False,
        )
    )
    conn.execute(labels.insert().values(run_id=1, key="vendor", value="acme"))
    conn.execute(
        rounds.insert().values(
            run_id=1, round=1, raw_json='{"fio version": "fio-3.28"}', committed_at="x"
        )
    )
    conn.execute(
        results.insert().values(
            run_id=1,
            round=1,
            test="randread-4k",
            direction="read",
            workload={"rw": "randread"},
            iops=12345.5,
            bw_bytes_per_s=12345.5 * 4096,
            io_bytes=4096 * 740730,
            runtime_ms=60000.0,
            lat_kind="clat",
            lat_mean_ns=81000.25,
            lat_p99_ns=250000.0,
            usr_cpu_pct=3.0,
            sys_cpu_pct=9.0,
            jobs=4,
        )
    )
    if conn.dialect.name == "postgresql":  # explicit ids leave the sequence behind
        conn.exec_driver_sql("SELECT setval('runs_id_seq', 1)")


def test_a_version_1_database_is_upgraded_with_its_data(db_url: str) -> None:
    with engine_for(db_url) as engine:
        assert migrations.upgrade(engine, target=1) == 1
        with engine.begin() as conn:
            _fill_version_1(conn)
            assert "ix_runs_started_at" not in _indexes(conn, "runs")
            assert not sa.inspect(conn).has_table("stalls")
    assert _version(db_url) == 1

    with Store.open(db_url) as store:
        run = store.get_run("latest")
        newer = store.create_run(
            "quick", {"path": "/dev/vdc"}, {}, {"vendor": "acme"}, RunSettings()
        )
        stall = Stall(
            0, "randread-4k", "2023-05-01T10:01:00+00:00", "2023-05-01T10:01:07+00:00", 7.0, True
        )
        store.add_stalls(1, [stall])
        assert store.get_run(1).stalls == (stall,)
    assert run.stalls == ()

    assert _version(db_url) == migrations.LATEST_VERSION
    with engine_for(db_url) as engine, engine.connect() as conn:
        assert "ix_runs_started_at" in _indexes(conn, "runs")
    assert (run.id, run.plan, run.status) == (1, "quick", RunStatus.COMPLETED)
    assert run.labels == {"vendor": "acme"}
    assert run.target.capacity_bytes == 10**11
    assert run.raw_outputs == ('{"fio version": "fio-3.28"}',)
    (result,) = run.results
    assert (result.test, result.iops, result.lat_p99_ns, result.lat_p50_ns) == (
        "randread-4k",
        12345.5,
        250000.0,
        None,
    )
    assert result.error is None  # fio's job error: not recorded before version 9
    assert newer == 2


def test_a_newer_database_is_refused(db_url: str) -> None:
    with Store.open(db_url) as store:
        shown = store.url
    newer = migrations.LATEST_VERSION + 1
    with engine_for(db_url) as engine, engine.begin() as conn:
        conn.execute(
            schema.schema_version.insert().values(
                version=newer, description="from the future", applied_at="2099-01-01"
            )
        )
    with pytest.raises(StoreError) as caught:
        Store.open(db_url)
    assert str(caught.value) == (
        f"database {shown} has schema version {newer}, this volbench knows up to"
        f" {migrations.LATEST_VERSION}: upgrade volbench"
    )


def test_a_failing_step_leaves_the_database_as_it_was(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with engine_for(db_url) as engine:
        migrations.upgrade(engine, target=1)

    def half_done(conn: Connection) -> None:
        conn.exec_driver_sql("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("the last step broke")

    last = migrations.LATEST_VERSION + 1
    broken = (*migrations.MIGRATIONS, migrations.Migration(last, "broken", half_done))
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    monkeypatch.setattr(migrations, "LATEST_VERSION", last)
    with pytest.raises(RuntimeError, match="the last step broke"):
        Store.open(db_url)

    assert _version(db_url) == 1  # the steps before were rolled back with the last
    with engine_for(db_url) as engine, engine.connect() as conn:
        assert not sa.inspect(conn).has_table("half_done")
        assert "ix_runs_started_at" not in _indexes(conn, "runs")


def test_foreign_tables_named_runs_are_not_taken_for_a_store(db_url: str) -> None:
    with engine_for(db_url) as engine, engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE runs (id INTEGER PRIMARY KEY)")
    with pytest.raises(StoreError, match="not a volbench result store"):
        Store.open(db_url)


def test_upgrade_refuses_unknown_targets(db_url: str) -> None:
    with engine_for(db_url) as engine, pytest.raises(ValueError, match="schema version 99"):
        migrations.upgrade(engine, target=99)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


def _logs(folder: Path, *names: str, output: str | None = None, mtime: float | None = None) -> Path:
    """fio's recorded logs of ``randread-4k`` in ``folder`` under each of ``names``
    (file names with ``{kind}`` and ``{job}``), with fio's output beside them."""
    folder.mkdir(parents=True)
    for source in (FIO_FIXTURES / "logs").glob("randread-4k_*.log"):
        kind, job = source.name.removeprefix("randread-4k_").split(".")[:2]
        for name in names:
            path = folder / name.format(kind=kind, job=job)
            shutil.copy(source, path)
            if mtime is not None:
                os.utime(path, (mtime, mtime))
    if output is not None:
        (folder / "fio-output.json").write_text(output)
    return folder


def test_version_5_stores_the_series_of_runs_whose_folders_are_still_there(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of a version 4 store: the logs of a run's recorded folder and of a run in the
    old layout (runs/ID, made on this host while the run ran) are stored with their
    rounds; a folder of the old layout written at another time, or on another host, a
    kept fio output that is not the round's, a log of a test the round did not store,
    and a run whose folder is gone give no series."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    old = tmp_path / "data" / "volbench" / "runs"
    here = socket.gethostname()
    started = datetime.now(UTC).timestamp() - 60
    with engine_for(db_url) as engine:
        migrations.upgrade(engine, target=4)
        tables = sa.MetaData()
        with engine.begin() as conn:
            tables.reflect(conn)
            runs, rounds, results = (tables.tables[n] for n in ("runs", "rounds", "results"))
            layouts = {
                1: ({}, here, "randread-4k"),  # old layout, this host, written during the run
                2: ({"logs_dir": str(tmp_path / "own")}, "elsewhere", "t"),  # recorded folder
                3: ({}, here, "randread-4k"),  # old layout, written a year before
                4: ({}, here, "randread-4k"),  # no folder
                5: ({"logs_dir": str(tmp_path / "other")}, here, "randread-4k"),  # not its output
                6: ({}, "another-host", "randread-4k"),  # old layout, made on another host
            }
            for run_id, (settings, host, test) in layouts.items():
                conn.execute(
                    runs.insert().values(
                        id=run_id,
                        plan="quick",
                        status="completed",
                        started_at=_iso(started),
                        target={"path": "/dev/vdb"},
                        host={"hostname": host},
                        settings={"plan": "quick", **settings},
                        non_compliant=False,
                    )
                )
                conn.execute(
                    rounds.insert().values(
                        run_id=run_id,
                        round=0,
                        raw_json=f"output {run_id}",
                        committed_at=_iso(started + 59),
                    )
                )
                conn.execute(
                    results.insert().values(
                        run_id=run_id,
                        round=0,
                        test=test,
                        direction="read",
                        workload={},
                        iops=1.0,
                        bw_bytes_per_s=1.0,
                        io_bytes=1,
                        runtime_ms=1.0,
                        usr_cpu_pct=0.0,
                        sys_cpu_pct=0.0,
                        jobs=1,
                    )
                )
    during = started + 30
    first = _logs(
        old / "1" / "round-000",
        "randread-4k_{kind}.{job}.log",
        "randread-4k-other_{kind}.{job}.log",
        mtime=during,
    )
    own = _logs(tmp_path / "own" / "round-000", "t@1_{kind}.{job}.log.10.0.0.2", output="output 2")
    _logs(old / "3" / "round-000", "randread-4k_{kind}.{job}.log", mtime=started - 365 * 86400)
    _logs(tmp_path / "other" / "round-000", "randread-4k_{kind}.{job}.log", output="output 9")
    _logs(old / "6" / "round-000", "randread-4k_{kind}.{job}.log", mtime=during)

    with Store.open(db_url) as store:
        found = {run_id: store.get_run(run_id).series for run_id in layouts}
    assert found[1] == tuple(s for s in read_series(first, 0) if s.test == "randread-4k")
    assert len(found[1]) == 6  # iops, bw, lat of fio's two jobs
    assert found[2] == tuple(read_series(own, 0))
    assert {(s.test, s.host) for s in found[2]} == {("t@1", "10.0.0.2")}
    assert found[3] == found[4] == found[5] == found[6] == ()


def test_version_6_gives_every_stored_run_a_uuid_of_its_own(db_url: str) -> None:
    """Runs of a version 5 store get a fresh random UUID each (unique, NOT NULL on
    PostgreSQL); runs made afterwards get one too."""
    with engine_for(db_url) as engine:
        migrations.upgrade(engine, target=5)
        tables = sa.MetaData()
        with engine.begin() as conn:
            tables.reflect(conn)
            for run_id in (1, 2, 3):
                conn.execute(
                    tables.tables["runs"]
                    .insert()
                    .values(
                        id=run_id,
                        plan="quick",
                        status="completed",
                        started_at="2023-05-01T10:00:00+00:00",
                        target={},
                        host={},
                        settings={},
                        non_compliant=False,
                    )
                )
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql("SELECT setval('runs_id_seq', 3)")
    with Store.open(db_url) as store:
        old = [store.get_run(run_id).uuid for run_id in (1, 2, 3)]
        new = store.get_run(store.create_run("quick", {}, {}, {}, RunSettings())).uuid
    found = [*old, new]
    assert all(str(uuid.UUID(u)) == u and uuid.UUID(u).version == 4 for u in found), found
    assert len(set(found)) == 4
    with engine_for(db_url) as engine:
        with engine.connect() as conn:
            indexes = {ix["name"]: ix for ix in sa.inspect(conn).get_indexes("runs")}
            columns = {c["name"]: c for c in sa.inspect(conn).get_columns("runs")}
        assert indexes["ix_runs_uuid"]["unique"]
        assert columns["uuid"]["nullable"] == (engine.dialect.name == "sqlite")
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(schema.runs.update().where(schema.runs.c.id == 2).values(uuid=old[0]))
