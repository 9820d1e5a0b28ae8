"""Sheets of a stored run: its results table, and its report and JSON document
(with its stalls, :mod:`volbench.report.stall_sheets`; the list of runs is
:mod:`volbench.report.run_list`).

Every figure comes from a stored result row, itself taken from fio's final
JSON (kept verbatim beside it). MB/s = bytes/s / 10^6; MiB/s = bytes/s / 2^20.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from volbench.analysis.host_series import is_host
from volbench.analysis.littles_law import TOLERANCE, check
from volbench.model import RunRecord, StoredResult, StoredWorkload, split_cache_mode
from volbench.recipes.running import RECIPE, comparison_lines
from volbench.records import json_object
from volbench.report.fleet_sheets import aggregate_run, fleet_sheet, is_fleet
from volbench.report.plan_view import PlanView, Report
from volbench.report.rows import Row, documents, optional_number
from volbench.report.series_documents import host_series_document, series_document
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_labels, fmt_latency, fmt_rate
from volbench.report.stall_sheets import stalls_sheet
from volbench.units import format_block_size, format_bytes

RUN_DOCUMENT_SCHEMA = "volbench.run/1"

MB = 1_000_000
MIB = 1 << 20

_ROW_FIELDS = tuple(f.name for f in fields(StoredResult) if f.name != "workload")
"""A result row's own fields (numbers and text: read as they are, not deep-copied
as ``asdict`` does: 18 s of a 20,000-test report, bench/import_scale.py)."""


def _pattern(workload: StoredWorkload) -> str:
    """rw (and mix), block size, QD x jobs; "?" for a part an imported fio output does
    not state (None), "not stated" when it states none of them."""
    parts = (workload.rw, workload.bs_bytes, workload.bssplit, workload.iodepth, workload.numjobs)
    if not any(parts):
        return "not stated"
    bs = format_block_size(workload.bs_bytes) if workload.bs_bytes else "?"
    rw = workload.rw or "?"
    mix = workload.rwmixread_pct
    mixed = f" {mix}/{100 - mix}" if rw in ("rw", "randrw") and mix is not None else ""
    qd = f"QD{workload.iodepth or '?'}x{workload.numjobs or '?'}"
    return f"{rw}{mixed} {'bssplit' if workload.bssplit else bs} {qd}"


@dataclass(frozen=True, eq=False)
class ResultRow(Row):
    """One stored result as a sheet's row: the result's own fields (all but its
    workload), then what the row adds from the workload and the test's Little's-law
    check. Rates: bytes/s in ``bw_bytes_per_s``, MB/s (10^6) and MiB/s (2^20) beside
    it; latencies in ns, as fio's final JSON gives them."""

    result: StoredResult
    run_id: int
    pattern: str
    rw: str | None
    bs_bytes: int | None
    offset_bytes: int | None
    iodepth: int | None
    numjobs: int | None
    bw_mb_per_s: float
    bw_mib_per_s: float
    outstanding_configured: int | None
    """iodepth x numjobs (x places), None when the workload does not state both."""
    outstanding_implied: float | None
    """IOPS x mean total latency over the test's directions (Little's law)."""
    little: str | None
    """``implied / configured`` as shown."""
    littles_law: str | None
    """The check's verdict (``ok`` within :data:`TOLERANCE`), None when not stated."""

    hidden = frozenset({"result"})

    def keys_of(self) -> tuple[str, ...]:
        return _ROW_KEYS

    def __getitem__(self, key: str) -> object:
        if key in _OWN_FIELDS:
            return getattr(self.result, key)
        return super().__getitem__(key)


def result_records(run: RunRecord) -> list[ResultRow]:
    """One row per stored result, with the test's Little's-law check added.

    Little's law is checked per test over all its directions: implied in-flight
    I/O = sum(IOPS x mean latency) against iodepth x numjobs.
    """
    by_test: dict[tuple[int, str, str | None], list[StoredResult]] = {}
    for result in run.results:
        by_test.setdefault((result.round, result.test, result.hostname), []).append(result)
    rows: list[ResultRow] = []
    for results in by_test.values():
        workload = results[0].workload
        configured = results[0].outstanding_io
        pairs = [(r.iops, r.total_latency_ns) for r in results if r.total_latency_ns is not None]
        little = check(pairs, configured) if pairs else None
        stated = workload.iodepth is not None and workload.numjobs is not None
        for result in results:
            rows.append(
                ResultRow(
                    result=result,
                    run_id=run.id,
                    pattern=_pattern(workload),
                    rw=workload.rw,
                    bs_bytes=workload.bs_bytes,
                    offset_bytes=workload.offset_bytes,
                    iodepth=workload.iodepth,
                    numjobs=workload.numjobs,
                    bw_mb_per_s=result.bw_bytes_per_s / MB,
                    bw_mib_per_s=result.bw_bytes_per_s / MIB,
                    outstanding_configured=configured if stated else None,
                    outstanding_implied=little.implied if little else None,
                    little=f"{little.implied:,.1f} / {configured if stated else '?'}"
                    if little
                    else None,
                    littles_law=little.verdict if little and stated else None,
                )
            )
    return rows


