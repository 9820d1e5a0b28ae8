"""Hostile or broken bundles given to ``volbench import``: each is refused with one line
that names the file, where in it, and what to do (exit 2, never a traceback), and
nothing of it is stored, also when only a later run of the bundle is bad."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES
from test_bundle import BLKPARSE, _failed_run

from volbench.cli.main import main
from volbench.plans import capture
from volbench.plans.imported.importing import import_file, import_path
from volbench.plans.kinds import check_setup
from volbench.records import RecordError
from volbench.store import bundle
from volbench.store.bundle import BundleError
from volbench.store.repository import Store
from volbench.views import report_for

Document = dict[str, Any]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A bundle of two runs: an imported fio output and a failed run with stalls,
    series of two hosts and integer and float values."""
    with Store.open(str(tmp_path_factory.mktemp("good") / "source.db")) as store:
        first = import_file(store, FIO_FIXTURES / "quick" / "round-000.json", {})
        second = _failed_run(store)
        return bundle.dump([store.get_run(first), store.get_run(second)])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A store with one run of its own already."""
    with Store.open(str(tmp_path / "target.db")) as opened:
        import_file(opened, FIO_FIXTURES / "randread_json.json", {})
        yield opened


def _refused(store: Store, path: Path, data: bytes) -> str:
    path.write_bytes(data)
    before = [r.uuid for r in store.list_runs()]
    with pytest.raises(BundleError) as caught:
        bundle.import_bundle(store, path, {}, check_setup)
    message = str(caught.value)
    assert message.startswith(f"cannot import {path}: ") and "\n" not in message
    assert caught.value.exit_code == 2
    assert [r.uuid for r in store.list_runs()] == before  # nothing stored
    return message


def _document(data: bytes) -> Document:
    document: Document = json.loads(gzip.decompress(data))
    return document


def _packed(document: Document | str) -> bytes:
    text = document if isinstance(document, str) else json.dumps(document)
    return gzip.compress(text.encode("utf-8", "surrogatepass"))


def _changed(good: bytes, change: Callable[[Document], Any]) -> bytes:
    document = _document(good)
    change(document)
    return _packed(document)


def _second(document: Document) -> Document:
    run: Document = document["runs"][1]
    return run


MUTATIONS: dict[str, tuple[Callable[[Document], Any], str]] = {
    "wrong version type": (lambda d: d.update(version="1"), 'version is "1", not a bundle'),
    "newer version": (lambda d: d.update(version=2), "upgrade volbench to import it"),
    "no runs": (lambda d: d.update(runs=[]), "runs is empty"),
    "runs not a list": (lambda d: d.update(runs={}), "runs is an object, not a list"),
    "unknown field": (lambda d: d.update(extra=1), "extra is not a field of a bundle of its"),
    "running": (
        lambda d: _second(d).update(status="running"),
        "runs[1].status says run ",
    ),
    "unknown status": (lambda d: _second(d).update(status="paused"), "runs[1].status is"),
    "bad uuid": (lambda d: _second(d).update(uuid="not-a-uuid"), "runs[1].uuid is"),
    "same uuid twice": (
        lambda d: _second(d).update(uuid=d["runs"][0]["uuid"]),
        "runs[1].uuid ",
    ),
    "missing field": (lambda d: _second(d).pop("plan"), "runs[1].plan is missing"),
    "huge byte count": (
        lambda d: _second(d)["results"][0].update(io_bytes=2**70),
        "runs[1].results[0].io_bytes 1180591620717411303424 is not between 0 and",
    ),
    "huge round": (
        lambda d: _second(d)["rounds"][0].update(round=2**40),
        "runs[1].rounds[0].round 1099511627776 is not between 0 and 2147483647",
    ),
    "huge series time": (
        lambda d: _second(d)["series"][0]["points"][0].__setitem__(0, 2**64),
        "runs[1].series[0].points[0] is [18446744073709551616, 500], not [time",
    ),
    "huge workload figure": (
        lambda d: _second(d)["results"][0]["workload"].update(iodepth=10**30),
        "runs[1].results[0].workload.iodepth 1000000000000000000000000000000 is beyond",
    ),
    "huge settings figure": (
        lambda d: _second(d)["settings"].update(blocks=-(10**30)),
        "runs[1].settings.blocks -1000000000000000000000000000000 is beyond",
    ),
    "planned workload of an unknown rw": (
        lambda d: _second(d)["settings"].update(planned=[{"name": "a", "rw": "; rm"}]),
        "runs[1].settings invalid value for type, expected RW @ $.planned[0].rw",
    ),
    "places a text": (
        lambda d: _second(d)["settings"].update(places="/dev/sda"),
        "runs[1].settings",
    ),
    "host probe without an address": (
        lambda d: _second(d)["settings"].update(hosts=[{"answers": True, "seconds": 0.1}]),
        "runs[1].settings required field missing @ $.hosts[0].address",
    ),
    "quick options of the wrong type": (
        lambda d: _second(d)["settings"].update(quick={"runtime_s": "long", "iodepth": 4}),
        "runs[1].settings (quick) invalid value for type, expected float @ $.runtime_s",
    ),
    "iops as text": (
        lambda d: _second(d)["results"][0].update(iops="fast"),
        "runs[1].results[0].iops is text, not a number",
    ),
    "label value a number": (
        lambda d: _second(d)["labels"].update(vendor=5),
        "runs[1].labels.vendor is the number 5, not text",
    ),
    "target size as text": (
        lambda d: _second(d)["target"].update(capacity_bytes="1 TB"),
        "runs[1].target invalid value for type, expected int @ $.capacity_bytes",
    ),
    "host CPUs as text": (
        lambda d: _second(d)["host"].update(cpu_count="two"),
        "runs[1].host invalid value for type, expected int @ $.cpu_count",
    ),
    "target a list": (lambda d: _second(d).update(target=[]), "runs[1].target is a list, not"),
    "point a text": (
        lambda d: _second(d)["series"][1]["points"].append([2000, "x"]),
        'runs[1].series[1].points[1] is [2000, "x"], not [time',
    ),
    "stall resolved as text": (
        lambda d: _second(d)["stalls"][0].update(resolved="no"),
        "runs[1].stalls[0].resolved is text, not true or false",
    ),
    "time without zone": (
        lambda d: _second(d).update(started_at="2024-05-01T12:00:00"),
        'runs[1].started_at is "2024-05-01T12:00:00", not an ISO 8601 time with a time zone',
    ),
    "result of no round": (
        lambda d: _second(d)["results"][0].update(round=7),
        "runs[1].results[0].round is 7, a round the run's rounds do not hold",
    ),
    "round twice": (
        lambda d: _second(d)["rounds"].append(_second(d)["rounds"][0]),
        "runs[1].rounds[1].round 0 is there twice",
    ),
    "direction unknown": (
        lambda d: _second(d)["results"][0].update(direction="sideways"),
        'runs[1].results[0].direction is "sideways", not one of',
    ),
    "NUL in a name": (
        lambda d: _second(d)["results"][0].update(test="a\x00b"),
        "runs[1].results[0].test holds a NUL character",
    ),
    "long label key": (
        lambda d: _second(d)["labels"].update({"k" * 201: "v"}),
        "runs[1].labels (a key) is 201 characters long, more than the store keeps (200)",
    ),
    "deep settings": (
        lambda d: _second(d)["settings"].update(deep=json.loads("[" * 80 + "]" * 80)),
        "nests more than 64 levels deep",
    ),
    "workload field of a wrong type": (
        lambda d: _second(d)["results"][0]["workload"].update(iodepth=4.5),
        "runs[1].results[0].workload.iodepth is 4.5, not what it can be",
    ),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_a_changed_bundle_is_refused_and_stores_nothing(
    good: bytes, store: Store, tmp_path: Path, case: str
) -> None:
    change, expected = MUTATIONS[case]
    message = _refused(store, tmp_path / "bad.vbundle", _changed(good, change))
    assert expected in message, message
    assert any(hint in message for hint in ("export", "upgrade volbench", "import"))


def test_broken_files_are_refused(good: bytes, store: Store, tmp_path: Path) -> None:
    path = tmp_path / "bad.vbundle"
    text = gzip.decompress(good).decode()
    assert "is truncated (it ends inside its gzip stream): copy it again, or export" in (
        _refused(store, path, good[: len(good) // 2])
    )
    assert "is damaged (gzip: " in _refused(store, path, good[:-8] + b"\x00" * 8)  # its CRC
    cut = _refused(store, path, text[: len(text) // 2].encode())  # plain JSON, cut
    assert "is not valid JSON at line 1 column" in cut and "export the runs again" in cut
    infinite = re.sub(r'"iops":[0-9.eE+-]+', '"iops":1e400', text, count=1)
    beyond = "runs[0].results[0].iops is a number beyond what JSON can hold"
    assert beyond in _refused(store, path, _packed(infinite))
    nan = re.sub(r'"iops":[0-9.eE+-]+', '"iops":NaN', text, count=1)
    assert "NaN is not a JSON number" in _refused(store, path, _packed(nan))
    surrogate = text.replace('"plan":"import"', '"plan":"\\ud800"', 1)
    assert "runs[0].plan holds a lone UTF-16 surrogate" in _refused(store, path, _packed(surrogate))
    deep = '{"schema":"volbench.bundle","version":1,"runs":' + "[" * 100_000 + "]" * 100_000 + "}"
    assert "nests arrays or objects deeper" in _refused(store, path, _packed(deep))
    other = _packed({"schema": "something.else", "jobs": []})
    assert "is not a volbench bundle (its schema is" in _refused(store, path, other)
    run_document = b'{\n  "schema": "volbench.run/1",\n  "id": 1\n}\n'
    assert "export --format json print, for reading), not a bundle" in _refused(
        store, path, run_document
    )
    assert "is not UTF-8 text at byte" in _refused(store, path, gzip.compress(b"{\xff}"))


def test_a_bundle_decompressed_imports_as_well(good: bytes, store: Store, tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_bytes(gzip.decompress(good))
    assert bundle.recognise(path)
    received = bundle.import_bundle(store, path, {})
    assert [r.added for r in received] == [True, True]


def test_a_store_failing_half_way_stores_nothing(
    good: bytes, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second run's insert fails in the database: the first is not kept either."""
    path = tmp_path / "good.vbundle"
    path.write_bytes(good)
    calls: list[int] = []
    insert = Store._insert_record

    def failing(conn: Any, record: Any, labels: Any) -> int:
        calls.append(1)
        if len(calls) == 2:
            conn.exec_driver_sql("INSERT INTO runs (id) VALUES (NULL)")  # NOT NULL: fails
        return insert(conn, record, labels)

    monkeypatch.setattr(Store, "_insert_record", staticmethod(failing))
    before = store.list_runs()
    with pytest.raises(Exception, match="result store"):
        bundle.import_bundle(store, path, {})
    assert store.list_runs() == before and len(calls) == 2


