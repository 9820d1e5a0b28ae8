"""Hostile or broken files given to ``volbench import``: each place that raised a
traceback or stored an impossible figure before (issue 12, section 3) is refused
with one line naming the file, what is wrong and where, and stores nothing; what
fio can print still imports.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from recorded import fixture_text, raw_document

from volbench.errors import ParseError, UsageError
from volbench.fio.latency import bucket_width
from volbench.fio.parser import parse
from volbench.model import RunStatus
from volbench.plans.imported import importing
from volbench.plans.imported.importing import import_file
from volbench.store import bundle
from volbench.store.repository import Store

PLAIN = "randread_json.json"  # one job, clat percentiles, no bins


def _runs(db: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT id, status FROM runs"))


def _import(tmp_path: Path, content: str | dict[str, Any]) -> int:
    """Import ``content`` (text, or a document to dump) from a file into a store in
    ``tmp_path``; a refusal must leave no run, round or result behind."""
    source = tmp_path / "input.json"
    source.write_text(content if isinstance(content, str) else json.dumps(content))
    db = tmp_path / "store.db"
    with Store.open(str(db)) as store:
        try:
            return import_file(store, source, {})
        except UsageError as exc:
            message = str(exc)
            assert message.startswith(f"cannot import {source}: ") and "\n" not in message
            assert _runs(db) == []
            with sqlite3.connect(db) as conn:
                assert conn.execute("SELECT count(*) FROM results").fetchone() == (0,)
            raise


def _refused(tmp_path: Path, content: str | dict[str, Any]) -> str:
    with pytest.raises(UsageError) as info:
        _import(tmp_path, content)
    return str(info.value)


def _plain() -> dict[str, Any]:
    return raw_document(PLAIN)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused_and_leave_no_run(tmp_path: Path, literal: str) -> None:
    """int() of inf/NaN in the parser, and a NaN that left the run 'running'."""
    text = fixture_text(PLAIN)
    for field in ('"timestamp" : ', '"iops" : '):
        start = text.index(field) + len(field)
        end = text.index(",", start)
        broken = text[:start] + literal + text[end:]
        message = _refused(tmp_path, broken)
        assert literal in message and "at " in message


def test_integers_beyond_fios_64_bits_are_refused(tmp_path: Path) -> None:
    """Ints too large for a float or for SQLite."""
    doc = _plain()
    doc["jobs"][0]["read"]["io_bytes"] = 2**70
    assert "beyond a 64-bit integer" in _refused(tmp_path, doc)
    assert "at jobs[0].read.io_bytes" in _refused(tmp_path, doc)
    text = fixture_text(PLAIN).replace('"iops" : 34152.847153', f'"iops" : {10**400}.5', 1)
    assert "beyond a C double" in _refused(tmp_path, text)
    text = fixture_text(PLAIN).replace('"total_ios" : 34187', f'"total_ios" : {"9" * 5000}')
    assert "beyond a 64-bit integer" in _refused(tmp_path, text)


def test_clones_summing_beyond_64_bits_are_refused(tmp_path: Path) -> None:
    """Each clone's byte count is a valid 64-bit count; their sum is not storable."""
    doc = raw_document("numjobs4_jsonplus.json")
    for job in doc["jobs"]:
        job["read"]["io_bytes"] = 2**62
        job["read"]["io_kbytes"] = 2**52
    assert "more than 64 bits hold" in _refused(tmp_path, doc)


def _fio2_bins(bits: int) -> str:
    bins = {"FIO_IO_U_PLAT_BITS": bits, "FIO_IO_U_PLAT_VAL": 64, "FIO_IO_U_PLAT_NR": 1216}
    read = {"io_bytes": 8, "bw": 4, "iops": 1.0, "runtime": 2000, "total_ios": 2}
    clat = {"min": 100, "max": 129, "mean": 114.5, "stddev": 20.5, "bins": bins}
    bins.update({"100": 1, "128": 1})
    return json.dumps({"jobs": [{"jobname": "j", "read": {**read, "clat": clat}}]})


@pytest.mark.parametrize("bits", [-1, 0, 7, 2**40])
def test_plat_bits_other_than_fios_are_refused(bits: int) -> None:
    """A negative FIO_IO_U_PLAT_BITS was a negative shift, a huge one a MemoryError."""
    with pytest.raises(ParseError, match=r"at jobs\[0\]\.read\.clat\.bins\.FIO_IO_U_PLAT_BITS$"):
        parse(_fio2_bins(bits))
    assert parse(_fio2_bins(6)).jobs[0].directions["read"].latency is not None


