"""Fuzzing ``volbench import`` of bundles in-process with mutated real bundles.

The bundles are exported (:func:`volbench.store.bundle.dump`) from a store holding
runs made the way volbench makes them: recorded fio outputs imported (a plain one, a
json+ one of four jobs, a client/server one of two hosts), a run stopped by a stall
with per-second series of two hosts (test_bundle.py's), and a captured workload
imported from blkparse output (its trace and profile). Each mutation takes one of
them, changes its document with :class:`mutation.Mutator` (values replaced, scaled or
of another type, keys deleted, deep nesting, truncation, numbers replaced in the
text, byte flips; numbers beyond 64 bits and of 400 digits, texts and keys at and
beyond the store's bounds, times out of fio's lifetime or out of order), sometimes
mutates a round's fio output inside it the same way,
and writes it gzip-compressed (and then sometimes flipped or cut) or plain. It is
imported by :func:`volbench.plans.imported.importing.import_path` with the plans' checks
(what the ``import`` command calls) into a real SQLite store.

Every outcome must be a one-line :class:`~volbench.errors.VolbenchError` of exit
code 2 with nothing stored (no run, round, result, series or trace row), or an
import whose stored runs hold only possible figures
(:func:`test_import_fuzz.impossible`) and times (:func:`test_import_fuzz.impossible_times`:
within fio's lifetime, never ending before they start), whose raw outputs parse, whose
sheets ``show`` and ``report`` build (:func:`volbench.views.report_for`) and which
travel again: exported and imported into an empty store, equal
(:func:`test_import_fuzz.round_trip`). Any other exception fails the test, and so
does any input taking more than :data:`SECONDS_PER_INPUT`.

CI runs :data:`MUTATIONS` = 2,000 with seed :data:`SEED` (about 35 s on the 2-core
development machine); ``VOLBENCH_FUZZ_MUTATIONS=N`` runs N and
``VOLBENCH_FUZZ_SEED`` another seed.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from mutation import Mutator
from recorded import FIO_FIXTURES
from test_bundle import BLKPARSE, _failed_run
from test_import_fuzz import impossible, impossible_times, round_trip

from volbench.errors import VolbenchError
from volbench.fio.parser import parse
from volbench.plans import capture
from volbench.plans.imported.importing import import_file, import_path
from volbench.plans.kinds import check_setup
from volbench.store import bundle
from volbench.store.repository import Store
from volbench.views import report_for

SEED = int(os.environ.get("VOLBENCH_FUZZ_SEED", "20261126"))
MUTATIONS = int(os.environ.get("VOLBENCH_FUZZ_MUTATIONS", "2000"))
SECONDS_PER_INPUT = 10
TABLES = ("runs", "rounds", "results", "series", "traces", "stalls")
IMPORTED = ("randread_json.json", "numjobs4_jsonplus.json", "client_server_jsonplus.txt")


class TooLong(Exception):
    """An input read for more than SECONDS_PER_INPUT (raised by the alarm)."""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The decompressed text of one real bundle per run (see the module docstring)."""
    with Store.open(str(tmp_path_factory.mktemp("fuzz-source") / "source.db")) as store:
        ids = [import_file(store, FIO_FIXTURES / name, {"vendor": "x"}) for name in IMPORTED]
        ids.append(_failed_run(store))
        ids.append(capture.import_blkparse(store, BLKPARSE, {}, "mixed").run_id)
        return [gzip.decompress(bundle.dump([store.get_run(i)])).decode() for i in ids]


def _rows(db: Path) -> list[int]:
    """Rows of each table that holds what a bundle stores, counted by SQLite itself."""
    with sqlite3.connect(db) as conn:
        return [conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES]


def _mutated(rng: random.Random, text: str, mutator: Mutator) -> tuple[bytes, str]:
    """One hostile bundle file from ``text`` and what was done to it: the document
    mutated, or one round's fio output mutated inside an intact document; then
    gzip-compressed (sometimes flipped or cut after that) or left plain."""
    document = json.loads(text)
    rounds = [r for run in document["runs"] for r in run.get("rounds", [])]
    if rounds and rng.random() < 0.3:
        chosen = rng.choice(rounds)
        output, what = Mutator(chosen["fio_output"], rng).mutate()
        chosen["fio_output"] = output.decode("utf-8", "replace")
        data = json.dumps(document).encode()
        done = [f"fio output of round {chosen['round']}: {what}"]
    else:
        data, what = mutator.mutate()
        done = [what]
    if rng.random() < 0.85:
        data = gzip.compress(data, compresslevel=1)
        if rng.random() < 0.08:
            data, what = mutator.flip(data)
            done.append(f"gzip {what}")
        elif rng.random() < 0.05:
            cut = rng.randrange(len(data))
            data = data[:cut]
            done.append(f"gzip cut at {cut}")
    return data, "; ".join(done)


