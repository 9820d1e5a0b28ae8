"""The sheet of a quick run in the diskmark profile: CrystalDiskMark's table (a row per
test, SEQ1M Q8T1 ... RND4K Q1T1, read and write side by side, MB/s first as it shows
them), the generic results table for the default profile's quick runs.

MB/s = bytes/s / 10^6, as CrystalDiskMark and KDiskMark count them.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.model import RunRecord
from volbench.plans.quick import NAME, PROFILES, QuickOptions
from volbench.records import section
from volbench.report.rows import Row, documents
from volbench.report.run_sheets import MB, result_records, run_document, run_sheet
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate

ROWS = tuple(dict.fromkeys((row.name.rsplit("-", 1)[0], row.label) for row in PROFILES["diskmark"]))
"""The profile's lines (its ``KEY-read``/``KEY-write`` tests, :data:`PROFILES`) and labels."""


@dataclass(frozen=True, eq=False)
class DiskmarkRow(Row):
    """One line of CrystalDiskMark's table: a test's read and write MB/s (10^6 B/s),
    IOPS and mean latency (ns), None where the run has no such result."""

    test: str
    label: str
    read_mb_s: float | None
    read_iops: float | None
    read_lat_ns: float | None
    write_mb_s: float | None
    write_iops: float | None
    write_lat_ns: float | None


COLUMNS = (
    Column("label", "Test"),
    Column("read_mb_s", "Read MB/s", fmt_rate, numeric=True),
    Column("write_mb_s", "Write MB/s", fmt_rate, numeric=True),
    Column("read_iops", "Read IOPS", fmt_count, numeric=True),
    Column("write_iops", "Write IOPS", fmt_count, numeric=True),
    Column("read_lat_ns", "Read lat", fmt_latency, numeric=True),
    Column("write_lat_ns", "Write lat", fmt_latency, numeric=True),
)


def is_diskmark(run: RunRecord) -> bool:
    options = section(run.settings.options, NAME, QuickOptions) if run.plan == NAME else None
    return options is not None and options.profile == "diskmark"


def diskmark_sheet(run: RunRecord) -> Sheet:
    """CrystalDiskMark's layout of ``run``'s figures (the latest of each test)."""
    found = {r.result.test: r.result for r in result_records(run)}
    rows = []
    for name, label in ROWS:
        read, write = found.get(f"{name}-read"), found.get(f"{name}-write")
        rows.append(
            DiskmarkRow(
                test=name,
                label=label,
                read_mb_s=read.bw_bytes_per_s / MB if read else None,
                read_iops=read.iops if read else None,
                read_lat_ns=read.lat_mean_ns if read else None,
                write_mb_s=write.bw_bytes_per_s / MB if write else None,
                write_iops=write.iops if write else None,
                write_lat_ns=write.lat_mean_ns if write else None,
            )
        )
    return Sheet(
        title=f"volbench run {run.id} (quick, diskmark profile)",
        columns=COLUMNS,
        rows=tuple(rows),
        document={**run_document(run), "diskmark": documents(rows)},
        notes=(
            f"run {run.id} · {run.status.value} · target {run.target.path} · the"
            " layout of CrystalDiskMark's default profile (KDiskMark's too); MB/s = 10^6 B/s",
        ),
    )


def quick_sheet(run: RunRecord) -> Sheet:
    """A quick run's sheet: CrystalDiskMark's table for the diskmark profile, else the
    generic results table."""
    return diskmark_sheet(run) if is_diskmark(run) else run_sheet(run)
