"""``volbench import`` of other people's fio outputs takes from each file everything it
states (issue 14): target and size, ioengine, rw/bs/iodepth/numjobs per job or group
(job options, else the server's or the global ones, else not stated), fio's own start
time, total latency for Little's law, places by host and port, fio's "All clients"
percentiles, and a warning when an output yields no result.

The outputs are real ones from public repositories (tests/fixtures/fio/imported, each
file's repository, path and commit in its README), fio 2.1.4 to 3.43. What each file
states is written out in :data:`STATED`, read off the file; every figure is recomputed
here from the file with ``json.loads`` and arithmetic.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES

from volbench.fio.options import fio_size, fio_time, workload_record
from volbench.model import RunRecord, StoredResult
from volbench.plans.imported.importing import import_file, read_import
from volbench.report.run_sheets import result_rows
from volbench.store.repository import Store

IMPORTED = FIO_FIXTURES / "imported"
FILES = [
    *sorted([*IMPORTED.glob("*.json"), *IMPORTED.glob("*.txt")]),
    FIO_FIXTURES / "fio2_randread_4jobs.json",
]
TWO_SERVERS = "fio-analyzer_fio-3.43_two-clients-one-host.json"
PBENCH = "pbench_fio-3.7_client-server.txt"
FIO2_CLONES = "fio2_randread_4jobs.json"
FIO3_CLONES = "fio-plot_fio-3.6_4-clones.json"
JSON_PLUS = "blizzarddiskmark_fio-3.39_jsonplus.json"
FAILED = "fio-plot_fio-3.33_write.json"
DIRECTIONS = ("read", "write", "trim", "mixed")
PERCENTILE_COLUMNS = {50.0: "lat_p50_ns", 90.0: "lat_p90_ns", 99.0: "lat_p99_ns"} | {
    99.9: "lat_p999_ns",
    99.99: "lat_p9999_ns",
}


@dataclass(frozen=True)
class Stated:
    """What one file states, read off it: target (None: it names none), the largest
    size in bytes (0: none), devices, ioengine, fio's start and end (UTC), places, and
    per test (rw, bs, iodepth, numjobs), None where the file does not state it."""

    path: str | None
    capacity: int
    device: str | None
    ioengine: str | None
    started: str | None
    ended: str | None
    tests: dict[str, tuple[str | None, int | None, int | None, int | None]]
    places: list[str] = field(default_factory=list)


STATED: dict[str, Stated] = {
    # no job options, no timestamp (fio 2.1.4): nothing of the pattern or time is stated
    "pkb_fio-2.1.4_five-groups.json": Stated(
        None,
        0,
        "sdb",
        None,
        None,
        None,
        {
            name: (None, None, None, None)
            for name in (
                "sequential_write",
                "sequential_read",
                "random_write_test",
                "random_read_test",
                "random_read_test_parallel",
            )
        },
    ),
    # global options (filename, ioengine) under each group's job options; size=100%;
    # timestamp_ms 1506559552257 less elapsed 21 s
    "pkb_fio-2.17_group-reporting.json": Stated(
        "/dev/disk/by-id/google-pkb-7fb0c9d8-0-data-0-0",
        0,
        None,
        "libaio",
        "2017-09-28T00:45:31+00:00",
        "2017-09-28T00:45:52+00:00",
        {
            "rand_16k_read_100%-io-depth-1-num-jobs-2": ("randread", 16384, 1, 2),
            "rand_16k_write_100%-io-depth-1-num-jobs-2": ("randwrite", 16384, 1, 2),
        },
    ),
    # filename relative to directory=/fio, size=1861G, iodepth=01, no numjobs
    "fio-plot_fio-2.18_randread.json": Stated(
        "/fio/fio-test.bin",
        1861 * 2**30,
        "md10,sdb,sdc,sdd,sde",
        "libaio",
        "2017-04-01T17:29:58+00:00",
        "2017-04-01T17:30:59+00:00",
        {"random-io": ("randread", 4096, 1, None)},
    ),
    "fio-plot_fio-2.18_group-reporting.json": Stated(
        "/dev/md127",
        0,
        "md127,sdb,sdc,sdd,sde",
        "libaio",
        "2017-04-17T11:14:54+00:00",
        "2017-04-17T11:15:05+00:00",
        {"random-io": ("randread", 4096, 1, 1)},
    ),
    "fio-plot_fio-3.1_floppy.json": Stated(
        "/dev/sde",
        0,
        "sde",
        "libaio",
        "2019-12-16T22:23:51+00:00",
        "2019-12-16T22:26:07+00:00",
        {"iotest": ("randread", 4096, 1, 1)},
    ),
    "fio-plot_fio-3.6_4-clones.json": Stated(
        "/dev/sdc",
        0,
        "sdc",
        "libaio",
        "2018-05-13T22:04:53+00:00",
        "2018-05-13T22:05:54+00:00",
        {"random-io": ("randread", 4096, 1, 4)},
    ),
    "fio-plot_fio-3.14.json": Stated(
        "/dev/sdh",
        0,
        "sdh",
        "libaio",
        "2019-08-25T20:26:02+00:00",
        "2019-08-25T20:27:03+00:00",
        {"random-read": ("randread", 4096, 1, 1)},
    ),
    # size=50000Mi: fio reads "Mi" as 2^20 (kb_base=1024)
    "fio-plot_fio-3.16_raid5.json": Stated(
        "/server/fiotest/test.bin",
        50000 * 2**20,
        "md6,sdc,sdd,sde,sdf,sdg,sdh,sdi,sdj",
        "libaio",
        "2019-11-11T20:05:52+00:00",
        "2019-11-11T20:06:53+00:00",
        {"iotest": ("randread", 4096, 1, 1)},
    ),
    # the failed run: elapsed 0, size=100%% (no byte count)
    FAILED: Stated(
        "/Users/nan03/tmp/fio",
        0,
        None,
        "sync",
        "2023-02-28T19:01:38+00:00",
        "2023-02-28T19:01:38+00:00",
        {"1m": ("write", 2**20, 64, 1)},
    ),
    "fio-plot_fio-3.34_randread.json": Stated(
        "/Volumes/Temporary Storage/fio",
        2**30,
        None,
        "sync",
        "2023-03-30T00:19:33+00:00",
        "2023-03-30T00:19:36+00:00",
        {"FIOJOB": ("randread", 4096, 1, 1)},
    ),
    # rw/bs/iodepth/numjobs/ioengine in the global options, size=16Mi in the job's;
    # job_start 1741208675800, timestamp 1741208676
    JSON_PLUS: Stated(
        None,
        16 * 2**20,
        None,
        "posixaio",
        "2025-03-05T21:04:35+00:00",
        "2025-03-05T21:04:36+00:00",
        {
            "/Users/alexander/CrystalDiskMark/CrystalDiskMark195681fd01a/"
            "CrystalDiskMark195681fd01a.tmp": ("randwrite", 1024, 8, 1)
        },
    ),
    # rw=readwrite is fio's rw; the job name as fio cut it (127 characters)
    "fio-analyzer_fio-3.40_readwrite.json": Stated(
        "/tmp/fio_test/fio_test_read_4k",
        2**20,
        None,
        "psync",
        "2025-07-08T18:46:13+00:00",
        "2025-07-08T18:46:23+00:00",
        {
            "hourly_automated_test,pattern:read,block_size:4k,num_jobs:1,direct:1,"
            "test_size:1M,sync:1,iodepth:1,runtime:10,date:2025-07-08T1": ("rw", 4096, 1, 1)
        },
    ),
    # client/server: each server's global options (directory, size, rw, bs, ioengine),
    # numjobs in the job options, no iodepth; the start is the earliest job_start; a
    # client/server output states no end
    TWO_SERVERS: Stated(
        "/mnt/fio-test",
        4 * 2**20,
        None,
        "psync",
        "2026-09-28T14:04:36+00:00",
        None,
        {"test": ("randread", 4096, None, 1)},
        places=["127.0.0.1:18802", "127.0.0.1:18801"],
    ),
    # client/server, fio 3.7: five clones on each of two hosts, no N; the global options
    # as fio printed them (each key twice); the start is fio's timestamp
    PBENCH: Stated(
        "/tmp/fio",
        4096 * 2**20,
        "dm-0,sda",
        "libaio",
        "2018-09-05T18:10:52+00:00",
        None,
        {"job-/tmp/fio": ("read", 4096, 32, 5)},
        places=["perf36", "perf84"],
    ),
    FIO2_CLONES: Stated(
        None, 0, "sda", None, None, None, {"random-read": (None, None, None, None)}
    ),
}


def _document(path: Path) -> dict[str, Any]:
    text = path.read_text()
    document: dict[str, Any] = json.loads(text[text.find("{") : text.rfind("}") + 1])
    return document


def _import(tmp_path: Path, path: Path) -> RunRecord:
    with Store.open(str(tmp_path / "store.db")) as store:
        return store.get_run(import_file(store, path, {}))


def test_every_file_is_stated_and_its_source_named() -> None:
    readme = (IMPORTED / "README.md").read_text()
    assert {p.name for p in FILES} == set(STATED)
    for path in FILES[:-1]:
        (line,) = [row for row in readme.splitlines() if row.startswith(f"| `{path.name}`")]
        assert re.search(r"[0-9a-f]{40}", line), path.name  # repository, path, commit
    versions = {_document(p)["fio version"] for p in FILES}
    assert {"fio-2.1.4", "fio-2.1.11", "fio-3.43"} <= versions


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_what_the_file_states_is_stored(tmp_path: Path, path: Path) -> None:
    stated = STATED[path.name]
    run = _import(tmp_path, path)
    assert run.status.value == "completed"
    assert run.target.path == (stated.path or f"(from {path.name})")
    assert run.target.capacity_bytes == stated.capacity
    assert run.target.device == stated.device
    assert run.settings.ioengine == stated.ioengine
    if stated.started is not None:  # fio's own time, not the import's
        assert run.started_at == stated.started
        assert run.rounds[0].started_at == stated.started
        assert run.rounds[0].ended_at == stated.ended
        assert run.ended_at == (stated.ended or stated.started)
    else:
        assert run.rounds[0].started_at is None and run.rounds[0].ended_at is None
        assert run.settings.options["times"].startswith("not stated")
    assert [p.label for p in run.settings.places] == stated.places
    workloads = {r.test: r.workload for r in run.results}
    if path.name != FAILED:  # a failed run has no result rows
        assert set(workloads) == set(stated.tests)
    for name, workload in workloads.items():
        fields = (workload.rw, workload.bs_bytes, workload.iodepth, workload.numjobs)
        assert fields == stated.tests[name], name
        assert workload.places == max(1, len(stated.places))


def _entries(document: dict[str, Any]) -> list[dict[str, Any]]:
    entries = document.get("jobs", []) + document.get("client_stats", [])
    return [e for e in entries if e["jobname"] != "All clients"]


def _place(entry: dict[str, Any], document: dict[str, Any]) -> str | None:
    """A server's place, from the file: its host, with its port when hosts repeat."""
    host = entry.get("hostname")
    servers = {(e.get("hostname"), e.get("port")) for e in _entries(document)}
    ports = [p for h, p in servers if h == host]
    return f"{host}:{entry['port']}" if host and len(ports) > 1 else host


