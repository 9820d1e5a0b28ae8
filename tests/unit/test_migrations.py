"""Schema versions: old databases are upgraded with their data, newer ones refused.

Runs on SQLite always and on PostgreSQL when VOLBENCH_TEST_PG_URL is set (each
PostgreSQL test in its own scratch database).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from volbench.errors import StoreError
from volbench.model import RunStatus, Stall
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
    assert [row.version for row in versions] == [1, 2, 3, 4]
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
        newer = store.create_run("quick", {"path": "/dev/vdc"}, {}, {"vendor": "acme"}, {})
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
    assert run.target["capacity_bytes"] == 10**11
    assert run.raw_outputs == ('{"fio version": "fio-3.28"}',)
    (result,) = run.results
    assert (result.test, result.iops, result.lat_p99_ns, result.lat_p50_ns) == (
        "randread-4k",
        12345.5,
        250000.0,
        None,
    )
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