@pytest.mark.parametrize(("key", "count"), [("abc", 1), ("-5", 1), ("100", -1), ("1.5", 1)])
def test_bins_with_bad_keys_or_counts_are_refused(key: str, count: int) -> None:
    doc = raw_document("numjobs4_jsonplus.json")
    doc["jobs"][0]["read"]["clat_ns"]["bins"][key] = count
    with pytest.raises(ParseError, match=r"at jobs\[0\]\.read\.clat_ns\.bins"):
        parse(json.dumps(doc))


@pytest.mark.parametrize(
    ("key", "count", "expected"),
    [
        ("100", True, 'a boolean where fio writes a whole number at {}["100"]'),
        ("100", 1.5, 'a number where fio writes a whole number at {}["100"]'),
        ("\u0663", 1, 'a bin key that is no histogram bucket at {}["\\u0663"]'),
        ("9" * 21, 1, "a bin key that is no histogram bucket at {}"),
        ("00100", 1, 'bin 100 beyond one bucket of min..max (5458.0..4090392.0) at {}["00100"]'),
    ],
)
def test_a_bad_bin_is_named_as_when_bins_were_read_one_by_one(
    key: str, count: object, expected: str
) -> None:
    """Bins are checked all at once (fio/latency.py), and read one by one only when
    that finds something wrong: the message names the first bad bin as before."""
    doc = raw_document("numjobs4_jsonplus.json")
    doc["jobs"][0]["read"]["clat_ns"]["bins"][key] = count
    with pytest.raises(ParseError) as refused:
        parse(json.dumps(doc))
    assert str(refused.value).startswith(expected.format("jobs[0].read.clat_ns.bins"))


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deep_nesting_is_refused(tmp_path: Path, depth: int) -> None:
    """100,000 levels raised RecursionError inside json."""
    text = '{"jobs": [], "x": ' + "[" * depth + "]" * depth + "}"
    assert "nests more than 32 levels" in _refused(tmp_path, text)


def test_clones_reporting_different_latency_blocks_merge_on_a_common_kind(tmp_path: Path) -> None:
    """'cannot merge different latency kinds': a clone without lat percentiles made
    the test's clones lat and clat; now every entry of the group reports clat."""
    doc = raw_document("randrw_lat_percentiles_jsonplus.json")
    clone = json.loads(json.dumps(doc["jobs"][0]))
    for direction in ("read", "write"):
        del clone[direction]["lat_ns"]["percentile"], clone[direction]["lat_ns"]["bins"]
    doc["jobs"].append(clone)
    output = parse(json.dumps(doc))
    kinds = {d.latency.kind for j in output.jobs for d in j.directions.values() if d.latency}
    assert kinds == {"clat"}
    alone = parse(fixture_text("randrw_lat_percentiles_jsonplus.json")).jobs[0]
    assert [d.latency.kind for d in alone.directions.values() if d.latency] == ["lat", "lat"]
    run_id = _import(tmp_path, doc)
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(run_id)
    read = next(r for r in run.results if r.direction == "read")
    raw_read = doc["jobs"][0]["read"]
    assert read.lat_kind == "clat" and read.jobs == 2
    assert read.lat_max_ns == raw_read["clat_ns"]["max"]
    assert read.iops == pytest.approx(2 * raw_read["iops"])
    for direction in ("read", "write"):  # lat in one entry, clat in the other: refused
        del clone[direction]["clat_ns"], doc["jobs"][0][direction]["lat_ns"]
    (tmp_path / "mixed").mkdir()
    assert "latency of different kinds" in _refused(tmp_path / "mixed", doc)


def test_truncated_json_says_it_ends_early(tmp_path: Path) -> None:
    text = fixture_text(PLAIN)
    for cut in (1, 700, len(text) - 5):
        size = len(text[:cut].encode())
        assert f"the JSON ends early (after {size} bytes)" in _refused(tmp_path, text[:cut])


def test_syntax_error_position_counts_from_the_start_of_the_file(tmp_path: Path) -> None:
    """fio's notes before the JSON count too: the position is the file's."""
    text = fixture_text("text_around_json_jsonplus.txt")
    assert text.index("{") > 0
    broken = text.replace('"jobname"', '"jobname" ?', 1)
    offset = broken.index("?")  # all ASCII: characters are bytes
    line = broken.count("\n", 0, offset) + 1
    column = offset - broken.rfind("\n", 0, offset)
    assert line > 1
    assert _refused(tmp_path, broken).endswith(
        f"fio output is not valid JSON: Expecting ':' delimiter"
        f" at line {line} column {column} (byte {offset})"
    )