def _usec(document: dict[str, Any]) -> float:
    return 1000.0 if document["fio version"].startswith("fio-2") else 1.0


def _latency(block: dict[str, Any], kind: str) -> dict[str, Any]:
    """A direction's latency block of ``kind``: ``<kind>_ns`` (fio 3), else ``<kind>``."""
    found: dict[str, Any] = block[f"{kind}_ns"] if f"{kind}_ns" in block else block[kind]
    return found


def _ios(directions: list[dict[str, Any]]) -> list[int]:
    """Each entry's I/Os in a direction as the file gives them: ``total_ios`` (fio >=
    2.1.14), else its bytes (fio 2.1 printed no count; one test's entries share a
    block size, so bytes are in proportion to I/Os)."""
    if all(d.get("total_ios") for d in directions):
        return [d["total_ios"] for d in directions]
    return [d["io_bytes"] for d in directions]


def _weighted_mean(blocks: list[dict[str, Any]], ios: list[int], scale: float) -> float:
    """Mean of latency blocks weighted by their sample counts ``N``, else by ``ios``."""
    weights = [b["N"] for b in blocks] if all(b.get("N") for b in blocks) else ios
    total = sum(float(b["mean"]) * w for b, w in zip(blocks, weights, strict=True))
    return float(total * scale / sum(weights))


