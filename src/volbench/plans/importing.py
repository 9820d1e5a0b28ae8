"""Importing fio JSON produced by anyone (local, client/server, text around it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests, merge_jobs, place_tests
from volbench.errors import FioError, UsageError
from volbench.fio.options import workload_record
from volbench.fio.parser import parse
from volbench.model import FioOutput, HostInfo, JobResult, RunStatus, TargetInfo, TestResult
from volbench.store.repository import Store

PLAN = "import"


def _json_portion(text: str) -> str:
    """fio's JSON without the text around it (first ``{`` to last ``}``), verbatim."""
    return text[text.find("{") : text.rfind("}") + 1]


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


def import_file(store: Store, path: Path, labels: Mapping[str, str]) -> int:
    """Store one fio output file as a completed run; return its id.

    Tests are fio's jobs grouped by (group, name, host); each test's workload is
    read back from the job options fio echoed. Output of several hosts (fio's
    client/server mode) is stored like a run on several places at once: the
    aggregate of every test (and fio's "All clients" figure), and each host's
    share under its hostname.
    """
    text = path.read_text(errors="replace")
    try:
        output = parse(text)
    except FioError as exc:  # a file that is not fio output is bad input (exit 2)
        raise UsageError(f"cannot import {path}: {exc}") from exc
    settings: dict[str, Any] = {
        "source": str(path),
        "jobs": len(output.jobs),
        "clients": len(output.all_clients),
    }
    tests = group_tests(output)
    if len({j.hostname for j in output.jobs if j.hostname}) > 1:
        # client/server output of several hosts: their aggregate (sums, merged bins)
        # is the run's result, each host's share is stored beside it
        tests = [*place_tests(output)[0], *all_clients(output), *tests]
        hosts = dict.fromkeys(j.hostname for j in output.jobs if j.hostname)
        settings["places"] = [{"label": host, "host": host, "path": None} for host in hosts]
    workloads: dict[str, dict[str, Any]] = {}
    for job in output.jobs:
        merged = {**output.global_options, **job.options}
        workloads.setdefault(job.name, workload_record(job.name, merged))
    for test in tests:  # fio's "All clients": the first job's pattern, on every place
        if test.name.startswith(ALL_CLIENTS) and output.jobs:
            first = workloads[output.jobs[0].name]
            workloads[test.name] = {**first, "name": test.name, "places": len(settings["places"])}
    run_id = store.create_run(PLAN, _target(output, path), _host(output), labels, settings)
    store.add_round(run_id, 0, _json_portion(text), tests, workloads)
    store.finish_run(run_id, RunStatus.COMPLETED)
    return run_id