@pytest.mark.parametrize(
    ("keys", "value", "expected"),
    [
        (("read", "iops"), -5000, "negative value -5000"),
        (("read", "iops"), 1e300, "is more than fio can produce"),
        (("read", "iops"), 50_000.0, "IOPS 50000.0 is not 34187 I/Os in 1001.0 ms"),
        (("read", "bw_bytes"), -1, "negative count -1"),
        (("read", "bw_bytes"), 10**12, "bandwidth 1000000000000.0 B/s above"),
        (("usr_cpu",), -50.0, "negative value -50.0"),
        (("read", "clat_ns", "min"), -3, "negative value -3"),
        (("read", "clat_ns", "mean"), 5e6, "mean 5000000.0 outside min..max"),
        (("read", "clat_ns", "stddev"), 3e6, "stddev 3000000.0 wider than min..max allows"),
        (("read", "clat_ns", "N"), 140029953, "completed I/Os in 140029952 bytes"),
        (("read", "clat_ns", "percentile", "99.000000"), -1, "negative count -1"),
        (("read", "runtime"), 0, "IOPS or bandwidth with a runtime of 0 ms"),
        (("read", "iops"), "5", "a string where fio writes a number"),
        (("read",), [], "a list where fio writes an object"),
        (("jobname",), "\ud800", "unpaired UTF-16 surrogate"),
        (("jobname",), "a\u0000b", "a NUL character"),
    ],
)
def test_values_fio_cannot_produce_are_refused(
    tmp_path: Path, keys: tuple[str, ...], value: Any, expected: str
) -> None:
    """Negative, impossible or mistyped figures, each refused where it is."""
    doc = _plain()
    target = doc["jobs"][0]
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    message = _refused(tmp_path, doc)
    assert expected in message
    assert message.endswith(f" at jobs[0].{keys[0]}") or f" at jobs[0].{keys[0]}." in message


def test_percentiles_may_pass_max_by_less_than_one_bucket() -> None:
    doc = _plain()
    clat = doc["jobs"][0]["read"]["clat_ns"]
    width = bucket_width(clat["max"])
    clat["percentile"]["100.000000"] = clat["max"] + width // 2  # a bucket's middle
    assert parse(json.dumps(doc)).jobs[0].directions["read"].latency is not None
    clat["percentile"]["100.000000"] = clat["max"] + width + 1
    with pytest.raises(ParseError, match=r"beyond one bucket of min\.\.max"):
        parse(json.dumps(doc))


def test_a_job_named_like_the_all_clients_aggregate_imports(tmp_path: Path) -> None:
    """A single-host job named 'all-clients' raised KeyError('places')."""
    doc = _plain()
    doc["jobs"][0]["jobname"] = "all-clients"
    run_id = _import(tmp_path, doc)
    assert _runs(tmp_path / "store.db") == [(run_id, RunStatus.COMPLETED.value)]


def test_option_values_that_are_no_numbers_are_left_out(tmp_path: Path) -> None:
    """iodepth '²' (isdigit, but int() refuses it) and a 5,000-digit size raised
    ValueError while the workload was read back; values fio cannot have read are not
    stated (no default of fio's filled in)."""
    doc = _plain()
    doc["jobs"][0]["job options"].update(iodepth="²", size="9" * 5000, numjobs="1" * 30)
    run_id = _import(tmp_path, doc)
    with Store.open(str(tmp_path / "store.db")) as store:
        workload = store.get_run(run_id).results[0].workload
    assert workload.iodepth is None and workload.numjobs is None and workload.size_bytes is None


def test_a_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "store.db")) as store, pytest.raises(UsageError) as info:
        import_file(store, tmp_path, {})
    assert str(info.value).startswith(f"cannot import {tmp_path}: ")


def test_the_import_command_exits_2_with_one_line(tmp_path: Path) -> None:
    source = tmp_path / "broken.json"
    source.write_text(fixture_text(PLAIN).replace('"iops" : 34152.847153', '"iops" : NaN'))
    db = tmp_path / "cli.db"
    done = subprocess.run(
        [sys.executable, "-m", "volbench", "import", str(source), "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"volbench: error: cannot import {source}: NaN is not a finite number"
        " (fio prints C doubles with %f) at jobs[0].read.iops\n"
    )
    assert _runs(db) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("timestamp_ms",), 2**63 - 1, "beyond year 9999 in ms since 1970 (253402300799999) at"),
        (("timestamp",), 10**12, "beyond year 9999 in s since 1970 (253402300799) at timestamp"),
        (("jobs", 0, "job_start"), 2**63 - 1, "beyond year 9999 in ms since 1970"),
        (("jobs", 0, "elapsed"), 2**63 - 1, "beyond year 9999 in s since 1970"),
        (("jobs", 0, "elapsed"), 10**12, "at jobs[0].elapsed"),
        (("jobs", 0, "groupid"), 2**32, "beyond fio's unsigned int (4294967295)"),
        (("jobs", 0, "error"), 2**31, "beyond fio's int (2147483647) at jobs[0].error"),
        (("jobs", 0, "port"), 65_536, "beyond a TCP port (65535) at jobs[0].port"),
    ],
)
def test_numbers_beyond_what_fio_or_a_time_holds_are_refused(
    tmp_path: Path, path: tuple[str | int, ...], value: int, expected: str
) -> None:
    """Issue 22: ``"timestamp_ms": 9223372036854775807`` raised ValueError (year
    292278994 is out of range) in imported_output.py; an elapsed of 2^63 - 1 s an
    OSError (EOVERFLOW), one of 10^12 s a start in year -29662."""
    doc = _plain()
    if path == ("timestamp",):
        del doc["timestamp_ms"]
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    message = _refused(tmp_path, doc)
    assert expected in message
    assert message.endswith(".".join(str(k) for k in path).replace(".0.", "[0]."))