def _row_entries(row: StoredResult, document: dict[str, Any]) -> list[dict[str, Any]]:
    """The fio entries a stored row merges: one test's, of one place or of all."""
    return [
        e
        for e in _entries(document)
        if e["jobname"] == row.test
        and (row.hostname is None or _place(e, document) == row.hostname)
    ]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_figure_equals_the_files(tmp_path: Path, path: Path) -> None:
    document = _document(path)
    fio2 = document["fio version"].startswith("fio-2")
    run = _import(tmp_path, path)
    expected_rows = 0
    for row in run.results:
        entries = _row_entries(row, document)
        assert entries, (row.test, row.hostname)
        blocks = [e[row.direction] for e in entries]
        assert row.jobs == len(entries)
        assert row.iops == pytest.approx(sum(b["iops"] for b in blocks), rel=1e-12)
        bw = sum(b.get("bw_bytes", b["bw"] * 1024) for b in blocks)  # bw: KiB/s
        assert row.bw_bytes_per_s == pytest.approx(bw, rel=1e-12)
        assert row.io_bytes == sum(b["io_bytes"] * (1024 if fio2 else 1) for b in blocks)
        assert row.lat_kind is not None
        kind = [_latency(b, row.lat_kind) for b in blocks]
        mean = _weighted_mean(kind, _ios(blocks), _usec(document))
        assert row.lat_mean_ns == pytest.approx(mean, rel=1e-9)  # fio prints 6 decimals
        assert row.lat_max_ns == max(b["max"] for b in kind) * _usec(document)
        if len(entries) == 1:  # one entry: fio's own percentiles
            table = {float(k): v * _usec(document) for k, v in kind[0]["percentile"].items()}
            for pct, column in PERCENTILE_COLUMNS.items():
                assert getattr(row, column) == table.get(pct), column
    for entry in _entries(document):
        for direction in DIRECTIONS:
            block = entry.get(direction)
            if block and (block["io_bytes"] or block.get("total_ios")):
                expected_rows += 1
    # every active direction of every entry is in exactly one place's (or the run's) row
    per_place = [r for r in run.results if r.hostname is not None] or run.results
    assert sum(r.jobs for r in per_place) == expected_rows


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_total_latency_for_littles_law_is_the_files(path: Path) -> None:
    """lat_ns/lat mean (submission to completion), whatever latency kind a row shows."""
    document = _document(path)
    imported = read_import(path)
    for test in imported.tests:
        if test.hostname is None and len(imported.settings.places) > 1:
            continue  # the aggregate: below
        entries = [e for e in _entries(document) if e["jobname"] == test.name]
        entries = [e for e in entries if test.hostname in (None, _place(e, document))]
        for name, direction in test.directions.items():
            if not direction.active:
                continue
            blocks = [_latency(e[name], "lat") for e in entries]
            ios = _ios([e[name] for e in entries])  # each I/O's latency is in the mean
            blocks = [{**b, "N": n} for b, n in zip(blocks, ios, strict=True)]
            mean = _weighted_mean(blocks, ios, _usec(document))
            assert direction.lat_mean_ns == pytest.approx(mean, rel=1e-12)


