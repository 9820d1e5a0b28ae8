"""The stored runs through the real command: import, runs, show, export, delete.

The inputs are the recorded fio outputs in tests/fixtures/fio (json, json+, text
around the JSON, client/server, fio 2.x). Every imported figure is recomputed
here from the fixture with ``json.loads`` and arithmetic.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench, fio_jobs, fio_json, only_error_line, run_all

from volbench.model import HostInfo, RunSettings, RunStatus, TargetInfo
from volbench.store.repository import Store

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fio"
FILES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".json", ".txt"))
DIRECTIONS = ("read", "write", "trim")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Volbench, dict[str, int]]]:
    """Every fixture imported with labels set=a team=x; ids by file name."""
    volbench = Volbench(tmp_path_factory.mktemp("store") / "volbench")
    proc = volbench(
        "import", *map(str, FILES), "--label", "set=a", "--label", "team=x", "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    runs = json.loads(proc.stdout)["runs"]
    assert len(runs) == len(FILES)
    for path, run in zip(FILES, runs, strict=True):
        assert f"imported {path} as run {run['id']}" in proc.stderr
    yield volbench, {path.name: run["id"] for path, run in zip(FILES, runs, strict=True)}


def test_fixtures_cover_every_kind_of_fio_output() -> None:
    names = {p.name for p in FILES}
    assert {
        "randread_json.json",  # json
        "randrw_lat_percentiles_jsonplus.json",  # json+
        "text_around_json_jsonplus.txt",  # text around the JSON
        "client_server_jsonplus.txt",  # client/server
        "fio2_randread_4jobs.json",  # fio 2.x
    } <= names


def test_imported_runs_are_listed_with_labels(imported: tuple[Volbench, dict[str, int]]) -> None:
    volbench, ids = imported
    listing = volbench.document("runs", "--label", "team=x")["runs"]
    assert sorted(r["id"] for r in listing) == sorted(ids.values())
    for run in listing:
        assert run["plan"] == "import"
        assert run["status"] == "completed"
        assert run["labels"] == {"set": "a", "team": "x"}


def _expected(path: Path) -> list[tuple[str, str | None, str, dict[str, float]]]:
    """(test, hostname, direction, figures) computed from the fixture alone.

    A test is fio's entries with the same (groupid, jobname, hostname); IOPS and
    bandwidth are summed, the latency mean is weighted by each entry's I/Os
    (:func:`_latency_mean`).
    """
    document = fio_json(path.read_text())
    fio2 = document["fio version"].startswith("fio-2")
    groups: dict[tuple[int, str, str | None], list[dict[str, Any]]] = {}
    for job in fio_jobs(document):
        groups.setdefault((job["groupid"], job["jobname"], job.get("hostname")), []).append(job)
    expected = []
    for (_, name, host), jobs in groups.items():
        for direction in DIRECTIONS:
            blocks = [job[direction] for job in jobs]
            if not any(b["io_bytes"] > 0 or b.get("total_ios", 0) > 0 for b in blocks):
                continue
            bw = [b["bw"] * 1024 if fio2 else b["bw_bytes"] for b in blocks]
            expected.append(
                (
                    name,
                    host,
                    direction,
                    {
                        "iops": sum(b["iops"] for b in blocks),
                        "bw_bytes_per_s": sum(bw),
                        "io_bytes": sum(b["io_bytes"] * (1024 if fio2 else 1) for b in blocks),
                    },
                )
            )
    return expected


def _latency_mean(path: Path, row: dict[str, Any]) -> float:
    """The mean of the row's latency kind over the row's fio entries, from the fixture:
    weighted by their sample counts ``N``, else ``total_ios``, else bytes (fio 2.1 gives
    neither; one test's entries share a block size)."""
    document = fio_json(path.read_text())
    jobs = [
        j
        for j in fio_jobs(document)
        if j["jobname"] == row["test"] and j.get("hostname") == row["hostname"]
    ]
    kind = row["lat_kind"]
    blocks = []
    for job in jobs:
        block = job[row["direction"]]
        ios = block.get("total_ios") or block["io_bytes"]
        if f"{kind}_ns" in block:
            stats = block[f"{kind}_ns"]
            blocks.append((stats["mean"], stats.get("N"), ios))
        else:  # fio 2.x: usec
            blocks.append((block[kind]["mean"] * 1000, block[kind].get("N"), ios))
    weights = [n for _, n, _ in blocks] if all(n for _, n, _ in blocks) else [i for *_, i in blocks]
    return sum(m * w for (m, _, _), w in zip(blocks, weights, strict=True)) / sum(weights)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_imported_figures_equal_the_fixture(
    imported: tuple[Volbench, dict[str, int]], path: Path
) -> None:
    volbench, ids = imported
    document = volbench.stored(str(ids[path.name]))
    assert document["status"] == "completed"
    assert document["labels"] == {"set": "a", "team": "x"}
    # the raw output is kept verbatim: the JSON alone, without fio's text around it
    text = path.read_text()
    assert document["fio_outputs"] == [text[text.find("{") : text.rfind("}") + 1]]
    expected = _expected(path)
    several_hosts = len({host for _, host, _, _ in expected}) > 1
    # several hosts: the aggregate rows (no host) come first, then each host's own
    rows = [r for r in document["results"] if r["hostname"] or not several_hosts]
    assert rows and expected
    assert [(r["test"], r["hostname"], r["direction"]) for r in rows] == [
        (name, host, direction) for name, host, direction, _ in expected
    ]
    for row, (_, _, _, figures) in zip(rows, expected, strict=True):
        for key, value in figures.items():
            assert row[key] == pytest.approx(value, rel=1e-9), key
        assert row["lat_mean_ns"] == pytest.approx(_latency_mean(path, row), rel=1e-9)


def test_client_server_import_keeps_hosts_apart(imported: tuple[Volbench, dict[str, int]]) -> None:
    """Each host's share under its hostname; the run's results are the aggregate:
    per test over the hosts, and fio's "All clients" sum (one job file per host)."""
    volbench, ids = imported
    name = "client_server_jsonplus.txt"
    document = volbench.show(str(ids[name]))  # through the command
    assert document["settings"]["clients"] == 1  # fio's "All clients" entry, not a test
    assert "All clients" not in {r["test"] for r in document["results"]}
    places = document["places"]["rows"]
    assert sorted(r["place"] for r in places if not r["place"].startswith("all ")) == [
        "127.0.0.2",
        "127.0.0.3",
    ]
    fio_all = [e for e in fio_json((FIXTURES / name).read_text())["client_stats"]]
    (total,) = [e["read"]["iops"] for e in fio_all if e["jobname"] == "All clients"]
    (mine,) = [r for r in document["results"] if r["test"] == "all-clients"]
    assert mine["hostname"] is None and mine["iops"] == pytest.approx(total, rel=1e-9)


def test_runs_filtered_by_label(imported: tuple[Volbench, dict[str, int]]) -> None:
    volbench, ids = imported
    again = volbench(
        "import", str(FIXTURES / "randread_json.json"), "--label", "set=b", "--format", "json"
    )
    assert again.returncode == 0, again.stderr
    new_id = json.loads(again.stdout)["runs"][0]["id"]
    only_b, only_a, both, none = run_all(
        [
            (volbench, ("runs", "--label", "set=b", "--format", "json"), None),
            (volbench, ("runs", "--label", "set=a", "--format", "json"), None),
            (volbench, ("runs", "--label", "set=a", "--label", "team=x", "--format", "csv"), None),
            (volbench, ("runs", "--label", "set=c"), None),
        ]
    )
    assert [r["id"] for r in json.loads(only_b.stdout)["runs"]] == [new_id]
    assert sorted(r["id"] for r in json.loads(only_a.stdout)["runs"]) == sorted(ids.values())
    assert sorted(int(r["id"]) for r in csv.DictReader(both.stdout.splitlines())) == sorted(
        ids.values()
    )
    assert none.returncode == 0 and "volbench runs" in none.stdout


def test_export_to_files(imported: tuple[Volbench, dict[str, int]], tmp_path: Path) -> None:
    volbench, ids = imported
    run_id = str(ids["stonewall_jsonplus.json"])
    out = {fmt: tmp_path / f"run.{fmt}" for fmt in ("json", "csv", "markdown")}
    procs = run_all(
        [(volbench, ("export", run_id, "--format", f, "-o", str(p)), None) for f, p in out.items()]
    )
    for (_, path), proc in zip(out.items(), procs, strict=True):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == ""
        assert proc.stderr.strip() == f"wrote {path} ({path.stat().st_size:,} bytes)"
    shown = volbench("show", run_id, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert json.loads(out["json"].read_text()) == document  # what show prints
    rows = list(csv.DictReader(out["csv"].open()))
    rows = rows[: next((i for i, r in enumerate(rows) if r["test"] == "test"), len(rows))]
    assert [r["test"] for r in rows] == ["randwrite", "randread"]  # then the limits sheet
    for row, stored in zip(rows, document["results"], strict=True):
        assert float(row["iops"]) == stored["iops"]
        assert float(row["lat_p99_ns"]) == stored["lat_p99_ns"]
    markdown = out["markdown"].read_text().splitlines()
    assert markdown[0] == f"## volbench run {run_id} (import)"
    assert markdown[2].startswith("| Test | Dir | Pattern | IOPS |")
    assert markdown[4].startswith("| randwrite | write | randwrite 4k QD")
    assert markdown[5].startswith("| randread | read | randread 4k QD")


def test_delete(tmp_path: Path) -> None:
    volbench = Volbench(tmp_path / "volbench")
    files = [FIXTURES / "randread_json.json", FIXTURES / "numjobs4_jsonplus.json"]
    proc = volbench("import", *map(str, files), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    first, second = (r["id"] for r in json.loads(proc.stdout)["runs"])
    deleted = volbench("delete", str(first))
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stderr.strip() == f"deleted run {first}"
    assert volbench.stored_runs() == [second]
    gone, latest = run_all(
        [(volbench, ("show", str(first)), None), (volbench, ("delete", "latest"), None)]
    )
    assert only_error_line(gone, 2) == (
        f"volbench: error: no run {first} in sqlite:///{volbench.db} (see volbench runs)"
    )
    assert latest.returncode == 0 and latest.stderr.strip() == f"deleted run {second}"
    assert volbench.stored_runs() == []


def test_writes_wait_for_another_command_holding_the_store(tmp_path: Path) -> None:
    """While another volbench command holds SQLite's write lock (as it does while it
    opens the store), this command's writes wait for it instead of failing at once with
    "database is locked" (SQLite does not wait when a transaction that has read tries
    to write, so every write transaction must start with BEGIN IMMEDIATE)."""
    db = tmp_path / "store.db"
    with Store.open(str(db)) as store:
        target = TargetInfo("scratch.img", "file", 1)
        host = HostInfo("host", 1, "cpu", 1, "kernel", "fio-3.33")
        run_id = store.create_run("quick", target, host, {}, RunSettings())
        steps: list[Callable[[], object]] = [
            lambda: store.add_round(run_id, 0, "{}", [], {}),
            lambda: store.finish_run(run_id, RunStatus.COMPLETED),
            lambda: store.delete_run(str(run_id)),
        ]
        for step in steps:
            other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            other.execute("BEGIN IMMEDIATE")
            release = threading.Timer(0.2, other.execute, ("COMMIT",))
            release.start()
            try:
                step()
            finally:
                release.join()
                other.close()
        assert store.list_runs() == []


def test_export_to_a_file_then_import_it_into_a_second_store(
    imported: tuple[Volbench, dict[str, int]], tmp_path: Path
) -> None:
    """``export RUN -o results`` writes a bundle (a file of any name: only --format
    asks for a document to read): ``import results`` into another store gives the
    same run, as ``show --format json`` prints it, but for its id."""
    volbench, ids = imported
    run_id = str(ids["stonewall_jsonplus.json"])
    results = tmp_path / "results"
    exported = volbench("export", run_id, "-o", str(results))
    assert exported.returncode == 0, exported.stderr
    other = Volbench(tmp_path / "second")
    received = other("import", str(results))
    assert received.returncode == 0, received.stderr
    before = json.loads(volbench("show", run_id, "--format", "json").stdout)
    after = json.loads(other("show", "latest", "--format", "json").stdout)
    for row in (*before["results"], *after["results"]):  # the id, as each row names it
        row.pop("run_id", None)
    assert {**after, "id": before["id"]} == before
