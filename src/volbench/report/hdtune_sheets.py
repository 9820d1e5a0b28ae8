"""Sheets of HD Tune-style runs (seed 003): the surface scan and the file benchmark.

Transfer rates are fio's bandwidth of each zone's sequential read, in MB/s
(10^6 bytes/s, as HD Tune shows them); access time is the mean latency of the
random 4 KiB QD 1 reads; burst rate is the bandwidth of re-reading the first 64 KiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean

from volbench.model import RunRecord
from volbench.report.rows import Row, documents, number
from volbench.report.run_sheets import MB, result_records, run_document
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate


@dataclass(frozen=True, eq=False)
class ZoneRow(Row):
    """One zone of a surface scan: where it starts (bytes, GiB of 2^30, % of the
    target) and its sequential read rate (bytes/s, and MB/s of 10^6)."""

    zone: int
    offset_bytes: int
    offset_gib: float
    position_pct: float
    bw_bytes_per_s: float
    bw_mb_per_s: float


ZONE_COLUMNS = (
    Column("zone", "Zone", numeric=True),
    Column("position_pct", "Position %", lambda v: f"{number(v):.1f}", numeric=True),
    Column("offset_gib", "Offset GiB", lambda v: f"{number(v):,.2f}", numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
)


def scan_sheet(run: RunRecord) -> Sheet:
    """Transfer rate per zone (each zone's test's validity: the sheet's ``row_tests``),
    and HD Tune's summary line in the notes."""
    rows = result_records(run)
    capacity = run.target.capacity_bytes
    zones = [r for r in rows if r.result.test.startswith("zone-")]
    by_test = {r.result.test: r.result for r in rows}
    sheet_rows: list[ZoneRow] = []
    for row in zones:
        offset = int(row.offset_bytes or 0)
        sheet_rows.append(
            ZoneRow(
                zone=int(row.result.test.split("-")[1]),
                offset_bytes=offset,
                offset_gib=offset / (1 << 30),
                position_pct=100.0 * offset / capacity if capacity else 0.0,
                bw_bytes_per_s=row.result.bw_bytes_per_s,
                bw_mb_per_s=row.result.bw_bytes_per_s / MB,
            )
        )
    rates = [r.bw_mb_per_s for r in sheet_rows]
    summary: dict[str, float] = {}
    notes = [f"run {run.id} · scan · {run.status.value} · target {run.target.path}"]
    if rates:
        summary.update(min_mb_per_s=min(rates), max_mb_per_s=max(rates), avg_mb_per_s=mean(rates))
        notes.append(
            f"transfer rate: minimum {fmt_rate(min(rates))} MB/s, maximum "
            f"{fmt_rate(max(rates))} MB/s, average {fmt_rate(mean(rates))} MB/s "
            f"over {len(rates)} zones"
        )
    access = by_test.get("access-time")
    if access and access.lat_mean_ns is not None:
        summary["access_time_ns"] = access.lat_mean_ns
        notes.append(f"access time: {fmt_latency(access.lat_mean_ns)} (random 4 KiB, QD 1)")
    burst = by_test.get("burst-rate")
    if burst:
        summary["burst_mb_per_s"] = burst.bw_bytes_per_s / MB
        notes.append(f"burst rate: {fmt_rate(summary['burst_mb_per_s'])} MB/s (first 64 KiB)")
    return Sheet(
        title=f"volbench scan {run.id}",
        columns=ZONE_COLUMNS,
        rows=tuple(sheet_rows),
        document={
            **run_document(run),
            "zones": documents(sheet_rows),
            "summary": summary,
            "notes": notes,
        },
        notes=tuple(notes),
        row_tests=tuple((row.result.test,) for row in zones),
    )


FILEBENCH_COLUMNS = (
    Column("sequential-read", "Seq read KB/s", fmt_count, numeric=True),
    Column("sequential-write", "Seq write KB/s", fmt_count, numeric=True),
    Column("random-read-4k", "4K read IOPS", fmt_count, numeric=True),
    Column("random-write-4k", "4K write IOPS", fmt_count, numeric=True),
    Column("random-read-4k-qd32", "QD32 4K read IOPS", fmt_count, numeric=True),
    Column("random-write-4k-qd32", "QD32 4K write IOPS", fmt_count, numeric=True),
)


def filebench_sheet(run: RunRecord) -> Sheet:
    """Seed 003's one-row file benchmark: sequential in KB/s (10^3), random in IOPS."""
    row: dict[str, float] = {}  # test name: KB/s or IOPS, summed over directions
    for result in (r.result for r in result_records(run)):
        name = result.test
        value = result.bw_bytes_per_s / 1000 if name.startswith("sequential") else result.iops
        row[name] = row.get(name, 0.0) + value
    return Sheet(
        title=f"volbench filebench {run.id}",
        columns=FILEBENCH_COLUMNS,
        rows=(row,),
        document={**run_document(run), "filebench": row},
        notes=(f"run {run.id} · filebench · {run.status.value} · target {run.target.path}",),
    )