def test_latest_is_the_output_imported_last(tmp_path: Path) -> None:
    """An output that states no time (fio 2.1.4) starts when it is imported, others at
    fio's own time years back: whichever, the run just imported is ``latest``, and the
    list of runs shows it first."""
    names = [
        "fio-plot_fio-3.1_floppy.json",  # 2019
        "pkb_fio-2.1.4_five-groups.json",  # no time: now
        "fio-plot_fio-2.18_randread.json",  # 2017
        "fio-analyzer_fio-3.40_readwrite.json",  # 2025
    ]
    added: list[int] = []
    with Store.open(str(tmp_path / "store.db")) as store:
        for name in names:
            added.append(import_file(store, IMPORTED / name, {}))
            assert store.resolve("latest") == added[-1] == store.get_run("latest").id
            assert [r.id for r in store.list_runs()] == added[::-1]
        started = [store.get_run(run_id).started_at for run_id in added]
    assert started[2] < started[0] < started[3] < started[1]  # not the order they came in


def test_json_plus_bins_are_the_files() -> None:
    path = IMPORTED / JSON_PLUS
    clat = _document(path)["jobs"][0]["write"]["clat_ns"]
    (test,) = read_import(path).tests
    latency = test.directions["write"].latency
    assert latency is not None and latency.kind == "clat"
    assert latency.bins == {int(k): v for k, v in clat["bins"].items()}
    assert latency.percentiles_ns == {float(k): v for k, v in clat["percentile"].items()}
    assert sum(latency.bins.values()) == clat["N"] == 16384


