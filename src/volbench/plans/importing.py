"""Importing fio JSON produced by anyone (local, client/server, text around it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests
from volbench.errors import FioError, UsageError
from volbench.fio.options import workload_record
from volbench.fio.parser import parse
from volbench.model import FioOutput, HostInfo, RunStatus, TargetInfo
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


def import_file(store: Store, path: Path, labels: Mapping[str, str]) -> int:
    """Store one fio output file as a completed run; return its id.

    Tests are fio's jobs grouped by (group, name, host); each test's workload is
    read back from the job options fio echoed.
    """
    text = path.read_text(errors="replace")
    try:
        output = parse(text)
    except FioError as exc:  # a file that is not fio output is bad input (exit 2)
        raise UsageError(f"cannot import {path}: {exc}") from exc
    tests = group_tests(output)
    workloads: dict[str, dict[str, Any]] = {}
    for job in output.jobs:
        merged = {**output.global_options, **job.options}
        workloads.setdefault(job.name, workload_record(job.name, merged))
    settings = {"source": str(path), "jobs": len(output.jobs), "clients": len(output.all_clients)}
    run_id = store.create_run(PLAN, _target(output, path), _host(output), labels, settings)
    store.add_round(run_id, 0, _json_portion(text), tests, workloads)
    store.finish_run(run_id, RunStatus.COMPLETED)
    return run_id
