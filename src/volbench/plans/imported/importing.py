"""Importing fio JSON produced by anyone (local, client/server, text around it).

A file is read and checked completely before anything is stored
(:func:`read_import`: the parser refuses what fio cannot have printed, see
:mod:`volbench.fio.parser`), then stored as one completed run
(:func:`store_import`), which removes the run again if storing fails half-way. So a
file is either imported correctly or refused with one line (exit 2) and leaves no
run behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

from volbench.errors import FioError, UsageError, VolbenchError
from volbench.fio.document import LONG_LONG_MAX, json_span
from volbench.fio.parser import parse
from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredWorkload,
    TargetInfo,
    TestResult,
)
from volbench.plans import capture
from volbench.plans.imported.output import fio_error_texts, read_output
from volbench.store import bundle
from volbench.store.repository import Store

PLAN = "import"

MAX_FILE_BYTES = 512 << 20
"""The largest fio output file imported (512 MiB): a 20,000-job output is 90 MB of
plain JSON, about 220 MB of json+ (bench/import_scale.py); reading one takes about
7 times its size in memory."""


@dataclasses.dataclass(frozen=True)
class ImportedRun:
    """Everything one imported file stores: fio's JSON verbatim and what it states
    (:mod:`volbench.plans.imported.output`): results, workloads, target, host, fio's
    own start and end times (None: not stated) and notes for the user."""

    target: TargetInfo
    host: HostInfo
    settings: RunSettings
    raw_json: str
    tests: list[TestResult]
    workloads: dict[str, StoredWorkload]
    started_at: str | None = None
    ended_at: str | None = None
    notes: tuple[str, ...] = ()


def _check_storable(tests: list[TestResult]) -> None:
    """Byte counts summed over jobs must still fit the store's 64-bit integers."""
    for test in tests:
        for direction in test.directions.values():
            if direction.io_bytes > LONG_LONG_MAX:
                raise FioError(
                    f"test {test.name!r} {direction.direction}: {direction.io_bytes} bytes"
                    " in all is more than 64 bits hold"
                )


def read_import(path: Path) -> ImportedRun:
    """Read, parse and check one fio output file; :class:`UsageError` (one line naming
    the file, what is wrong and where) when it cannot be imported as it is. What the
    file states is taken from it (:func:`volbench.plans.imported.output.read_output`)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot import {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(
            f"cannot import {path}: it is larger than {MAX_FILE_BYTES >> 20} MiB, more than"
            " fio's JSON output of a run volbench imports (split the run's jobs)"
        )
    size = len(data)
    try:
        text = data.decode("utf-8", errors="replace")
        del data
        stated = read_output(parse(text), path, fio_error_texts(text))
        _check_storable(stated.tests)
    except FioError as exc:  # a file that is not fio output is bad input (exit 2)
        raise UsageError(f"cannot import {path}: {exc}") from exc
    except MemoryError:
        raise UsageError(
            f"cannot import {path}: not enough memory to read its {size >> 20} MiB"
        ) from None
    start, end = json_span(text)
    return ImportedRun(
        target=stated.target,
        host=stated.host,
        settings=stated.settings,
        raw_json=text[start:end],
        tests=stated.tests,
        workloads=stated.workloads,
        started_at=stated.started_at,
        ended_at=stated.ended_at,
        notes=tuple(stated.notes),
    )


def store_import(store: Store, imported: ImportedRun, labels: Mapping[str, str]) -> int:
    """Store a checked file as a completed run with fio's times and the notes (the
    run's message, which ``show`` prints); return its id. If storing fails part-way
    (or is interrupted), the run is deleted again before the error goes on."""
    run_id = store.create_run(
        PLAN,
        imported.target,
        imported.host,
        labels,
        imported.settings,
        started_at=imported.started_at,
    )
    try:
        store.add_round(
            run_id,
            0,
            imported.raw_json,
            imported.tests,
            imported.workloads,
            started_at=imported.started_at,
            ended_at=imported.ended_at,
        )
        store.finish_run(
            run_id,
            RunStatus.COMPLETED,
            "; ".join(imported.notes) or None,
            ended_at=imported.ended_at or imported.started_at,
        )
    except BaseException:
        with contextlib.suppress(VolbenchError):
            store.delete_run(run_id)
        raise
    return run_id


def import_file(store: Store, path: Path, labels: Mapping[str, str]) -> int:
    """Import one fio output file (:func:`read_import`, then :func:`store_import`);
    return the run's id. This is what ``volbench import`` calls for each file."""
    return store_import(store, read_import(path), labels)


def import_path(
    store: Store,
    path: Path,
    labels: Mapping[str, str],
    check: Callable[[RunRecord], object] = lambda run: None,
) -> list[bundle.Received]:
    """What ``volbench import`` calls for each file: a volbench bundle
    (:func:`volbench.store.bundle.recognise`) gives each of its runs, added or already
    stored (:func:`volbench.store.bundle.import_bundle`, each first checked by
    ``check``, :func:`volbench.plans.kinds.check_setup`: a capture run's workload
    profile too, :func:`volbench.plans.profile_record.stored_profile`);
    blkparse's text of a blktrace capture is a captured workload
    (:func:`volbench.plans.capture.import_blkparse`);
    anything else is one fio output, imported as one run (:func:`import_file`)."""
    if bundle.recognise(path):
        return bundle.import_bundle(store, path, labels, check)
    if capture.recognise(path):
        return [bundle.Received(capture.import_blkparse(store, path, labels).run_id, added=True)]
    return [bundle.Received(import_file(store, path, labels), added=True)]