@pytest.mark.parametrize("name", [FIO2_CLONES, FIO3_CLONES, PBENCH])
def test_merged_means_weigh_each_job_by_its_ios(tmp_path: Path, name: str) -> None:
    """Where fio gives no sample count (fio 2.x; 3.x before 3.18 printed no ``N``), a
    test's mean latency is its entries' means weighted by their I/Os (``total_ios``, or
    bytes before fio 2.1.14), as fio weighs jobs it sums (stat.c ``sum_stat``), not
    each entry alike."""
    path = FIO_FIXTURES / name if name == FIO2_CLONES else IMPORTED / name
    document = _document(path)
    (row,) = [r for r in _import(tmp_path, path).results if r.hostname is None]
    directions = [e[row.direction] for e in _entries(document)]
    assert row.jobs == len(directions) > 1
    blocks = [_latency(d, row.lat_kind or "") for d in directions]
    assert not any("N" in b for b in blocks)
    ios = _ios(directions)
    mean = sum(b["mean"] * n for b, n in zip(blocks, ios, strict=True)) / sum(ios)
    assert row.lat_mean_ns == pytest.approx(mean * _usec(document), rel=1e-12)
    alike = sum(b["mean"] for b in blocks) / len(blocks) * _usec(document)
    assert abs(alike / row.lat_mean_ns - 1) > 1e-6  # what weighing them alike gave


def test_an_old_all_clients_mean_is_fios(tmp_path: Path) -> None:
    """fio 3.7 client/server, two hosts of five jobs each (119,000 I/Os a job on one,
    156,000 to 172,000 on the other), no ``N``: the run's mean latency is fio's "All
    clients" mean to within 0.005 % (each job alike gave 2.26 % more). Not closer: fio
    weighs by latency samples, which 3.7 does not print (``total_ios`` counts the I/Os
    issued, ioengines.c ``td_io_queue``), and fio before 3.30 restarted its sums at its
    second entry (client.c passed ``first = sum_stat_nr == 1`` to ``sum_thread_stats``),
    so its figure lacks the first entry's mean."""
    document = _document(IMPORTED / PBENCH)
    (fio_all,) = [e for e in document["client_stats"] if e["jobname"] == "All clients"]
    (row,) = [r for r in _import(tmp_path, IMPORTED / PBENCH).results if r.hostname is None]
    assert (row.test, row.direction, row.jobs, row.lat_kind) == ("job-/tmp/fio", "read", 10, "clat")
    assert row.lat_mean_ns == pytest.approx(fio_all["read"]["clat_ns"]["mean"], rel=5e-5)
    assert row.lat_total_mean_ns == pytest.approx(fio_all["read"]["lat_ns"]["mean"], rel=5e-5)
    means = [e["read"]["clat_ns"]["mean"] for e in _entries(document)]
    alike = sum(means) / len(means)
    assert alike / fio_all["read"]["clat_ns"]["mean"] - 1 == pytest.approx(0.0226, abs=5e-5)


