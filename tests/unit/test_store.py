"""The result store on SQLite (always) and PostgreSQL (when VOLBENCH_TEST_PG_URL is set).

Each PostgreSQL test gets its own scratch database, created and dropped here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from volbench.errors import StoreError
from volbench.model import (
    DirectionResult,
    HostInfo,
    LatencyStats,
    RunSettings,
    RunStatus,
    StoredWorkload,
    TargetInfo,
)
from volbench.model import TestResult as Result  # not "Test*": pytest would collect it
from volbench.store import database, schema
from volbench.store.repository import Store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store.open(db_url) as opened:
        yield opened


TARGET = TargetInfo(path="/dev/vdb", kind="block", capacity_bytes=100 * 2**30, model="ACME")
HOST = HostInfo(
    hostname="bench1",
    cpu_count=8,
    cpu_model="Xeon",
    memory_bytes=32 * 2**30,
    kernel="6.1.0",
    fio_version="fio-3.33",
)
SETTINGS = RunSettings(ioengine="libaio", options={"quick": {"runtime_s": 60, "bs": [4096, 16384]}})
RAW = '{\r\n  "fio version" : "fio-3.33",\n  "jobs": [ ],  "x": 1.0000000000000002,\n "ü": "✓"}\n '


def _latency(mean_ns: float) -> LatencyStats:
    return LatencyStats(
        kind="clat",
        min_ns=mean_ns / 3,
        max_ns=mean_ns * 41.5,
        mean_ns=mean_ns,
        stddev_ns=mean_ns / 7,
        samples=123456,
        percentiles_ns={
            1.0: 1.0,
            50.0: mean_ns * 0.9,
            90.0: mean_ns * 1.7,
            99.0: mean_ns * 3.1,
            99.9: mean_ns * 9.3,
            99.99: mean_ns * 20.7,
            99.999: mean_ns * 40.1,
        },
        bins={1000: 3, 2000: 5},
    )


def _direction(name: str, iops: float, latency: LatencyStats | None) -> DirectionResult:
    return DirectionResult(
        direction=name,
        io_bytes=int(iops * 4096 * 60),
        runtime_ms=60001.0,
        iops=iops,
        bw_bytes_per_s=iops * 4096,
        total_ios=int(iops * 60),
        latency=latency,
    )


def _tests(scale: float = 1.0) -> list[Result]:
    """Two tests: random read only (trim idle), and a mix (write without latency)."""
    idle_trim = DirectionResult("trim", 0, 0.0, 0.0, 0.0, 0, None)
    return [
        Result(
            name="randread-4k",
            directions={
                "read": _direction("read", 12345.678901234 * scale, _latency(81234.56789)),
                "write": DirectionResult("write", 0, 0.0, 0.0, 0.0, 0, None),
                "trim": idle_trim,
            },
            usr_cpu_pct=3.14159,
            sys_cpu_pct=12.5,
            runtime_ms=60001.0,
            jobs=4,
        ),
        Result(
            name="randrw-16k",
            directions={
                "read": _direction("read", 700.25 * scale, _latency(1.5e6)),
                "write": _direction("write", 300.75 * scale, None),
            },
            usr_cpu_pct=1.0,
            sys_cpu_pct=2.0,
            runtime_ms=60002.0,
            jobs=1,
            hostname="127.0.0.2",
        ),
    ]


WORKLOADS = {
    "randread-4k": StoredWorkload(rw="randread", bs_bytes=4096, iodepth=32, numjobs=4),
    "randrw-16k": StoredWorkload(rw="randrw", bs_bytes=16384, rwmixread_pct=70),
}


def _new_run(store: Store, labels: dict[str, str] | None = None, plan: str = "quick") -> int:
    return store.create_run(plan, TARGET, HOST, labels or {}, SETTINGS)


def test_round_trip_of_a_run_with_two_rounds_and_labels(store: Store) -> None:
    labels = {"vendor": "acme", "size": "100g"}
    run_id = store.create_run("quick", TARGET, HOST, labels, SETTINGS, non_compliant=True)
    store.add_round(run_id, 1, RAW, _tests(), WORKLOADS)
    store.add_round(run_id, 2, '{"round": 2}', _tests(2.0), WORKLOADS)
    store.finish_run(run_id, RunStatus.COMPLETED)

    run = store.get_run(str(run_id))

    assert run.id == run_id
    assert run.plan == "quick"
    assert run.status is RunStatus.COMPLETED
    assert run.labels == labels
    assert run.target == TARGET
    assert run.host == HOST
    assert run.settings == SETTINGS
    assert run.error is None
    assert run.started_at.endswith("+00:00")
    assert run.ended_at is not None and run.ended_at >= run.started_at
    assert run.raw_outputs == (RAW, '{"round": 2}')
    order = [(r.round, r.test, r.direction) for r in run.results]
    one_round = [("randread-4k", "read"), ("randrw-16k", "read"), ("randrw-16k", "write")]
    assert order == [(n, t, d) for n in (1, 2) for t, d in one_round]


def test_results_without_raw_outputs_and_the_round_count(store: Store) -> None:
    run_id = _new_run(store)
    assert store.round_count(run_id) == 0 and store.get_results(run_id) == ()
    for round_no in range(3):
        store.add_round(run_id, round_no, RAW * 1000, _tests(round_no + 1.0), WORKLOADS)
    full = store.get_run(run_id)
    light = store.get_run("latest", raw=False)
    assert light.raw_outputs == () and len(full.raw_outputs) == 3
    assert light.results == full.results == store.get_results(run_id)
    assert store.round_count("latest") == 3
    later = store.get_results(str(run_id), from_round=1)
    assert later == full.results[3:] and {r.round for r in later} == {1, 2}
    with pytest.raises(StoreError, match="no run 99"):
        store.round_count(99)


def test_result_rows_equal_the_test_result_numbers(store: Store) -> None:
    run_id = _new_run(store)
    tests = _tests()
    store.add_round(run_id, 1, RAW, tests, WORKLOADS)

    stored = store.get_run(run_id).results

    expected = [(t, d) for t in tests for d in t.directions.values() if d.active]
    assert len(stored) == len(expected) == 3
    for row, (test, direction) in zip(stored, expected, strict=True):
        assert (row.round, row.test, row.direction) == (1, test.name, direction.direction)
        assert row.workload == WORKLOADS[test.name]
        assert row.iops == direction.iops
        assert row.bw_bytes_per_s == direction.bw_bytes_per_s
        assert row.io_bytes == direction.io_bytes
        assert row.runtime_ms == direction.runtime_ms
        assert (row.usr_cpu_pct, row.sys_cpu_pct) == (test.usr_cpu_pct, test.sys_cpu_pct)
        assert (row.jobs, row.hostname) == (test.jobs, test.hostname)
        lat = direction.latency
        if lat is None:
            assert row.lat_kind is None
            assert row.lat_mean_ns is None and row.lat_p99_ns is None
            continue
        assert row.lat_kind == lat.kind
        assert (row.lat_mean_ns, row.lat_min_ns, row.lat_max_ns, row.lat_stddev_ns) == (
            lat.mean_ns,
            lat.min_ns,
            lat.max_ns,
            lat.stddev_ns,
        )
        pct = lat.percentiles_ns
        assert row.lat_p50_ns == pct[50.0]
        assert row.lat_p90_ns == pct[90.0]
        assert row.lat_p99_ns == pct[99.0]
        assert row.lat_p999_ns == pct[99.9]
        assert row.lat_p9999_ns == pct[99.99]


def test_raw_json_is_stored_verbatim(store: Store) -> None:
    raw = RAW + "fio: some informational line\n\t" + '"\\u00fc" ' * 3
    run_id = _new_run(store)
    store.add_round(run_id, 1, raw, [], {})
    (stored,) = store.get_run(run_id).raw_outputs
    assert stored == raw
    assert stored.encode() == raw.encode()


def test_latest_is_the_run_added_last(store: Store) -> None:
    """``latest`` and the order of ``list_runs`` go by the order runs were added (their
    ids), not by their start: an import dated years back, or one dated now, is
    ``latest`` until the next run is added."""
    with pytest.raises(StoreError, match="no runs in"):
        store.resolve("latest")
    first = _new_run(store)
    second = _new_run(store)
    imported = store.create_run(
        "import", TARGET, HOST, {}, RunSettings(), started_at="2020-01-02T03:04:05+02:00"
    )
    assert store.resolve("latest") == imported
    assert store.resolve(" LATEST ") == imported
    assert store.get_run("latest").id == imported
    assert store.get_run(imported).started_at == "2020-01-02T01:04:05+00:00"
    assert [r.id for r in store.list_runs()] == [imported, second, first]
    assert [r.id for r in store.list_runs(limit=1)] == [imported]
    third = _new_run(store)  # started now: after the import, and added after it
    assert store.resolve("latest") == third
    store.delete_run("latest")
    assert store.resolve("latest") == imported
    store.delete_run("latest")
    assert store.resolve("latest") == second


def test_unknown_runs_are_one_line_errors(store: Store) -> None:
    with pytest.raises(StoreError) as caught:
        store.get_run("42")
    assert str(caught.value) == f"no run 42 in {store.url} (see volbench runs)"
    with pytest.raises(StoreError, match="not a run: 'abc'"):
        store.resolve("abc")
    with pytest.raises(StoreError, match="no run 7 in"):
        store.finish_run(7, RunStatus.COMPLETED)
    with pytest.raises(StoreError, match="no run 7 in"):
        store.add_round(7, 1, "{}", [], {})


def test_list_runs_filters_by_all_labels_plan_and_status(store: Store) -> None:
    a = _new_run(store, {"vendor": "acme", "size": "100g"})
    b = _new_run(store, {"vendor": "acme", "size": "500g"}, plan="pts-iops")
    c = _new_run(store, {"vendor": "other", "size": "100g"})
    store.add_round(a, 1, RAW, _tests(), WORKLOADS)
    store.finish_run(a, RunStatus.COMPLETED)

    def ids(**filters: Any) -> list[int]:
        return [run.id for run in store.list_runs(**filters)]

    assert ids() == [c, b, a]
    assert ids(labels={"vendor": "acme"}) == [b, a]
    assert ids(labels={"vendor": "acme", "size": "100g"}) == [a]
    assert ids(labels={"vendor": "acme", "size": "1t"}) == []
    assert ids(labels={"size": "100g"}, status=RunStatus.RUNNING) == [c]
    assert ids(plan="pts-iops") == [b]
    assert ids(status="completed") == [a]
    assert ids(limit=2) == [c, b]
    listed = {run.id: run for run in store.list_runs()}
    assert listed[a].labels == {"vendor": "acme", "size": "100g"}
    assert listed[a].results == () and listed[a].raw_outputs == ()
    assert listed[a].status is RunStatus.COMPLETED


def _row_counts(url: str, run_id: int) -> dict[str, int]:
    engine = database.connect(url)
    try:
        with engine.connect() as conn:
            return {
                table.name: conn.execute(
                    sa.select(sa.func.count()).select_from(table).where(table.c.run_id == run_id)
                ).scalar_one()
                for table in (schema.labels, schema.rounds, schema.results)
            }
    finally:
        engine.dispose()


def test_delete_cascades_to_labels_rounds_and_results(db_url: str, store: Store) -> None:
    doomed = _new_run(store, {"vendor": "acme"})
    kept = _new_run(store, {"vendor": "acme"})
    for run_id in (doomed, kept):
        store.add_round(run_id, 1, RAW, _tests(), WORKLOADS)
        store.add_round(run_id, 2, RAW, _tests(), WORKLOADS)
    assert _row_counts(db_url, doomed) == {"labels": 1, "rounds": 2, "results": 6}

    assert store.delete_run(str(doomed)) == doomed

    assert _row_counts(db_url, doomed) == {"labels": 0, "rounds": 0, "results": 0}
    assert _row_counts(db_url, kept) == {"labels": 1, "rounds": 2, "results": 6}
    with pytest.raises(StoreError, match=f"no run {doomed} in"):
        store.get_run(doomed)


def test_status_transitions(store: Store) -> None:
    run_id = _new_run(store)
    assert store.get_run(run_id).status is RunStatus.RUNNING
    assert store.get_run(run_id).ended_at is None
    store.add_round(run_id, 1, RAW, _tests(), WORKLOADS)
    with pytest.raises(StoreError, match=f"round 1 of run {run_id} is already stored"):
        store.add_round(run_id, 1, RAW, _tests(), WORKLOADS)

    store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted by the user")
    run = store.get_run(run_id)
    assert (run.status, run.error) == (RunStatus.INTERRUPTED, "interrupted by the user")
    assert run.ended_at is not None
    with pytest.raises(StoreError, match="is already interrupted"):
        store.finish_run(run_id, RunStatus.COMPLETED)
    with pytest.raises(StoreError, match="is interrupted: cannot add round 2"):
        store.add_round(run_id, 2, RAW, _tests(), WORKLOADS)
    with pytest.raises(ValueError, match="final status"):
        store.finish_run(run_id, RunStatus.RUNNING)

    store.reopen_run(run_id)  # volbench resume
    run = store.get_run(run_id)
    assert (run.status, run.error, run.ended_at) == (RunStatus.RUNNING, None, None)
    store.add_round(run_id, 2, RAW, _tests(), WORKLOADS)
    store.finish_run(run_id, RunStatus.COMPLETED)
    assert store.get_run(run_id).status is RunStatus.COMPLETED
    with pytest.raises(StoreError, match="is completed: nothing to resume"):
        store.reopen_run(run_id)

    failed = _new_run(store)
    store.finish_run(failed, RunStatus.FAILED, "fio exited with status 1")
    assert store.get_run(failed).error == "fio exited with status 1"


def test_a_crash_between_rounds_keeps_committed_rounds(db_url: str) -> None:
    crashed = Store.open(db_url)  # never finished, never closed: the process "died"
    run_id = _new_run(crashed, {"vendor": "acme"})
    crashed.add_round(run_id, 1, RAW, _tests(), WORKLOADS)
    # Round 2 fails half-way through (its rounds row is written, a results row is not).
    with pytest.raises((TypeError, sa.exc.StatementError), match="cannot store object"):
        bad = StoredWorkload(name=object())  # type: ignore[arg-type]
        crashed.add_round(run_id, 2, RAW, _tests(), {"randrw-16k": bad})

    with Store.open(db_url) as after:
        run = after.get_run("latest")
        assert run.id == run_id
        assert run.status is RunStatus.RUNNING
        assert run.raw_outputs == (RAW,)
        assert {r.round for r in run.results} == {1}
        assert len(run.results) == 3
    crashed.close()


def test_settings_accept_dataclasses_enums_and_tuples(store: Store) -> None:
    settings = {"target": TARGET, "status": RunStatus.RUNNING, "bs": (4096, 8192), "p": Path("/x")}
    run_id = store.create_run("quick", TARGET, HOST, {}, RunSettings(options=settings))
    assert store.get_run(run_id).settings.options == {
        "target": dataclasses.asdict(TARGET),
        "status": "running",
        "bs": [4096, 8192],
        "p": "/x",
    }


def test_started_at_needs_a_time_zone(store: Store) -> None:
    with pytest.raises(ValueError, match="time zone"):
        store.create_run(
            "import", TARGET, HOST, {}, RunSettings(), started_at="2020-01-02T03:04:05"
        )


def test_locations_map_to_sqlite_files_and_psycopg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(database.ENV_VAR, raising=False)
    pg = database.resolve_url("postgresql://bob:secret@db.example:5433/results")
    assert pg.drivername == "postgresql+psycopg"
    assert database.display_url(pg) == "postgresql://bob:***@db.example:5433/results"
    assert database.resolve_url("postgres://bob@db/r").drivername == "postgresql+psycopg"
    plain = database.resolve_url(str(tmp_path / "a.db"))
    assert (plain.drivername, plain.database) == ("sqlite", str(tmp_path / "a.db"))
    assert database.resolve_url(f"sqlite:///{tmp_path}/b.db").database == f"{tmp_path}/b.db"

    monkeypatch.setenv(database.ENV_VAR, str(tmp_path / "env.db"))
    assert database.resolve_url(None).database == str(tmp_path / "env.db")
    assert database.resolve_url(str(tmp_path / "given.db")).database == str(tmp_path / "given.db")

    monkeypatch.delenv(database.ENV_VAR)
    monkeypatch.setattr(database, "default_data_dir", lambda: tmp_path / "data" / "volbench")
    with Store.open(None) as store:
        assert store.url == f"sqlite:///{tmp_path}/data/volbench/volbench.db"
    assert (tmp_path / "data" / "volbench" / "volbench.db").is_file()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "postgresql://bob:secret@127.0.0.1:1/results",
            "cannot open result store postgresql://bob:***@127.0.0.1:1/results:"
            " connection refused (set --db or VOLBENCH_DB)",
        ),
        ("mysql://db/results", "cannot open result store mysql://db/results: volbench keeps"),
        ("postgresql://h:port/x", "cannot open result store postgresql://h:port/x: not a"),
        (
            "postgresql+psycopg2://h/x",
            "cannot open result store postgresql+psycopg2://h/x: volbench talks",
        ),
    ],
)
def test_bad_locations_are_one_line_errors(url: str, message: str) -> None:
    with pytest.raises(StoreError) as caught:
        Store.open(url)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)


def test_files_that_are_not_databases_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database, and it stays untouched\n" * 100)
    with pytest.raises(StoreError, match="file is not a database"):
        Store.open(str(text))
    assert text.read_text() == "not a database, and it stays untouched\n" * 100
    with pytest.raises(StoreError, match="no directory"):
        Store.open(str(tmp_path / "missing" / "x.db"))


def test_labels_are_set_replaced_and_removed_after_the_run(store: Store) -> None:
    run_id = _new_run(store, {"vendor": "aliyun", "region": "x"})
    assert (
        store.set_labels(str(run_id), {"vendor": "tencent", "size_gib": "50"}, ["region"]) == run_id
    )
    assert store.get_run(run_id).labels == {"vendor": "tencent", "size_gib": "50"}
    assert [r.id for r in store.list_runs(labels={"vendor": "tencent"})] == [run_id]
    with pytest.raises(StoreError, match="no run 999"):
        store.set_labels(999, {"a": "b"})
