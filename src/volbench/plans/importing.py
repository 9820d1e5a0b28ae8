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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests, merge_jobs, place_tests
from volbench.errors import FioError, UsageError, VolbenchError
from volbench.fio.document import LONG_LONG_MAX, json_span
from volbench.fio.options import workload_record
from volbench.fio.parser import parse
from volbench.model import (
    FioOutput,
    HostInfo,
    JobResult,
    RunStatus,
    StoredWorkload,
    TargetInfo,
    TestResult,
)
from volbench.store.repository import Store

PLAN = "import"


@dataclasses.dataclass(frozen=True)
class ImportedRun:
    """Everything one imported file stores: fio's JSON verbatim and what it holds."""

    target: TargetInfo
    host: HostInfo
    settings: dict[str, Any]
    raw_json: str
    tests: list[TestResult]
    workloads: dict[str, StoredWorkload]


def _target(output: FioOutput, source: Path) -> TargetInfo:
    names = {j.options.get("filename") for j in output.jobs} | {
        output.global_options.get("filename")
    }
    names.discard(None)
    path = ",".join(sorted(n for n in names if n)) or f"(from {source.name})"
    return TargetInfo(path=path, kind="imported", capacity_bytes=0)


def _host(output: FioOutput) -> HostInfo:
    hosts = sorted({j.hostname for j in output.jobs if j.hostname})
    return HostInfo(
        hostname=",".join(hosts) or "unknown",
        cpu_count=0,
        cpu_model="unknown",
        memory_bytes=0,
        kernel="unknown",
        fio_version=output.fio_version,
    )


ALL_CLIENTS = "all-clients"


def all_clients(output: FioOutput) -> list[TestResult]:
    """fio's "All clients" figure, where it adds jobs of different names (one job file
    per host): every host job of a reporting group merged (:func:`merge_jobs`: sums,
    percentiles of the merged bins, which fio's own "All clients" entry lacks)."""
    groups: dict[int, list[JobResult]] = {}
    for job in output.jobs:
        groups.setdefault(job.groupid, []).append(job)
    return [
        dataclasses.replace(
            merge_jobs(ALL_CLIENTS if len(groups) == 1 else f"{ALL_CLIENTS}-g{gid}", jobs),
            hostname=None,
        )
        for gid, jobs in groups.items()
        if output.all_clients and len({j.name for j in jobs}) > 1
    ]


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
    the file, what is wrong and where) when it cannot be imported as it is.

    Tests are fio's jobs grouped by (group, name, host); each test's workload is
    read back from the job options fio echoed. Output of several hosts (fio's
    client/server mode) is stored like a run on several places at once: the
    aggregate of every test (and fio's "All clients" figure), and each host's
    share under its hostname.
    """
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot import {path}: {exc.strerror or exc}") from None
    try:
        output = parse(text)
        tests = group_tests(output)
        aggregates: list[TestResult] = []
        settings: dict[str, Any] = {
            "source": str(path),
            "jobs": len(output.jobs),
            "clients": len(output.all_clients),
        }
        hosts = list(dict.fromkeys(j.hostname for j in output.jobs if j.hostname))
        if len(hosts) > 1:
            # client/server output of several hosts: their aggregate (sums, merged bins)
            # is the run's result, each host's share is stored beside it
            aggregates = all_clients(output)
            tests = [*place_tests(output)[0], *aggregates, *tests]
            settings["places"] = [{"label": host, "host": host, "path": None} for host in hosts]
        _check_storable(tests)
    except FioError as exc:  # a file that is not fio output is bad input (exit 2)
        raise UsageError(f"cannot import {path}: {exc}") from exc
    workloads: dict[str, StoredWorkload] = {}
    for job in output.jobs:
        merged = {**output.global_options, **job.options}
        workloads.setdefault(
            job.name, StoredWorkload.from_record(workload_record(job.name, merged))
        )
    for test in aggregates:  # fio's "All clients": the first job's pattern, on every place
        first = workloads[output.jobs[0].name]
        workloads[test.name] = dataclasses.replace(first, name=test.name, places=len(hosts))
    start, end = json_span(text)
    return ImportedRun(
        _target(output, path), _host(output), settings, text[start:end], tests, workloads
    )


def store_import(store: Store, imported: ImportedRun, labels: Mapping[str, str]) -> int:
    """Store a checked file as a completed run; return its id. If storing fails
    part-way (or is interrupted), the run is deleted again before the error goes on."""
    run_id = store.create_run(PLAN, imported.target, imported.host, labels, imported.settings)
    try:
        store.add_round(run_id, 0, imported.raw_json, imported.tests, imported.workloads)
        store.finish_run(run_id, RunStatus.COMPLETED)
    except BaseException:
        with contextlib.suppress(VolbenchError):
            store.delete_run(run_id)
        raise
    return run_id


def import_file(store: Store, path: Path, labels: Mapping[str, str]) -> int:
    """Import one fio output file (:func:`read_import`, then :func:`store_import`);
    return the run's id. This is what ``volbench import`` calls for each file."""
    return store_import(store, read_import(path), labels)
