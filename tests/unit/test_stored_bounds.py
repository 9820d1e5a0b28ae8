"""Issue 31, items 1-3: what the store can hold is checked where values are read, in
one line of exit code 2; a bug exits 70; stored runs make sense; and whatever is
accepted travels through a bundle and back, on SQLite and on PostgreSQL.

The bounds are :mod:`volbench.store.limits`; each test names the finding it guards.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.cli.main import INTERNAL_ERROR, main
from volbench.errors import StoreError, UsageError
from volbench.fio.document import load
from volbench.model import RunRecord, RunSettings, TargetInfo
from volbench.plans.imported.importing import import_file
from volbench.plans.placement.named import places_from
from volbench.store import bundle
from volbench.store.bundle_values import BundleError
from volbench.store.limits import (
    HOSTNAME_CHARS,
    LABEL_KEY_CHARS,
    LABEL_VALUE_CHARS,
    NAME_CHARS,
    OPTION_CHARS,
    RUN_ID_MAX,
    TEXT_CHARS,
)
from volbench.store.repository import Store

ROOT = Path(__file__).resolve().parents[2]
BEYOND_64_BITS = "99999999999999999999"


def _main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str]:
    """The real entry point in this process: (exit code, stderr)."""
    monkeypatch.setattr("sys.argv", ["volbench", *argv])
    try:
        main()
    except SystemExit as ended:
        code = int(ended.code or 0)
    else:
        code = 0
    return code, capsys.readouterr().err


def _write(tmp_path: Path, document: dict[str, Any], name: str = "output.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def _refused(store: Store, path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        import_file(store, path, {})
    message = str(caught.value)
    assert message.startswith(f"cannot import {path}: ") and "\n" not in message
    assert caught.value.exit_code == 2 and store.list_runs() == []
    return message


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store (VOLBENCH_DB) holding run 1, an imported fio output."""
    db = str(tmp_path / "store.db")
    monkeypatch.setenv("VOLBENCH_DB", db)
    with Store.open(db) as store:
        import_file(store, FIO_FIXTURES / "randread_json.json", {})
    return db


# --- item 1: run ids and numbers beyond 64 bits, huge texts, a bug's exit code

COMMANDS_TAKING_RUN = [
    ("show", BEYOND_64_BITS),
    ("report", BEYOND_64_BITS, "-o", "r.html"),
    ("export", "1", BEYOND_64_BITS),
    ("explain", BEYOND_64_BITS),
    ("compare", "1", BEYOND_64_BITS),
    ("label", BEYOND_64_BITS, "a=b"),
    ("check", BEYOND_64_BITS),
    ("delete", BEYOND_64_BITS, "--yes"),
    ("resume", BEYOND_64_BITS),
    ("pts-report", BEYOND_64_BITS),
    ("fingerprint", BEYOND_64_BITS),
    ("publish", str(2**63), "-o", "site"),
    ("qos", "fit", "0"),
    (
        "qos",
        "predict",
        "--capability",
        "iops=100",
        "--alpha",
        "0.1",
        "--tenant",
        "a:10",
        "--run",
        BEYOND_64_BITS,
    ),
    ("show", "0"),
    ("show", "9" * 5000),
]