_OWN_FIELDS = frozenset(_ROW_FIELDS)
_ROW_KEYS = (*_ROW_FIELDS, *(f.name for f in fields(ResultRow) if f.name != "result"))
"""A result row's keys: the stored result's fields, then the row's own."""


def result_rows(run: RunRecord) -> list[dict[str, Any]]:
    """:func:`result_records` as plain dicts (the run document's ``results``)."""
    return [row.document() for row in result_records(run)]


def shown_percentile(row: Mapping[str, object], key: str) -> float | None:
    """A stored percentile as shown: at most the test's maximum. fio reports a json+
    bin's value, which may lie above the largest I/O (by up to a bin's width, 1/64 of
    its power of two: a p99.9 of 49.02 ms beside a maximum of 48.91 ms); the PTS
    p99.999 is capped the same way."""
    value, top = optional_number(row.get(key)), optional_number(row.get("lat_max_ns"))
    if value is None or top is None:
        return value
    return min(value, top)


def _capped(key: str) -> Column:
    header = {"lat_p50_ns": "p50", "lat_p99_ns": "p99", "lat_p999_ns": "p99.9"}[key]
    return Column(key, header, fmt_latency, numeric=True, shown=lambda r: shown_percentile(r, key))


RESULT_COLUMNS = (
    Column("test", "Test"),
    Column("direction", "Dir"),
    Column("pattern", "Pattern"),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("bw_mib_per_s", "MiB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    _capped("lat_p50_ns"),
    _capped("lat_p99_ns"),
    _capped("lat_p999_ns"),
    Column("lat_max_ns", "Max", fmt_latency, numeric=True),
    Column("little", "In flight/QDxJobs", numeric=True),
    Column("littles_law", "Little's law"),
)


ERROR_COLUMN = Column("error", "fio error", numeric=True, shown=lambda r: r.get("error") or None)
"""fio's error of a test's jobs (an errno), shown where a run has one ("-": none)."""

ERROR_NOTE = (
    "fio error: the test's jobs ended with that error (an errno of the machine fio ran on,"
    " e.g. 5 EIO, 28 ENOSPC, 84 EILSEQ on Linux, 42 on Windows): its figures are what they"
    " measured until then"
)


def with_errors(
    columns: tuple[Column, ...], rows: Sequence[ResultRow]
) -> tuple[tuple[Column, ...], list[str], frozenset[int]]:
    """``columns`` with :data:`ERROR_COLUMN` after the direction where a row has a fio
    error, the note saying what it means, and the rows to flag; unchanged otherwise."""
    errored = frozenset(i for i, row in enumerate(rows) if row.result.error)
    if not errored:
        return columns, [], errored
    at = next((i + 1 for i, c in enumerate(columns) if c.key == "direction"), len(columns))
    return (*columns[:at], ERROR_COLUMN, *columns[at:]), [ERROR_NOTE], errored


CACHE_RATIO_WARNING = 2.0
"""Buffered vs direct IOPS differing by more than this factor get a warning."""


def cache_notes(rows: Sequence[ResultRow]) -> list[str]:
    """Warnings where a buffered test's IOPS differ from its direct twin's by > 2x."""
    totals: dict[str, float] = {}
    for row in rows:
        test = row.result.test
        totals[test] = totals.get(test, 0.0) + row.result.iops
    notes = []
    for test, iops in totals.items():
        mode, name = split_cache_mode(test)
        direct = totals.get(name)
        if mode != "buffered" or not direct or not iops:
            continue
        ratio = iops / direct
        if ratio > CACHE_RATIO_WARNING or ratio < 1 / CACHE_RATIO_WARNING:
            notes.append(
                f"warning: {name} buffered {fmt_count(iops)} IOPS vs direct "
                f"{fmt_count(direct)} IOPS ({ratio:.1f}x): buffered figures measure the "
                f"host's memory and page cache, not the device"
            )
    return notes


def run_document(run: RunRecord) -> dict[str, object]:
    """The stable JSON form of a run (schema ``volbench.run/1``): the run record, its
    result rows, round times, fio's raw outputs and per-second series, and the host and
    device samples taken while each round ran (``host_series``)."""
    return {
        "schema": RUN_DOCUMENT_SCHEMA,
        "id": run.id,
        "uuid": run.uuid,
        "plan": run.plan,
        "status": run.status.value,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "labels": dict(run.labels),
        "target": json_object(run.target),
        "host": json_object(run.host),
        "settings": run.settings.record(),
        "error": run.error,
        "results": result_rows(run),
        "rounds": [asdict(times) for times in run.rounds],
        "fio_outputs": list(run.raw_outputs),
        "series": [series_document(s) for s in run.series if not is_host(s)],
        "host_series": [host_series_document(s) for s in run.series if is_host(s)],
    }


def run_sheet(run: RunRecord) -> Sheet:
    """The results table of one run, with its status and Little's-law notes; where a
    test's jobs ended with a fio error, its rows flagged with the error beside them."""
    rows = result_records(run)
    lat_kinds = {r.result.lat_kind for r in rows if r.result.lat_kind}
    notes = [
        f"run {run.id} · {run.plan} · {run.status.value} · target {run.target.path}"
        f" ({format_bytes(run.target.capacity_bytes)})"
        f" · ioengine {run.settings.ioengine or '?'} · {run.host.fio_version}",
    ]
    if run.labels:
        notes.append("labels: " + fmt_labels(run.labels))
    if run.error:
        notes.append(f"note: {run.error}")
    recipe = run.settings.options.get(RECIPE)
    if isinstance(recipe, Mapping):  # the page, a rehearsal, the figures it expects
        notes += comparison_lines(recipe, run.results)
    if "clat" in lat_kinds:
        clat = [r.result for r in rows if r.result.lat_kind == "clat"]
        given = all(r.lat_total_mean_ns is not None for r in clat)
        law = (
            "Little's law from fio's mean total latency (lat)"
            if given
            else "Little's law needs total latency, which fio did not give for every test"
        )
        notes.append(f"latency: fio completion latency (clat); {law}")
    notes += cache_notes(rows)
    if any(r.littles_law not in (None, "ok") for r in rows):
        notes.append(
            "Little's law: in flight = IOPS x mean latency; flagged when it differs from "
            f"QD x jobs by more than {TOLERANCE:.0%}"
        )
    columns, error_notes, errored = with_errors(RESULT_COLUMNS, rows)
    notes += error_notes
    flagged = frozenset(i for i, r in enumerate(rows) if r.littles_law not in (None, "ok"))
    return Sheet(
        title=f"volbench run {run.id} ({run.plan})",
        columns=columns,
        rows=tuple(rows),
        document=run_document(run),
        notes=tuple(notes),
        flagged_rows=flagged | errored,
    )


def sheet_for(run: RunRecord, view: PlanView) -> Sheet:
    """The sheet that shows ``run`` best: its plan's own (``view.sheet``), else the
    generic results table (of a run on several places at once: its aggregate results)."""
    return (view.sheet or run_sheet)(aggregate_run(run))


def report_for(run: RunRecord, view: PlanView) -> Report:
    """The sheets and JSON document of ``run``: its plan's report (``view.report``),
    else its one sheet; the JSON always holds the run record, every stored result row
    and fio's raw outputs (:func:`run_document`; the plan's own keys beside them,
    theirs on a clash); then the stalls sheet when the run stalled (its rows under
    ``stalls`` in the JSON)."""
    if view.report is not None:
        sheets, document = view.report(aggregate_run(run))
    else:
        sheet = sheet_for(run, view)
        sheets, document = [sheet], sheet.document
    if "fio_outputs" not in document:  # a plan's own report: the run record beside it
        document = {**run_document(run), **document}
    if is_fleet(run):  # each place's share beside the aggregate
        places = fleet_sheet(run)
        document = {**document, "places": places.document}
        if len(run.settings.places) > 1:
            sheets = [*sheets, places]
        else:  # one place's rows are the run's own: only what it says of the place
            first, *rest = sheets
            sheets = [replace(first, notes=(*first.notes, *places.notes)), *rest]
    if not run.stalls:
        return sheets, document
    stalls = stalls_sheet(run)
    return [*sheets, stalls], {**document, "stalls": documents(stalls.rows)}