def test_two_servers_on_one_host_are_two_places(tmp_path: Path) -> None:
    """Places keyed by host and port; the run's result is their aggregate, with fio's
    "All clients" percentiles (plain json: no bins to merge them from)."""
    path = IMPORTED / TWO_SERVERS
    document = _document(path)
    run = _import(tmp_path, path)
    by_place = {r.hostname: r for r in run.results}
    for entry in _entries(document):
        mine = by_place[f"127.0.0.1:{entry['port']}"]
        assert mine.iops == entry["read"]["iops"]
        assert mine.lat_p9999_ns == entry["read"]["clat_ns"]["percentile"]["99.990000"]
    (fio_all,) = [e for e in document["client_stats"] if e["jobname"] == "All clients"]
    clat = fio_all["read"]["clat_ns"]
    run_result = by_place[None]
    assert run_result.iops == fio_all["read"]["iops"] == 2224520
    assert run_result.lat_kind == "clat"
    assert run_result.lat_mean_ns == clat["mean"]
    assert run_result.lat_stddev_ns == clat["stddev"]
    for pct, column in PERCENTILE_COLUMNS.items():
        assert getattr(run_result, column) == clat["percentile"][f"{pct:.6f}"], column
    (aggregate,) = [t for t in read_import(path).tests if t.hostname is None]
    assert aggregate.directions["read"].lat_mean_ns == fio_all["read"]["lat_ns"]["mean"]
    assert run.host.hostname == "127.0.0.1:18802,127.0.0.1:18801"


def test_each_server_has_its_own_global_options(tmp_path: Path) -> None:
    """fio >= 3.39 lists each server's global options apart: a field stated alike on
    every server is the test's; one that differs is not stated for it."""
    document = _document(IMPORTED / TWO_SERVERS)
    document["global options"][0]["bs"] = "8k"
    source = tmp_path / "servers.json"
    source.write_text(json.dumps(document))
    run = _import(tmp_path, source)
    for result in run.results:
        assert result.workload.rw == "randread" and result.workload.bs_bytes is None


def test_an_output_with_no_result_warns(tmp_path: Path) -> None:
    """fio failed (error 22, no I/O): the run is stored with fio's output and a warning
    saying so (``show`` prints it as the run's note), not as a silent empty result."""
    run = _import(tmp_path, IMPORTED / FAILED)
    assert run.status.value == "completed" and run.results == ()
    assert run.error == "warning: no result in this fio output: '1m' ended with error 22"
    assert read_import(IMPORTED / FAILED).notes == (run.error,)


def _all_clients_only_mixed() -> dict[str, Any]:
    """The two-server output as fio prints it with unified_rw_reporting=1 (one ``mixed``
    object in place of read, write and trim: all its I/O are reads, so ``mixed`` is the
    read object), trimmed to fio's "All clients" entry."""
    document = copy.deepcopy(_document(IMPORTED / TWO_SERVERS))
    (fio_all,) = [e for e in document["client_stats"] if e["jobname"] == "All clients"]
    fio_all["mixed"] = fio_all.pop("read")
    del fio_all["write"], fio_all["trim"]
    for options in document["global options"]:
        options["unified_rw_reporting"] = "1"
    document["client_stats"] = [fio_all]
    return document


def test_all_clients_alone_in_mixed_mode_is_the_result(tmp_path: Path) -> None:
    document = _all_clients_only_mixed()
    source = tmp_path / "all-clients.json"
    source.write_text(json.dumps(document))
    run = _import(tmp_path, source)
    (row,) = run.results
    mixed = document["client_stats"][0]["mixed"]
    assert (row.test, row.direction, row.hostname) == ("all-clients", "mixed", None)
    assert row.iops == mixed["iops"] and row.io_bytes == mixed["io_bytes"]
    assert row.lat_p99_ns == mixed["clat_ns"]["percentile"]["99.000000"]
    assert row.workload.rw == "randread" and row.workload.bs_bytes == 4096
    assert "only fio's 'All clients' entry" in (run.error or "")
    assert "warning" not in (run.error or "")


def test_zero_io_in_mixed_mode_warns(tmp_path: Path) -> None:
    document = _all_clients_only_mixed()
    mixed = document["client_stats"][0]["mixed"]
    for key in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "total_ios", "runtime"):
        mixed[key] = 0
    mixed["iops"] = 0.0
    source = tmp_path / "empty.json"
    source.write_text(json.dumps(document))
    run = _import(tmp_path, source)
    assert run.results == ()
    assert "warning: no result in this fio output: no job moved any data" in (run.error or "")


