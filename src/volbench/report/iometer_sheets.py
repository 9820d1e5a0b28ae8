"""The sheet of a stored IOMeter-style run: per access spec, IOPS by worker count.

IOPS and bandwidth are summed over directions and workers; the average response
time is the mean latency over all I/Os (directions weighted by their IOPS), the
maximum the largest of any I/O, as IOMeter reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.analysis.scaling import KNEE_FRACTION, knee, peak
from volbench.model import RunRecord
from volbench.report.rows import Row, documents
from volbench.report.run_sheets import MB, ResultRow, cache_notes, result_records, run_document
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate
from volbench.report.sweep_sheets import sweep_points


@dataclass(frozen=True, eq=False)
class SpecRow(Row):
    """One access spec at one worker count: IOPS and bytes/s summed over directions
    and workers, the mean latency over all I/Os and the largest (ns), and the IOPS
    against one worker's (``scaling``, e.g. ``1.85x``)."""

    spec: str
    workers: int
    outstanding_per_worker: int
    iops: float
    bw_bytes_per_s: float
    bw_mb_per_s: float
    lat_mean_ns: float | None
    lat_max_ns: float | None
    scaling: str | None


COLUMNS = (
    Column("spec", "Access spec"),
    Column("workers", "Workers", numeric=True),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Avg response", fmt_latency, numeric=True),
    Column("lat_max_ns", "Max response", fmt_latency, numeric=True),
    Column("scaling", "vs 1 worker", numeric=True),
)


def iometer_sheet(run: RunRecord) -> Sheet:
    """Rows per (spec, workers) with a note per spec on where IOPS stops growing."""
    rows = result_records(run)
    by_spec: dict[str, list[ResultRow]] = {}
    for row in rows:
        by_spec.setdefault(row.result.test.rsplit(".w", 1)[0], []).append(row)
    sheet_rows: list[SpecRow] = []
    tests: list[tuple[str, ...]] = []  # each row's test: its figure's validity
    notes = [f"run {run.id} · iometer · {run.status.value} · target {run.target.path}"]
    for spec, spec_rows in by_spec.items():
        measured = sweep_points(spec_rows)
        maxima: dict[str, float] = {}
        for r in (row.result for row in spec_rows):
            if r.lat_max_ns is not None:
                maxima[r.test] = max(maxima.get(r.test, 0.0), r.lat_max_ns)
        one = next((p.iops for p, _ in measured if p.numjobs == 1), None)
        for point, row in measured:
            tests.append((row.result.test,))
            sheet_rows.append(
                SpecRow(
                    spec=spec,
                    workers=point.numjobs,
                    outstanding_per_worker=point.iodepth,
                    iops=point.iops,
                    bw_bytes_per_s=point.bw_bytes_per_s,
                    bw_mb_per_s=point.bw_bytes_per_s / MB,
                    lat_mean_ns=point.lat_mean_ns,
                    lat_max_ns=maxima.get(row.result.test),
                    scaling=f"{point.iops / one:.2f}x" if one else None,
                )
            )
        points = [p for p, _ in measured]
        if len(points) > 1:
            top, bend = peak(points), knee(points)
            notes.append(
                f"{spec}: {bend.numjobs} worker(s) reach {KNEE_FRACTION:.0%} of the peak "
                f"{fmt_count(top.iops)} IOPS ({fmt_count(bend.iops)} IOPS)"
                + (
                    "; more workers add little"
                    if bend.numjobs < max(p.numjobs for p in points)
                    else "; IOPS still grows with workers"
                )
            )
    notes += cache_notes(rows)
    return Sheet(
        title=f"volbench iometer {run.id}",
        columns=COLUMNS,
        rows=tuple(sheet_rows),
        document={**run_document(run), "specs": documents(sheet_rows), "notes": notes},
        notes=tuple(notes),
        row_tests=tuple(tests),
    )
