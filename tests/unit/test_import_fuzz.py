"""Fuzzing ``volbench import`` in-process with mutated recorded fio outputs.

Each mutation of a fixture in tests/fixtures/fio (see :mod:`mutation`) is written to
a file and imported by :func:`volbench.plans.imported.importing.import_file` (what the
``import`` command calls) into a real SQLite store. Every outcome must be either a
refusal -- a one-line :class:`UsageError` naming the file, with nothing stored (no
run, round or result row) -- or an import whose every stored figure is one fio can
produce (:func:`impossible`), whose times make sense (:func:`impossible_times`: within
fio's lifetime, never ending before they start) and which travels: exported as a
bundle and imported into an empty store, it reads back equal but for its id
(:func:`round_trip`). Any other exception fails the test.

The mutations (:mod:`mutation`) include numbers beyond 64 bits and of 400 digits,
texts and keys at and beyond the store's bounds, and times out of fio's lifetime or
out of order. CI runs :data:`MUTATIONS` = 2,000 with seed :data:`SEED` (about 30 s on
the 2-core development machine); ``VOLBENCH_FUZZ_MUTATIONS=N`` runs N (and
``VOLBENCH_FUZZ_SEED`` another seed). Longer runs are reported in BENCHMARKS.md
("import fuzzing").
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from mutation import Mutator
from recorded import FIO_FIXTURES, fixture_text

from volbench.errors import UsageError
from volbench.fio.document import LONG_LONG_MAX
from volbench.fio.parser import MAX_CPU_PCT, MAX_IOPS, parse
from volbench.model import RunRecord, RunStatus, StoredResult
from volbench.plans.imported.importing import import_file
from volbench.store import bundle
from volbench.store.limits import EARLIEST, latest
from volbench.store.repository import Store

SEED = int(os.environ.get("VOLBENCH_FUZZ_SEED", "20261124"))
MUTATIONS = int(os.environ.get("VOLBENCH_FUZZ_MUTATIONS", "2000"))

FIXTURES = [
    *sorted(p.name for p in FIO_FIXTURES.iterdir() if p.suffix in (".json", ".txt")),
    "quick/round-000.json",
    "logs/output.json",
]

PERCENTILES = ("lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_p999_ns", "lat_p9999_ns")
NUMBERS = ("iops", "bw_bytes_per_s", "runtime_ms", "usr_cpu_pct", "sys_cpu_pct")
LATENCIES = ("lat_min_ns", "lat_mean_ns", "lat_max_ns", "lat_stddev_ns", *PERCENTILES)


def _slack(value: float) -> float:
    """One histogram bucket at ``value`` ns (<= 1/64 of it, fio stat.h), or one usec
    bucket of fio 2.x (1000 ns), plus rounding."""
    return value / 64 + 1000.0


def impossible(result: StoredResult) -> list[str]:
    """What fio cannot have produced in one stored result row."""
    found: list[str] = []
    for name in (*NUMBERS, *LATENCIES):
        value = getattr(result, name)
        if value is not None and not (isinstance(value, float) and math.isfinite(value)):
            found.append(f"{name}={value!r} is not a finite float")
        elif value is not None and value < 0:
            found.append(f"{name}={value!r} is negative")
    if found:
        return found
    jobs = result.jobs
    checks = {
        "jobs >= 1": jobs >= 1,
        "io_bytes is a 64-bit count": isinstance(result.io_bytes, int)
        and 0 <= result.io_bytes <= LONG_LONG_MAX,
        "runtime within 64 bits": result.runtime_ms <= LONG_LONG_MAX,
        "iops within fio's bound": result.iops <= MAX_IOPS * jobs,
        "bandwidth within the bytes moved": result.bw_bytes_per_s
        <= 1000.0 * result.io_bytes + 1024.0 * jobs,
        "rates need a runtime": result.runtime_ms >= 1 or result.iops == result.bw_bytes_per_s == 0,
        "cpu within every CPU": max(result.usr_cpu_pct, result.sys_cpu_pct) <= MAX_CPU_PCT,
    }
    if result.lat_kind is not None:
        low, mean, high = result.lat_min_ns, result.lat_mean_ns, result.lat_max_ns
        stddev = result.lat_stddev_ns
        assert low is not None and mean is not None and high is not None and stddev is not None
        checks["lat kind"] = result.lat_kind in ("lat", "clat")
        checks["min <= mean <= max"] = low - 10 <= mean <= high + 10 + high * 1e-9
        checks["stddev within min..max"] = stddev <= high - low + 10 + high * 1e-9
        pcts = [v for v in (getattr(result, p) for p in PERCENTILES) if v is not None]
        checks["percentiles rise"] = pcts == sorted(pcts)
        checks["percentiles within a bucket of min..max"] = all(
            low - _slack(low) <= v <= high + _slack(high) for v in pcts
        )
    else:
        checks["no latency figures without a kind"] = all(
            getattr(result, name) is None for name in LATENCIES
        )
    return found + [
        f"{result.test}/{result.direction}: not {what}" for what, ok in checks.items() if not ok
    ]


def impossible_times(run: RunRecord) -> list[str]:
    """What is wrong with a stored run's times (run, rounds, stalls): not ISO 8601 with
    a zone, outside fio's lifetime (2005 to now and a day), or a span that ends before
    it starts."""
    found = []
    spans = [("run", run.started_at, run.ended_at)]
    spans += [(f"round {r.round}", r.started_at, r.ended_at) for r in run.rounds]
    spans += [(f"stall {s.test[:20]}", s.started_at, s.ended_at) for s in run.stalls]
    last = latest(datetime.now(UTC))
    for what, start, end in spans:
        stamps: list[datetime] = []
        for value in (start, end):
            try:
                stamp = datetime.fromisoformat(value) if value is not None else None
            except ValueError:
                found.append(f"{what}: {value!r} is not an ISO 8601 time")
                continue
            if stamp is None:
                continue
            if stamp.utcoffset() is None:
                found.append(f"{what}: {value!r} has no zone")
            elif not EARLIEST <= stamp <= last:
                found.append(f"{what}: {value!r} is outside fio's lifetime")
            else:
                stamps.append(stamp)
        if len(stamps) == 2 and stamps[1] < stamps[0]:
            found.append(f"{what}: ends {end} before it starts {start}")
    return found


def impossible_run(run: RunRecord) -> list[str]:
    """What is wrong with a stored imported run: its status, its times
    (:func:`impossible_times`), its raw JSON (which the reports parse again) and every
    result row."""
    found = [] if run.status is RunStatus.COMPLETED else [f"status {run.status}"]
    found += impossible_times(run)
    if len(run.raw_outputs) != 1:
        found.append(f"{len(run.raw_outputs)} raw outputs")
    else:
        parse(run.raw_outputs[0])  # raises if the stored JSON no longer parses
    for result in run.results:
        found.extend(impossible(result))
    return found


def round_trip(run: RunRecord, empty: Store, path: Path) -> list[str]:
    """What differs when ``run`` is exported as a bundle (written to ``path``) and
    imported into the store ``empty`` (empty again afterwards): nothing, or the
    one-line refusal of a bundle volbench wrote."""
    path.write_bytes(bundle.dump([run]))
    try:
        (received,) = bundle.import_bundle(empty, path, {})
    except UsageError as exc:
        return [f"its bundle is refused: {exc}"]
    try:
        moved = empty.get_run(received.run_id)
        if moved != dataclasses.replace(run, id=moved.id):
            return ["the run read back from its bundle differs"]
        return []
    finally:
        empty.delete_run(received.run_id)


def _rows(db: Path) -> list[int]:
    """[runs, rounds, results] rows in the store, counted by SQLite itself."""
    with sqlite3.connect(db) as conn:
        return [
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("runs", "rounds", "results")
        ]


def test_recorded_outputs_import_with_possible_figures(tmp_path: Path) -> None:
    """The checker accepts every unmutated fixture (no false alarms), and each travels
    through a bundle into an empty store and back."""
    valid, empty_db = str(tmp_path / "valid.db"), str(tmp_path / "empty.db")
    with Store.open(valid) as store, Store.open(empty_db) as empty:
        for name in FIXTURES:
            run = store.get_run(import_file(store, FIO_FIXTURES / name, {}))
            assert impossible_run(run) == [], name
            assert round_trip(run, empty, tmp_path / "run.vbundle") == [], name


def test_the_time_checks_find_what_they_must(tmp_path: Path) -> None:
    """A run ending before it starts, in year 1 or without a zone is impossible."""
    with Store.open(str(tmp_path / "valid.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / FIXTURES[0], {}))
    start, end = "2020-01-02T00:00:00+00:00", "2020-01-01T00:00:00+00:00"
    assert impossible_times(dataclasses.replace(run, started_at=start, ended_at=end)) == [
        f"run: ends {end} before it starts {start}"
    ]
    far = dataclasses.replace(run, started_at="0001-01-01T00:00:00+00:00")
    assert impossible_times(far) == ["run: '0001-01-01T00:00:00+00:00' is outside fio's lifetime"]
    naive = dataclasses.replace(run, started_at="2020-01-01T00:00:00")
    assert impossible_times(naive) == ["run: '2020-01-01T00:00:00' has no zone"]


def test_import_fuzz(tmp_path: Path) -> None:
    db = tmp_path / "fuzz.db"
    rng = random.Random(SEED)
    mutators = [Mutator(fixture_text(name), rng) for name in FIXTURES]
    outcome: Counter[str] = Counter()
    problems: list[str] = []
    target = tmp_path / "mutant.json"
    moved = tmp_path / "moved.vbundle"
    # the empty store in memory: SQLite as on disk, without a sync per transaction
    with Store.open(str(db)) as store, Store.open("sqlite://") as empty:
        for number in range(MUTATIONS):
            data, what = rng.choice(mutators).mutate()
            target.write_bytes(data)
            before = _rows(db)
            try:
                run_id = import_file(store, target, {})
            except UsageError as exc:
                outcome["refused"] += 1
                message = str(exc)
                if "\n" in message or not message.startswith(f"cannot import {target}: "):
                    problems.append(f"#{number} {what}: message {message!r}")
                if _rows(db) != before:
                    problems.append(f"#{number} {what}: refused but stored {_rows(db)}")
            except Exception as exc:  # counting what escapes is the test
                outcome["uncaught"] += 1
                problems.append(f"#{number} {what}: {type(exc).__name__}: {exc!s:.200}")
            else:
                outcome["imported"] += 1
                run = store.get_run(run_id)
                found = impossible_run(run) + round_trip(run, empty, moved)
                problems.extend(f"#{number} {what}: {p}" for p in found)
    print(f"seed {SEED}: {MUTATIONS} mutations, {dict(outcome)}")
    assert problems == [], f"{len(problems)} problems, first: {problems[:5]}"
    assert outcome["imported"] > MUTATIONS // 20  # the mutations leave many files importable
    assert outcome["refused"] > MUTATIONS // 2
