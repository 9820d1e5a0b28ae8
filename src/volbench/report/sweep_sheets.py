"""The sheet of a stored sweep: one row per grid point, the knee and what it means.

Per point: IOPS and bandwidth summed over directions; mean latency weighted by
each direction's IOPS (the mean over all I/Os); p99 of the worst direction
(percentiles of different directions cannot be merged from stored rows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from volbench.analysis.scaling import (
    KNEE_FRACTION,
    ScalingPoint,
    best_under_latency,
    knee,
    peak,
    saturation_sentence,
)
from volbench.model import RunRecord, StoredResult, split_cache_mode
from volbench.plans.sweep import options_from
from volbench.report.plan_view import Headline
from volbench.report.rows import Row, documents, number, rows_of
from volbench.report.run_sheets import MB, ResultRow, cache_notes, result_records, run_document
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate


def sweep_points(rows: list[ResultRow]) -> list[tuple[ScalingPoint, ResultRow]]:
    """Grid points from a sweep's result rows, in run order, with their first row."""
    grouped: dict[str, list[StoredResult]] = {}
    first: dict[str, ResultRow] = {}
    for row in rows:
        grouped.setdefault(row.result.test, []).append(row.result)
        first.setdefault(row.result.test, row)
    points = []
    for test, group in grouped.items():
        iops = sum(r.iops for r in group)
        timed = [(r.iops, r.lat_mean_ns) for r in group if r.lat_mean_ns is not None]
        mean = (
            sum(rate * lat for rate, lat in timed) / sum(rate for rate, _ in timed)
            if timed and sum(rate for rate, _ in timed) > 0
            else None
        )
        p99s = [r.lat_p99_ns for r in group if r.lat_p99_ns is not None]
        mode, _ = split_cache_mode(test)
        point = ScalingPoint(
            tag="" if mode == "direct" else mode,
            iodepth=_as_fio_ran(first[test].iodepth),
            numjobs=_as_fio_ran(first[test].numjobs),
            iops=iops,
            bw_bytes_per_s=sum(r.bw_bytes_per_s for r in group),
            lat_mean_ns=mean,
            lat_p99_ns=max(p99s) if p99s else None,
        )
        points.append((point, first[test]))
    return points


def _as_fio_ran(value: int | None) -> int:
    """A point's iodepth or numjobs as its workload states it; one where it states none
    (a result imported from a job file without them): fio's default for both is 1
    (fio HOWTO, "iodepth=int" and "numjobs=int")."""
    return 1 if value is None else value


@dataclass(frozen=True, eq=False)
class SweepPointRow(Row):
    """One grid point of a sweep (:class:`ScalingPoint`): IOPS and bytes/s summed over
    directions, mean latency (ns) weighted by IOPS, the worst direction's p99 (ns), the
    first direction's Little's-law check and what the notes call it (``mark``); whether
    its figure is the volume's is the sheet's (its ``row_tests``: the point's test)."""

    point: str
    series: str
    iodepth: int
    numjobs: int
    outstanding: int
    iops: float
    bw_bytes_per_s: float
    bw_mb_per_s: float
    lat_mean_ns: float | None
    lat_p99_ns: float | None
    little: str | None
    outstanding_implied: float | None
    littles_law: str | None
    mark: str | None


def _series_notes(
    points: list[ScalingPoint],
    tag: str,
    marks: dict[str, list[str]],
    target: float | None,
    which: str,
) -> list[str]:
    """Knee, saturation and latency-target notes of one series (direct or buffered)."""
    prefix = f"{tag}: " if tag else ""
    top, bend = peak(points), knee(points)
    marks.setdefault(top.label, []).append("peak")
    marks.setdefault(bend.label, []).append("knee")
    notes = [
        f"{prefix}saturation knee: {bend.outstanding} outstanding I/O ({bend.label}) reaches "
        f"{KNEE_FRACTION:.0%} of the peak {fmt_count(top.iops)} IOPS ({top.label})"
    ]
    sentence = saturation_sentence(points)
    if sentence:
        notes.append(prefix + sentence)
    if target:
        best = best_under_latency(points, float(target), which)
        limit = f"{which} latency < {fmt_latency(target)}"
        if best is None:
            notes.append(f"{prefix}no point keeps {limit}")
        else:
            marks.setdefault(best.label, []).append(f"best with {limit}")
            notes.append(
                f"{prefix}highest IOPS with {limit}: {fmt_count(best.iops)} at {best.label}"
            )
    return notes


