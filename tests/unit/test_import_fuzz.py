"""Fuzzing ``volbench import`` in-process with mutated recorded fio outputs.

Each mutation of a fixture in tests/fixtures/fio (see :mod:`mutation`) is written to
a file and imported by :func:`volbench.plans.importing.import_file` (what the
``import`` command calls) into a real SQLite store. Every outcome must be either a
refusal -- a one-line :class:`UsageError` naming the file, with nothing stored (no
run, round or result row) -- or an import whose every stored figure is one fio can
produce (:func:`impossible`). Any other exception fails the test.

CI runs :data:`MUTATIONS` = 2,000 with seed :data:`SEED` (about 20 s on the 2-core
development machine); ``VOLBENCH_FUZZ_MUTATIONS=N`` runs N (and
``VOLBENCH_FUZZ_SEED`` another seed). Longer runs are reported in BENCHMARKS.md
("import fuzzing").
"""

from __future__ import annotations

import math
import os
import random
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path

from mutation import Mutator
from recorded import FIO_FIXTURES, fixture_text

from volbench.errors import UsageError
from volbench.fio.document import LONG_LONG_MAX
from volbench.fio.parser import MAX_CPU_PCT, MAX_IOPS, parse
from volbench.model import RunRecord, RunStatus, StoredResult
from volbench.plans.importing import import_file
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


def impossible_run(run: RunRecord) -> list[str]:
    """What is wrong with a stored imported run: its status, its times (ISO 8601 UTC,
    1970 to 9999), its raw JSON (which the reports parse again) and every result row."""
    found = [] if run.status is RunStatus.COMPLETED else [f"status {run.status}"]
    for name, value in (("started_at", run.started_at), ("ended_at", run.ended_at)):
        try:
            stamp = datetime.fromisoformat(value) if value is not None else None
        except ValueError:
            stamp = None
            found.append(f"{name} {value!r} is not an ISO 8601 time")
        if stamp is not None and not (stamp.tzinfo and stamp.year >= 1970):
            found.append(f"{name} {value!r} is not a UTC time since fio's epoch")
    if len(run.raw_outputs) != 1:
        found.append(f"{len(run.raw_outputs)} raw outputs")
    else:
        parse(run.raw_outputs[0])  # raises if the stored JSON no longer parses
    for result in run.results:
        found.extend(impossible(result))
    return found


def _rows(db: Path) -> list[int]:
    """[runs, rounds, results] rows in the store, counted by SQLite itself."""
    with sqlite3.connect(db) as conn:
        return [
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("runs", "rounds", "results")
        ]


def test_recorded_outputs_import_with_possible_figures(tmp_path: Path) -> None:
    """The checker accepts every unmutated fixture (no false alarms)."""
    with Store.open(str(tmp_path / "valid.db")) as store:
        for name in FIXTURES:
            run_id = import_file(store, FIO_FIXTURES / name, {})
            assert impossible_run(store.get_run(run_id)) == [], name


def test_import_fuzz(tmp_path: Path) -> None:
    db = tmp_path / "fuzz.db"
    rng = random.Random(SEED)
    mutators = [Mutator(fixture_text(name), rng) for name in FIXTURES]
    outcome: Counter[str] = Counter()
    problems: list[str] = []
    target = tmp_path / "mutant.json"
    with Store.open(str(db)) as store:
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
                problems.extend(
                    f"#{number} {what}: {p}" for p in impossible_run(store.get_run(run_id))
                )
    print(f"seed {SEED}: {MUTATIONS} mutations, {dict(outcome)}")
    assert problems == [], f"{len(problems)} problems, first: {problems[:5]}"
    assert outcome["imported"] > MUTATIONS // 20  # the mutations leave many files importable
    assert outcome["refused"] > MUTATIONS // 2