def test_a_pattern_not_stated_is_not_invented(tmp_path: Path) -> None:
    """fio 2.1.4 echoed no options: no rw, block size or queue depth is shown as fact."""
    run = _import(tmp_path, IMPORTED / "pkb_fio-2.1.4_five-groups.json")
    rows = result_rows(run)
    assert [r["direction"] for r in rows] == ["write", "read", "write", "read", "read"]
    assert {r["pattern"] for r in rows} == {"not stated"}
    assert {r["rw"] for r in rows} == {None}


def test_a_group_reported_pattern_is_checked_against_its_directions(tmp_path: Path) -> None:
    """With group_reporting fio echoes the first job's options for the group: an
    rw=randread group that also wrote does not state its pattern."""
    document = _document(IMPORTED / "pkb_fio-2.17_group-reporting.json")
    reads, writes = document["jobs"]
    reads["write"] = writes["write"]
    source = tmp_path / "group.json"
    source.write_text(json.dumps({**document, "jobs": [reads]}))
    run = _import(tmp_path, source)
    assert {r.direction for r in run.results} == {"read", "write"}
    for result in run.results:
        assert result.workload.rw is None
        assert (result.workload.bs_bytes, result.workload.numjobs) == (16384, 2)


def test_a_name_several_groups_use_is_told_apart(tmp_path: Path) -> None:
    document = _document(IMPORTED / "pkb_fio-2.1.4_five-groups.json")
    for job in document["jobs"]:
        job["jobname"] = "job"
    source = tmp_path / "same-name.json"
    source.write_text(json.dumps(document))
    run = _import(tmp_path, source)
    assert [r.test for r in run.results] == [f"job-g{gid}" for gid in range(5)]


def test_fio_times_are_the_output_s() -> None:
    """A local output's timestamp_ms is its end; less elapsed (s) its start."""
    document = _document(IMPORTED / "fio-plot_fio-3.1_floppy.json")
    imported = read_import(IMPORTED / "fio-plot_fio-3.1_floppy.json")
    end = datetime.fromtimestamp(document["timestamp_ms"] / 1000, UTC)
    start = datetime.fromtimestamp(document["timestamp_ms"] / 1000 - 136, UTC)
    assert document["jobs"][0]["elapsed"] == 136
    assert imported.ended_at == end.isoformat(timespec="seconds")
    assert imported.started_at == start.isoformat(timespec="seconds")


@pytest.mark.parametrize(
    ("text", "kb_base", "size"),
    [
        ("4k", 1024, 4096),
        ("4KB", 1024, 4096),
        ("16Mi", 1024, 16 * 2**20),  # "mi" is read as "m" (parse.c)
        ("4KiB", 1024, 4000),  # fio's compatibility: KiB = 1000 with kb_base=1024
        ("4KiB", 1000, 4096),
        ("4k", 1000, 4000),
        ("1861G", 1024, 1861 * 2**30),
        ("512", 1024, 512),
        ("100%", 1024, None),
        ("1.5g", 1024, None),
        ("9" * 30, 1024, None),
    ],
)
def test_sizes_are_read_as_fio_reads_them(text: str, kb_base: int, size: int | None) -> None:
    assert fio_size(text, kb_base) == size


def test_times_and_flags_are_read_as_fio_reads_them() -> None:
    assert fio_time("60") == 60.0 and fio_time("2m") == 120.0 and fio_time("500ms") == 0.5
    assert fio_time("10", 1e-6) == pytest.approx(1e-5)  # thinktime: usec without a unit
    record = workload_record(
        "j",
        {
            "readwrite": "randrw",
            "rwmixwrite": "30",
            "time_based": "",
            "buffered": "1",
            "bs": "4k,64k",
            "kb_base": "1000",
            "size": "1m",
        },
    )
    assert record == {
        "name": "j",
        "rw": "randrw",
        "rwmixread_pct": 70,
        "time_based": True,
        "direct": False,
        "size_bytes": 1_000_000,
    }