COLUMNS = (
    Column("point", "Point"),
    Column("outstanding", "Outstanding", numeric=True),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    Column("lat_p99_ns", "p99", fmt_latency, numeric=True),
    Column("little", "In flight/QDxJobs", numeric=True),
    Column("littles_law", "Little's law"),
    Column("mark", "Note"),
)


def sweep_sheet(run: RunRecord) -> Sheet:
    """The sweep table with knee, peak, saturation and latency-target notes."""
    rows = result_records(run)
    measured = sweep_points(rows)
    options = options_from(run.settings.options)
    target = options.latency_target_ns if options else None
    which = options.latency_percentile if options else "mean"
    notes = [f"run {run.id} · sweep · {run.status.value} · target {run.target.path}"]
    marks: dict[str, list[str]] = {}
    series: dict[str, list[ScalingPoint]] = {}
    for point, _ in measured:
        series.setdefault(point.tag, []).append(point)
    for tag, points in series.items():
        notes += _series_notes(points, tag, marks, target, which)
    notes += cache_notes(rows)
    if options and options.find_max and measured:
        grid = len(set(options.iodepths)) * len(set(options.numjobs))
        top = peak([p for p, _ in measured])
        notes.append(
            f"find-max: peak {fmt_count(top.iops)} IOPS at {top.label} after measuring "
            f"{len(measured)} of the grid's {grid} points"
        )
    sheet_rows = [
        SweepPointRow(
            point=point.label,
            series=point.tag,
            iodepth=point.iodepth,
            numjobs=point.numjobs,
            outstanding=point.outstanding,
            iops=point.iops,
            bw_bytes_per_s=point.bw_bytes_per_s,
            bw_mb_per_s=point.bw_bytes_per_s / MB,
            lat_mean_ns=point.lat_mean_ns,
            lat_p99_ns=point.lat_p99_ns,
            little=row.little,
            outstanding_implied=row.outstanding_implied,
            littles_law=row.littles_law,
            mark=", ".join(marks.get(point.label, [])) or None,
        )
        for point, row in measured
    ]
    document = {**run_document(run), "points": documents(sheet_rows), "notes": notes}
    return Sheet(
        title=f"volbench sweep {run.id}",
        columns=COLUMNS,
        rows=tuple(sheet_rows),
        document=document,
        notes=tuple(notes),
        row_tests=tuple((row.result.test,) for _, row in measured),
    )


HEADLINE_COLUMNS = (
    Column("point", "Point"),
    Column("mark", "What"),
    Column("outstanding", "Outstanding", numeric=True),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    Column("lat_p99_ns", "p99", fmt_latency, numeric=True),
)


def sweep_headline(run: RunRecord) -> Headline:
    """The points the sweep table names (peak, knee, best under the latency target) and
    the shallowest one; its knee, saturation and target notes, and a rate limit the
    throttle fingerprint finds."""
    sheet = sweep_sheet(run)
    points = rows_of(sheet.rows, SweepPointRow)
    chosen = [i for i, r in enumerate(points) if r.mark]
    rows = [points[i] for i in chosen]
    if points:
        shallowest = min(range(len(points)), key=lambda i: (points[i].outstanding, -points[i].iops))
        if all(r.point != points[shallowest].point for r in rows):
            rows.insert(0, replace(points[shallowest], mark="shallowest queue"))
            chosen.insert(0, shallowest)
    table = Sheet(
        f"Run {run.id} at a glance: sweep",
        HEADLINE_COLUMNS,
        tuple(rows),
        {"rows": documents(rows)},
        row_tests=tuple(sheet.row_tests[i] for i in chosen),
    )
    named = [r for r in rows if r.mark and r.mark != "shallowest queue"]
    named.sort(key=lambda r: "peak" not in (r.mark or ""))  # the peak first
    figures = tuple(f"{fmt_count(r.iops)} IOPS at {r.point} ({r.mark})" for r in named)
    return Headline(table, figures, (*sheet.notes[1:], *throttle_notes(run)))


def throttle_notes(run: RunRecord) -> list[str]:
    """A rate limit :mod:`volbench.analysis.throttle` finds in the run's points (none
    when no workload was measured at three or more queue depths)."""
    from volbench.errors import UsageError
    from volbench.report.throttle_sheets import fingerprint_sheet

    try:
        found = fingerprint_sheet([run])
    except UsageError:
        return []
    return [
        f"rate-limited: {r['workload']} flat at {fmt_count(r['cap_iops'])} IOPS"
        f" (confidence {number(r['confidence']):.2f}): {r['reason']}"
        for r in found.rows
        if r["limited"]
    ]