def test_a_time_before_fios_first_release_is_refused(tmp_path: Path) -> None:
    """fio's timestamp, its timestamp less its elapsed, or its ``time`` alone, before
    2005 (issue 31: a small ``timestamp_ms`` was stored as a run ending before it
    started; before issue 31 the bound was 1970, where a datetime before year 1 raised
    ValueError)."""
    doc = _plain()
    doc.update(timestamp_ms=1_000, timestamp=1)
    assert _refused(tmp_path, doc).endswith(
        "1000 ms (1970-01-01T00:00:01+00:00) is before 2005-01-01, the year of fio's first"
        " release: not a time fio ran at (its machine's clock was not set, or the file was"
        " changed) at timestamp_ms"
    )
    doc.update(timestamp_ms=1_262_304_000_000, timestamp=1_262_304_000)  # 2010-01-01
    doc["jobs"][0]["elapsed"] = 6 * 365 * 86_400
    assert (
        "job 'randread', which ran 189216000 s (its elapsed) before fio's timestamp, started"
        " then (2004-01-03T00:00:00+00:00) is before 2005-01-01" in _refused(tmp_path, doc)
    )
    del doc["timestamp_ms"], doc["timestamp"]
    doc["time"] = "Mon Jan  1 00:00:00 0001"
    assert _refused(tmp_path, doc).endswith("was changed) at time")


def test_a_time_after_now_and_a_day_is_refused(tmp_path: Path) -> None:
    """Issue 31: the last second of year 9999 imported (a run of the future); a clock
    a few hours ahead (a local time read as UTC) still imports."""
    doc = _plain()
    doc.update(timestamp_ms=253_402_300_799_999, timestamp=253_402_300_799)
    message = _refused(tmp_path, doc)
    assert "(9999-12-31T23:59:59+00:00) is after " in message
    assert message.endswith(
        "(now and a day): not a time fio ran at (its machine's clock was"
        " not set, or the file was changed) at timestamp_ms"
    )
    ahead = int(time.time()) + 12 * 3600
    doc.update(timestamp_ms=ahead * 1000, timestamp=ahead)
    run_id = _import(tmp_path, doc)
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(run_id)
    assert run.started_at < run.ended_at  # less fio's elapsed of 2 s


def test_option_values_beyond_the_stores_64_bits_are_left_out(tmp_path: Path) -> None:
    """A size of 2^64 - 1 (fio reads it) and a 20-digit iodepth were stored as they
    were, so the run's bundle was refused when imported into another store."""
    doc = _plain()
    doc["jobs"][0]["job options"].update(size=str(2**64 - 1), iodepth="9" * 20, bs="8k")
    run_id = _import(tmp_path, doc)
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(run_id)
        data = bundle.dump([run])
    workload = run.results[0].workload
    assert workload.size_bytes is None and workload.iodepth is None
    assert workload.bs_bytes == 8192 and run.target.capacity_bytes == 0
    with Store.open(str(tmp_path / "other.db")) as other:
        (tmp_path / "run.vbundle").write_bytes(data)
        assert bundle.import_bundle(other, tmp_path / "run.vbundle", {})[0].added


def test_a_file_beyond_the_stated_size_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file is read up to MAX_FILE_BYTES and no further (``/dev/zero`` was read until
    memory ran out)."""
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", len(fixture_text(PLAIN)) - 1)
    message = _refused(tmp_path, fixture_text(PLAIN))
    assert message.endswith(
        "more than fio's JSON output of a run volbench imports (split the run's jobs)"
    )
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", 1 << 20)
    with Store.open(str(tmp_path / "zero.db")) as store, pytest.raises(UsageError) as info:
        import_file(store, Path("/dev/zero"), {})
    assert str(info.value) == (
        "cannot import /dev/zero: it is larger than 1 MiB, more than fio's JSON output of a"
        " run volbench imports (split the run's jobs)"
    )
