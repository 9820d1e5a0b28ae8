"""Conversions between volbench's model objects and the store's table rows.

Times are stored as ISO-8601 UTC text to the second (``2024-05-01T12:00:00+00:00``):
readable in any SQL client and sorted chronologically as plain text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa

from volbench.errors import StoreError
from volbench.model import (
    HostInfo,
    LogSeries,
    RoundTimes,
    RunRecord,
    RunSettings,
    RunStatus,
    Stall,
    StoredResult,
    StoredWorkload,
    TargetInfo,
    TestResult,
    TracePart,
)
from volbench.records import RecordError
from volbench.store import owner
from volbench.store.schema import PERCENTILE_COLUMNS

T = TypeVar("T")

_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(StoredResult))
_STALL_FIELDS = tuple(f.name for f in dataclasses.fields(Stall))


def run_record(
    row: sa.Row[Any],
    run_labels: dict[str, str],
    results: tuple[StoredResult, ...] = (),
    raw_outputs: tuple[str, ...] = (),
    stalls: tuple[Stall, ...] = (),
    rounds: tuple[RoundTimes, ...] = (),
    series: tuple[LogSeries, ...] = (),
    trace: tuple[TracePart, ...] = (),
) -> RunRecord:
    """A ``runs`` row (with its labels, results, raw outputs and series) as a RunRecord.

    A ``running`` run whose process is gone (:func:`volbench.store.owner.alive`) is
    ``interrupted``, with the reason as its error."""
    status, error = RunStatus(row.status), row.error
    found = owner.Owner.parse(row.owner)
    if status is RunStatus.RUNNING and not owner.alive(found, row.heartbeat_at):
        status = RunStatus.INTERRUPTED
        who = f"volbench ({found.describe()})" if found else "volbench"
        error = f"{who} ended without finishing the run; `volbench resume {row.id}` continues it"
    return RunRecord(
        id=row.id,
        plan=row.plan,
        status=status,
        started_at=row.started_at,
        ended_at=row.ended_at,
        target=_stored(row, "target", TargetInfo.from_record),
        host=_stored(row, "host", HostInfo.from_record),
        labels=run_labels,
        settings=_stored(row, "settings", RunSettings.from_record),
        error=error,
        non_compliant=bool(row.non_compliant),
        results=results,
        raw_outputs=raw_outputs,
        stalls=stalls,
        rounds=rounds,
        series=series,
        trace=trace,
        uuid=row.uuid or "",
    )


def _stored(row: sa.Row[Any], part: str, read: Callable[[Any, str], T]) -> T:
    """A ``runs`` row's ``part`` (target, host, settings) as its typed record;
    StoreError when it does not fit (the store was changed by something else)."""
    try:
        return read(getattr(row, part), f"run {row.id}: its stored {part}")
    except RecordError as error:
        raise StoreError(f"{error}; delete the run or fix its {part} in the store") from None


def stored_result(row: sa.Row[Any]) -> StoredResult:
    """A ``results`` row as the model's StoredResult."""
    values = {name: row._mapping[name] for name in _RESULT_FIELDS}
    return StoredResult(**{**values, "workload": StoredWorkload.from_record(values["workload"])})


def stall(row: sa.Row[Any]) -> Stall:
    """A ``stalls`` row as the model's Stall."""
    values = {name: row._mapping[name] for name in _STALL_FIELDS}
    return Stall(**{**values, "resolved": bool(values["resolved"])})


def stall_row(run_id: int, found: Stall) -> dict[str, Any]:
    """The ``stalls`` row of one stall (times normalised to UTC)."""
    return {
        **dataclasses.asdict(found),
        "run_id": run_id,
        "started_at": timestamp(found.started_at),
        "ended_at": timestamp(found.ended_at),
    }


def result_rows(
    run_id: int, round_no: int, test: TestResult, workload: StoredWorkload
) -> list[dict[str, Any]]:
    """The results rows of one test: one per active direction."""
    rows = []
    for direction in test.directions.values():
        if not direction.active:
            continue
        lat = direction.latency
        row: dict[str, Any] = {
            "run_id": run_id,
            "round": round_no,
            "test": test.name,
            "direction": direction.direction,
            "workload": workload.record(),
            "iops": direction.iops,
            "bw_bytes_per_s": direction.bw_bytes_per_s,
            "io_bytes": direction.io_bytes,
            "runtime_ms": direction.runtime_ms,
            "lat_kind": lat.kind if lat else None,
            "lat_mean_ns": lat.mean_ns if lat else None,
            "lat_total_mean_ns": direction.lat_mean_ns,
            "lat_min_ns": lat.min_ns if lat else None,
            "lat_max_ns": lat.max_ns if lat else None,
            "lat_stddev_ns": lat.stddev_ns if lat else None,
            "usr_cpu_pct": test.usr_cpu_pct,
            "sys_cpu_pct": test.sys_cpu_pct,
            "jobs": test.jobs,
            "hostname": test.hostname,
            "error": test.error,
        }
        for pct, column in PERCENTILE_COLUMNS.items():
            row[column] = lat.percentiles_ns.get(pct) if lat else None
        rows.append(row)
    return rows


def stored_result_row(run_id: int, result: StoredResult) -> dict[str, Any]:
    """The ``results`` row of a stored result read back (a run moved between stores)."""
    return {**dataclasses.asdict(result), "run_id": run_id, "workload": result.workload.record()}


def as_dict(value: Any) -> dict[str, Any]:
    """A dataclass instance (TargetInfo, HostInfo) or mapping as a plain dict."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return dict(value)


def now() -> str:
    """The current time as stored."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def timestamp(value: str | None) -> str:
    """``value`` (ISO 8601 with a time zone) normalised to UTC; now if None."""
    if value is None:
        return now()
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {value!r}") from None
    if moment.tzinfo is None:
        raise ValueError(f"time without a time zone: {value!r}")
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def optional_timestamp(value: str | None) -> str | None:
    """Like :func:`timestamp`, but None stays None."""
    return None if value is None else timestamp(value)