def test_the_command_says_it_in_one_line(
    good: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "cut.vbundle"
    path.write_bytes(good[:100])
    monkeypatch.setattr(
        "sys.argv", ["volbench", "import", str(path), "--db", str(tmp_path / "t.db")]
    )
    with pytest.raises(SystemExit) as ended:
        main()
    err = capsys.readouterr().err
    assert ended.value.code == 2
    assert err.startswith(f"volbench: error: cannot import {path}: it is truncated")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bundle_imports_under_a_3_gib_address_space_limit(good: bytes, tmp_path: Path) -> None:
    """Issue 22: every import of a bundle failed with a MemoryError under ``ulimit -v``
    of 3 GB (gzip's read asked for a 4 GiB buffer at once); it is read in chunks now."""
    path = tmp_path / "good.vbundle"
    path.write_bytes(good)
    limit = 3 << 30

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "volbench", "import", str(path), "--db", str(tmp_path / "t.db")],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=limited,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("added run") == 2


def test_a_bundle_expanding_beyond_its_limit_is_refused_as_it_is_read(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 MiB of zeros packed into a few KB: refused once 1 MiB is expanded."""
    monkeypatch.setattr(bundle, "MAX_EXPANDED_BYTES", 1 << 20)
    bomb = gzip.compress(b'{"schema":"volbench.bundle","version":1,"runs":[' + b" " * (8 << 20))
    assert len(bomb) < 20_000
    message = _refused(store, tmp_path / "bomb.vbundle", bomb)
    assert message.endswith(
        "expands to more than 1 MiB, more than volbench reads at once: export fewer runs per bundle"
    )
    plain = b'{"schema":"volbench.bundle","version":1,"runs":[' + b" " * (2 << 20)
    assert "expands to more than 1 MiB" in _refused(store, tmp_path / "plain.vbundle", plain)


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A bundle of one captured workload (blkparse output imported)."""
    with Store.open(str(tmp_path_factory.mktemp("captured") / "source.db")) as source:
        stored = capture.import_blkparse(source, BLKPARSE, {}, "mixed")
        return bundle.dump([source.get_run(stored.run_id)])


def _profile(document: Document) -> Document:
    profile: Document = document["runs"][0]["settings"]["profile"]
    return profile


PROFILE_CHANGES: dict[str, tuple[Callable[[Document], Any], str]] = {
    "no synthetic job": (
        lambda p: p.pop("synthetic"),
        "required field missing @ $.profile.synthetic",
    ),
    "no trim count": (lambda p: p["counts"].pop("trim"), "@ $.profile.counts.trim"),
    "no hottest 20%": (lambda p: p["hot_pct"].pop("20"), "missing @ $.profile.hot_pct.20"),
    "a pattern without its share": (
        lambda p: p.update(pattern_shares=[]),
        "a pattern without its share row @ $.profile.patterns[0]",
    ),
    "a second of two figures": (
        lambda p: p["per_second"][0].pop(),
        "@ $.profile.per_second",
    ),
    "queue depth as text": (
        lambda p: p.update(qd_max="deep"),
        "invalid value for type, expected int @ $.profile.qd_max",
    ),
}


@pytest.mark.parametrize("case", sorted(PROFILE_CHANGES))
def test_a_capture_profile_show_cannot_read_is_refused_at_import(
    captured: bytes, store: Store, tmp_path: Path, case: str
) -> None:
    """Issue 22: a bundle whose capture profile lacked a field imported, then ``show``,
    ``report`` and ``workload`` raised KeyError (report/workload_sheets.py:66)."""
    change, expected = PROFILE_CHANGES[case]
    data = _changed(captured, lambda d: change(_profile(d)))
    path = tmp_path / "bad.vbundle"
    path.write_bytes(data)
    before = [r.uuid for r in store.list_runs()]
    with pytest.raises(BundleError) as caught:
        import_path(store, path, {}, check_setup)
    message = str(caught.value)
    assert message.startswith(f"cannot import {path}: runs[0].settings (capture) ")
    assert expected in message and "\n" not in message
    assert [r.uuid for r in store.list_runs()] == before


def test_a_stored_profile_show_cannot_read_is_one_line(captured: bytes) -> None:
    """A store changed by something else: the sheets read the profile through the same
    typed record, so ``show``/``report`` say where in one line (exit 2)."""
    (run,) = bundle.load(captured, "captured.vbundle")
    assert report_for(run)[0][0].title.startswith("Workload mixed")
    options = dict(run.settings.options)
    options["profile"] = {k: v for k, v in options["profile"].items() if k != "sizes"}
    broken = dataclasses.replace(run, settings=dataclasses.replace(run.settings, options=options))
    with pytest.raises(RecordError) as caught:
        report_for(broken)
    assert str(caught.value) == (
        f"run {run.id}: its stored settings: required field missing @ $.profile.sizes"
    )
    assert caught.value.exit_code == 2


CONTRADICTED: dict[str, tuple[str, Any, str]] = {
    "negative IOPS": ("iops", -5.0, "results[0].iops is -5.0: fio's figures are never negative"),
    "negative latency": ("lat_mean_ns", -1.0, "results[0].lat_mean_ns is -1.0: fio's figures"),
    "IOPS above fio's": ("iops", 1e9, "results[0].iops is 1000000000.0, more than the round's"),
    "bytes above fio's": ("io_bytes", 10**15, "results[0].io_bytes is 1000000000000000, more"),
    "a latency below fio's": ("lat_p50_ns", 1.0, "results[0].lat_p50_ns is 1.0, outside the"),
    "a maximum above fio's": ("lat_max_ns", 1e12, "results[0].lat_max_ns is 1000000000000.0,"),
    "no jobs": ("jobs", 0, "results[0].jobs is 0: a row merges at least one"),
}


@pytest.mark.parametrize("case", sorted(CONTRADICTED))
def test_figures_the_bundles_own_fio_output_contradicts_are_refused(
    good: bytes, store: Store, tmp_path: Path, case: str
) -> None:
    """Issue 22: bundles stored negative IOPS and latencies that the fio output they
    carry contradicts; each row is now checked against its round's output, as the
    import of fio's JSON checks it (bundle_figures.py)."""
    name, value, expected = CONTRADICTED[case]

    def change(document: Document) -> None:
        document["runs"][0]["results"][0][name] = value

    message = _refused(store, tmp_path / "bad.vbundle", _changed(good, change))
    assert expected in message, message
    assert any(hint in message for hint in ("export", "upgrade volbench", "import"))


def test_a_round_whose_output_is_not_fios_is_refused(
    good: bytes, store: Store, tmp_path: Path
) -> None:
    data = _changed(good, lambda d: d["runs"][0]["rounds"][0].update(fio_output='{"jobs": 5}'))
    message = _refused(store, tmp_path / "bad.vbundle", data)
    assert "runs[0].rounds (round 0).fio_output is not fio's output: a whole number where" in (
        message
    )
