"""The sheet of a quick run in the diskmark profile: CrystalDiskMark's table (a row per
test, SEQ1M Q8T1 ... RND4K Q1T1, read and write side by side, MB/s first as it shows
them), the generic results table for the default profile's quick runs.

MB/s = bytes/s / 10^6, as CrystalDiskMark and KDiskMark count them.
"""

from __future__ import annotations

from typing import Any

from volbench.model import RunRecord
from volbench.plans.quick import NAME, PROFILES, QuickOptions
from volbench.records import section
from volbench.report.run_sheets import MB, result_rows, run_document, run_sheet
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate

ROWS = tuple(dict.fromkeys((row.name.rsplit("-", 1)[0], row.label) for row in PROFILES["diskmark"]))
"""The profile's lines (its ``KEY-read``/``KEY-write`` tests, :data:`PROFILES`) and labels."""

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
    found: dict[str, dict[str, Any]] = {r["test"]: r for r in result_rows(run)}
    rows = []
    for name, label in ROWS:
        shown: dict[str, Any] = {"test": name, "label": label}
        for side in ("read", "write"):
            result = found.get(f"{name}-{side}")
            shown[f"{side}_mb_s"] = result["bw_bytes_per_s"] / MB if result else None
            shown[f"{side}_iops"] = result["iops"] if result else None
            shown[f"{side}_lat_ns"] = result["lat_mean_ns"] if result else None
        rows.append(shown)
    return Sheet(
        title=f"volbench run {run.id} (quick, diskmark profile)",
        columns=COLUMNS,
        rows=tuple(rows),
        document={**run_document(run), "diskmark": rows},
        notes=(
            f"run {run.id} · {run.status.value} · target {run.target.path} · the"
            " layout of CrystalDiskMark's default profile (KDiskMark's too); MB/s = 10^6 B/s",
        ),
    )


def quick_sheet(run: RunRecord) -> Sheet:
    """A quick run's sheet: CrystalDiskMark's table for the diskmark profile, else the
    generic results table."""
    return diskmark_sheet(run) if is_diskmark(run) else run_sheet(run)