def _problems(
    store: Store, received: list[bundle.Received], empty: Store, path: Path
) -> Iterator[str]:
    """What is wrong with the runs an import added (see the module docstring); each
    travels through ``empty`` (a bundle written to ``path``)."""
    for item in received:
        run = store.get_run(str(item.run_id))
        yield from impossible_times(run)
        yield from round_trip(run, empty, path)
        for raw in run.raw_outputs:
            if run.results:
                parse(raw)  # raises if a stored output with results does not parse
        for result in run.results:
            yield from impossible(result)
        sheets, _ = report_for(run)
        if not sheets:
            yield f"run {run.id}: no sheet"


@pytest.fixture
def alarm() -> Iterator[None]:
    """SIGALRM raises TooLong in the test (armed per input with signal.alarm)."""

    def expired(signum: int, frame: FrameType | None) -> Any:
        raise TooLong

    previous = signal.signal(signal.SIGALRM, expired)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_recorded_bundles_import_with_possible_figures(bundles: list[str], tmp_path: Path) -> None:
    """The checks accept every unmutated bundle (no false alarms)."""
    with Store.open(str(tmp_path / "valid.db")) as store, Store.open("sqlite://") as empty:
        for number, text in enumerate(bundles):
            path = tmp_path / f"{number}.vbundle"
            path.write_bytes(gzip.compress(text.encode()))
            received = import_path(store, path, {}, check_setup)
            assert [r.added for r in received] == [True]
            assert list(_problems(store, received, empty, tmp_path / "again.vbundle")) == []


def test_bundle_fuzz(bundles: list[str], tmp_path: Path, alarm: None) -> None:
    db = tmp_path / "fuzz.db"
    rng = random.Random(SEED)
    mutators = [(text, Mutator(text, rng)) for text in bundles]
    outcome: Counter[str] = Counter()
    problems: list[str] = []
    target = tmp_path / "mutant.vbundle"
    again = tmp_path / "again.vbundle"
    # the empty store in memory: SQLite as on disk, without a sync per transaction
    with Store.open(str(db)) as store, Store.open("sqlite://") as empty:
        for number in range(MUTATIONS):
            text, mutator = rng.choice(mutators)
            data, what = _mutated(rng, text, mutator)
            target.write_bytes(data)
            before = _rows(db)
            started = time.monotonic()
            signal.alarm(SECONDS_PER_INPUT)
            try:
                received = import_path(store, target, {}, check_setup)
                found = list(_problems(store, received, empty, again))
            except TooLong:
                outcome["too long"] += 1
                problems.append(f"#{number} {what}: over {SECONDS_PER_INPUT} s")
                continue
            except VolbenchError as exc:
                outcome["refused"] += 1
                message = str(exc)
                if "\n" in message or exc.exit_code != 2:
                    problems.append(f"#{number} {what}: exit {exc.exit_code}, {message!r:.300}")
                if _rows(db) != before:
                    problems.append(f"#{number} {what}: refused but stored {_rows(db)}")
                continue
            except Exception as exc:  # counting what escapes is the test
                outcome["uncaught"] += 1
                problems.append(f"#{number} {what}: {type(exc).__name__}: {exc!s:.200}")
                continue
            finally:
                signal.alarm(0)
            outcome["imported"] += 1
            if time.monotonic() - started > SECONDS_PER_INPUT:
                problems.append(f"#{number} {what}: over {SECONDS_PER_INPUT} s")
            problems.extend(f"#{number} {what}: {p}" for p in found)
            for item in received:  # the next input may carry the same run again
                if item.added:
                    store.delete_run(item.run_id)
    print(f"seed {SEED}: {MUTATIONS} mutated bundles, {dict(outcome)}")
    assert problems == [], f"{len(problems)} problems, first: {problems[:5]}"
    assert outcome["imported"] > MUTATIONS // 20  # the mutations leave many bundles importable
    assert outcome["refused"] > MUTATIONS // 2