@pytest.mark.parametrize(
    "argv", COMMANDS_TAKING_RUN, ids=[" ".join(a)[:40] for a in COMMANDS_TAKING_RUN]
)
def test_a_run_id_beyond_64_bits_is_one_line_for_every_command(
    imported: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
) -> None:
    """``show 99999999999999999999`` (and report, export, explain, compare, label,
    check) ended in OverflowError "int too large to convert to SQLite INTEGER"."""
    monkeypatch.chdir(Path(imported).parent)
    code, err = _main(monkeypatch, capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"a whole number from 1 to {RUN_ID_MAX:,}) or latest" in err and len(err) < 400


def test_the_largest_run_id_is_asked_for_and_not_found(
    imported: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _main(monkeypatch, capsys, "show", str(RUN_ID_MAX))
    assert (code, err) == (
        2,
        f"volbench: error: no run {RUN_ID_MAX} in sqlite:///{imported} (see volbench runs)\n",
    )
    with Store.open(imported) as store:
        with pytest.raises(StoreError, match="not a run: '9223372036854775808'"):
            store.get_run(RUN_ID_MAX + 1)  # the store's own callers are checked too
        assert store.get_run(" 1 ").id == 1


def test_every_id_a_run_can_have_is_looked_up_on_both_databases(db_url: str) -> None:
    """PostgreSQL's runs.id is 32 bits: an id beyond it was "integer out of range"."""
    with Store.open(db_url) as store:
        for run_id in (2**31, RUN_ID_MAX):
            with pytest.raises(StoreError, match=f"^no run {run_id} in "):
                store.set_labels(str(run_id), {"a": "b"})


def test_a_400_digit_number_is_refused_naming_its_field(tmp_path: Path) -> None:
    """``{"x":[0.5,1000...0]}`` ended in OverflowError in fio/document.py (the fast
    check of a list of numbers asked math.isfinite of a 400-digit integer)."""
    huge = "1" + "0" * 399
    with pytest.raises(Exception, match=r"\(400 chars\) is beyond a 64-bit integer .* at x\[1\]"):
        load(f'{{"x":[0.5,{huge}]}}')
    document = raw_document("randread_json.json")
    text = json.dumps(document)[:-1] + f', "x": [0.5, {huge}]}}'
    (tmp_path / "big.json").write_text(text)
    with Store.open(str(tmp_path / "store.db")) as store:
        assert _refused(store, tmp_path / "big.json").endswith("(fio prints C long long) at x[1]")


def test_a_100_mb_job_name_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A fio JSON with a 100 MB job name was accepted at 877 MB RSS (the store grew by
    300 MB, then runs, show, export and report ended in MemoryError). Refused now where
    it is read, by a volbench of at most 1 GiB of address space, in one line."""
    head, tail = json.dumps(raw_document("randread_json.json")).split('"randread"', 1)
    path = tmp_path / "name.json"
    with path.open("w") as out:
        out.write(head + '"')
        for _ in range(100):
            out.write("x" * 1_000_000)
        out.write('"' + tail)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "volbench", "import", str(path), "--db", str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr == (
        f"volbench: error: cannot import {path}: a string of 100,000,000 characters, more"
        f" than volbench keeps ({NAME_CHARS}) at jobs[0].jobname\n"
    )
    assert time.monotonic() - started < 60


def test_a_bug_exits_70_with_its_traceback(
    imported: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A traceback exited 1, volbench's code for "a check failed"."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(Store, "list_runs", broken)
    code, err = _main(monkeypatch, capsys, "runs")
    assert code == INTERNAL_ERROR == 70
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1] == (
        "volbench: internal error (a bug in volbench, exit 70): RuntimeError: a bug\\nover"
        " two lines; please report it with the traceback above"
    )
    assert "| 70 | a bug in volbench" in (ROOT / "docs/start/install.md").read_text()


# --- item 2: stored runs make sense


def test_an_output_without_jobs_starts_at_its_end(tmp_path: Path) -> None:
    """``"jobs": []`` was stored starting at the import and ending at fio's timestamp,
    days before: a duration of -566,709 s."""
    document = raw_document("randread_json.json")
    document["jobs"] = []
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(import_file(store, _write(tmp_path, document), {}))
    assert run.started_at == run.ended_at == "2026-11-22T03:21:30+00:00"
    assert run.rounds[0].started_at == run.rounds[0].ended_at == run.started_at
    assert run.settings.options["times"] == (
        "start: not stated, taken as its end; end: fio's timestamp"
    )


def test_a_job_start_after_the_end_is_refused(tmp_path: Path) -> None:
    document = raw_document("randread_json.json")
    document["jobs"][0]["job_start"] = document["timestamp_ms"] + 60_000
    with Store.open(str(tmp_path / "store.db")) as store:
        message = _refused(store, _write(tmp_path, document))
    assert (
        "job 'randread' started (2026-11-22T03:22:30+00:00, its job_start) after fio's" in message
    )
    assert message.endswith("its times contradict each other at timestamp_ms")


def _bundle(tmp_path: Path, change: Any) -> Path:
    """A bundle of one imported run, its document changed by ``change``."""
    with Store.open(str(tmp_path / "source.db")) as store:
        run_id = import_file(store, FIO_FIXTURES / "randread_json.json", {})
        document = json.loads(gzip.decompress(bundle.dump([store.get_run(run_id)])))
    change(document["runs"][0])
    path = tmp_path / "changed.vbundle"
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda run: run.update(started_at="0001-01-01T00:00:00+00:00"),
            "runs[0].started_at 0001-01-01T00:00:00+00:00 is before 2005-01-01, the year"
            " of fio's first release: no fio ran then, and no store keeps it",
        ),
        (
            lambda run: run.update(ended_at="2999-01-01T00:00:00+00:00"),
            "runs[0].ended_at 2999-01-01T00:00:00+00:00 is after ",
        ),
        (
            lambda run: run.update(ended_at="2010-01-01T00:00:00+00:00"),
            "runs[0].ended_at says the span ends (2010-01-01T00:00:00+00:00) before it starts",
        ),
        (
            lambda run: run["rounds"][0].update(started_at="2026-11-22T04:00:00+00:00"),
            "runs[0].rounds[0].ended_at says the span ends",
        ),
    ],
    ids=["year 1", "year 2999", "ends first", "round ends first"],
)
def test_a_bundle_of_impossible_times_is_refused(
    tmp_path: Path, change: Any, expected: str
) -> None:
    """A bundle starting in year 1 was accepted, with a duration of 62 billion s."""
    path = _bundle(tmp_path, change)
    with Store.open(str(tmp_path / "store.db")) as store:
        with pytest.raises(BundleError) as caught:
            bundle.import_bundle(store, path, {})
        assert store.list_runs() == []
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_the_store_keeps_a_run_from_ending_before_it_starts(db_url: str) -> None:
    """A measured run's end before its start (a remote fio's clock behind this one)
    is stored as its start; a start outside fio's lifetime is refused, on both
    databases alike."""
    with Store.open(db_url) as store:
        target = TargetInfo("/dev/x", "block", 1)
        run_id = store.create_run(
            "quick", target, {}, {}, RunSettings(), started_at="2026-01-01T12:00:00+00:00"
        )
        store.add_round(
            run_id,
            0,
            "{}",
            [],
            {},
            started_at="2026-01-01T12:00:05+00:00",
            ended_at="2026-01-01T12:00:01+00:00",
        )
        store.finish_run(run_id, "completed", ended_at="2025-12-31T00:00:00+00:00")
        run = store.get_run(run_id)
        assert run.ended_at == run.started_at == "2026-01-01T12:00:00+00:00"
        assert run.rounds[0].ended_at == run.rounds[0].started_at == "2026-01-01T12:00:05+00:00"
        with pytest.raises(StoreError, match=r"1970-01-01T00:00:00\+00:00 is before 2005-01-01"):
            store.create_run(
                "quick", target, {}, {}, RunSettings(), started_at="1970-01-01T00:00:00+00:00"
            )
        assert len(store.list_runs()) == 1


# --- item 3: one set of bounds, on SQLite and PostgreSQL alike


def _at_the_bounds(tmp_path: Path) -> list[Path]:
    """fio outputs whose job name, hosts and option values are as long as the store
    keeps: each imports, exports and imports back."""
    named = raw_document("randread_json.json")
    named["jobs"][0]["jobname"] = "n" * NAME_CHARS
    named["jobs"][0]["job options"]["filename"] = "/" + "f" * (OPTION_CHARS - 1)
    hosts = raw_document("client_server_jsonplus.txt")
    for entry, letter in zip(hosts["client_stats"], "ab", strict=False):
        entry["hostname"] = letter * HOSTNAME_CHARS
    return [_write(tmp_path, named, "named.json"), _write(tmp_path, hosts, "hosts.txt")]


def _beyond_the_bounds() -> Iterator[tuple[dict[str, Any], str]]:
    named = raw_document("randread_json.json")
    named["jobs"][0]["jobname"] = "n" * (NAME_CHARS + 1)
    yield named, "a string of 201 characters, more than volbench keeps (200) at jobs[0].jobname"
    host = raw_document("client_server_jsonplus.txt")
    host["client_stats"][0]["hostname"] = "h" * (HOSTNAME_CHARS + 1)
    yield host, "a string of 256 characters, more than volbench keeps (255) at client_stats[0]"
    grouped = raw_document("randread_json.json")
    grouped["jobs"] = [dict(grouped["jobs"][0], jobname="g" * 199, groupid=g) for g in (0, 10)]
    yield grouped, "with its group (-g0), more than the store keeps (200)"


def test_a_field_beyond_the_store_is_refused_at_the_input(tmp_path: Path) -> None:
    """On SQLite a job name over 200 characters, a label value over 1,000, a label key
    over 200 or a client hostname over 255 was stored, exported, then refused on import
    as "damaged or was changed"; on PostgreSQL the import failed with only "value too
    long for type character varying(200)". Refused at the input now, naming the field."""
    with Store.open(str(tmp_path / "store.db")) as store:
        for document, expected in _beyond_the_bounds():
            assert expected in _refused(store, _write(tmp_path, document))
        for labels, expected in [
            ({"k" * (LABEL_KEY_CHARS + 1): "v"}, "it is 201 characters long, more than the"),
            ({"k": "v" * (LABEL_VALUE_CHARS + 1)}, "it is 1,001 characters long, more than"),
        ]:
            with pytest.raises(StoreError, match=expected):
                import_file(store, FIO_FIXTURES / "randread_json.json", labels)
        assert store.list_runs() == []


def test_a_label_beyond_the_store_is_refused_on_the_command_line(
    imported: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for label, expected in [
        ("k" * 201 + "=v", "its key is 201 characters long, at most 200 (what the store keeps)"),
        ("k=" + "v" * 1001, "its value is 1,001 characters long, at most 1,000"),
    ]:
        for argv in (
            ("label", "1", label),
            ("import", str(FIO_FIXTURES / "randread_json.json"), "--label", label),
            ("runs", "--label", label),
        ):
            code, err = _main(monkeypatch, capsys, *argv)
            assert code == 2 and expected in err and err.count("\n") == 1, err
    with Store.open(imported) as store:
        assert len(store.list_runs()) == 1 and store.get_run(1).labels == {}


def test_a_place_the_store_cannot_name_is_refused_before_the_run() -> None:
    long_path = "/" + "d" * HOSTNAME_CHARS
    with pytest.raises(UsageError, match="more than the store keeps for one \\(255\\)"):
        places_from([long_path, "/x"], [])
    with pytest.raises(UsageError, match="a place's name \\(HOST:PATH\\) is 259 characters"):
        places_from(["/" + "d" * 255], ["h1"])
    assert places_from([long_path], [])[0].path == long_path  # one target: no place's name


def test_option_values_and_lists_beyond_the_store_are_left_out_or_cut(tmp_path: Path) -> None:
    """An option value of more than fio reads from a job file is not stated; a list of
    files longer than a text the store keeps is cut, saying how many are left out."""
    document = raw_document("randread_json.json")
    job = document["jobs"][0]
    job["job options"]["ioengine"] = "e" * (OPTION_CHARS + 1)
    document["jobs"] = [
        dict(job, **{"job options": dict(job["job options"], filename=f"/{i:05}" + "f" * 5000)})
        for i in range(20)
    ]
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(import_file(store, _write(tmp_path, document), {}))
    assert run.settings.ioengine is None
    assert run.target.path.endswith(",...(7 more)") and len(run.target.path) <= TEXT_CHARS
    assert run.target.path.count(",") == 13


def _equal_but_id(original: RunRecord, moved: RunRecord) -> None:
    assert moved == dataclasses.replace(original, id=moved.id)


def _round_trip(source: Store, target_url: str, tmp_path: Path) -> int:
    """Every run of ``source`` exported, imported into the empty store at
    ``target_url`` and read back equal; how many."""
    runs = [source.get_run(r.id) for r in source.list_runs()]
    path = tmp_path / "all.vbundle"
    path.write_bytes(bundle.dump(runs))
    with Store.open(target_url) as target:
        assert target.list_runs() == []
        received = bundle.import_bundle(target, path, {})
        for run, got in zip(runs, received, strict=True):
            assert got.added
            _equal_but_id(run, target.get_run(got.run_id))
    return len(runs)


def test_what_is_accepted_at_the_bounds_travels_and_comes_back(db_url: str, tmp_path: Path) -> None:
    """Imported into SQLite or PostgreSQL with a label at both bounds, exported and
    imported into an empty SQLite store: equal but for the ids."""
    labels = {"k" * LABEL_KEY_CHARS: "v" * LABEL_VALUE_CHARS}
    with Store.open(db_url) as store:
        for path in _at_the_bounds(tmp_path):
            run = store.get_run(import_file(store, path, labels))
            assert run.labels == labels
        assert {r.test for r in store.get_run("1").results} == {"n" * NAME_CHARS}
        assert {r.hostname for r in store.get_run("2").results} >= {"a" * 255, "b" * 255}
        assert _round_trip(store, str(tmp_path / "empty.db"), tmp_path) == 2


def test_every_accepted_import_round_trips_on_sqlite_and_postgresql(
    db_url: str, other_db_url: str, tmp_path: Path
) -> None:
    """Every recorded fio output, and the outputs at the bounds, imported into SQLite
    or PostgreSQL, exported, and imported into another empty store of the same
    database: equal but for the ids (the postgresql case needs VOLBENCH_TEST_PG_URL)."""
    names = sorted(p.name for p in FIO_FIXTURES.iterdir() if p.suffix in (".json", ".txt"))
    with Store.open(db_url) as store:
        for path in [*(FIO_FIXTURES / n for n in names), *_at_the_bounds(tmp_path)]:
            import_file(store, path, {"vendor": "x" * LABEL_VALUE_CHARS})
        assert _round_trip(store, other_db_url, tmp_path) == len(names) + 2


def test_the_bounds_are_the_schemas() -> None:
    """One set of constants: the columns are as long as the readers' bounds."""
    from volbench.store import schema

    lengths = {
        (table.name, column.name): column.type.length
        for table in schema.metadata.tables.values()
        for column in table.columns
        if getattr(column.type, "length", None)
    }
    assert lengths[("runs", "plan")] == lengths[("results", "test")] == NAME_CHARS
    assert lengths[("stalls", "test")] == lengths[("series", "test")] == NAME_CHARS
    assert lengths[("labels", "key")] == LABEL_KEY_CHARS
    assert lengths[("labels", "value")] == LABEL_VALUE_CHARS
    assert lengths[("results", "hostname")] == lengths[("series", "host")] == HOSTNAME_CHARS
