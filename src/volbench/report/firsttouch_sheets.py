"""The sheet of a first-touch run: both passes side by side and the penalty."""

from __future__ import annotations

from volbench.model import RunRecord
from volbench.plans.firsttouch import PASSES
from volbench.report.rows import documents
from volbench.report.run_sheets import result_records, run_document
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate

"""The two reads of the same region, in order (the plan's test names)."""

CAVEATS = (
    "the region must not have been read since the volume was created or restored; "
    "a second run over the same region measures nothing",
    "sparse files and thin devices return unallocated blocks without reading them: "
    "there the first pass can be the fast one",
)

COLUMNS = (
    Column("test", "Pass"),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    Column("lat_p99_ns", "p99", fmt_latency, numeric=True),
)


def penalty_pct(first_bw: float, second_bw: float) -> float:
    """First-touch penalty in %: 100 x (1 - first / second bandwidth)."""
    return 100.0 * (1.0 - first_bw / second_bw) if second_bw > 0 else 0.0


def firsttouch_sheet(run: RunRecord) -> Sheet:
    rows = {r.result.test: r for r in result_records(run) if r.result.test in PASSES}
    sheet_rows = [rows[p] for p in PASSES if p in rows]  # each with its MB/s (10^6 B/s)
    notes = [f"run {run.id} · firsttouch · {run.status.value} · target {run.target.path}"]
    penalty = None
    if len(sheet_rows) == 2:
        first, second = sheet_rows
        penalty = penalty_pct(first.result.bw_bytes_per_s, second.result.bw_bytes_per_s)
        notes.append(
            f"first-touch penalty: {penalty:.1f}% (first pass "
            f"{fmt_rate(first.bw_mb_per_s)} MB/s, second pass "
            f"{fmt_rate(second.bw_mb_per_s)} MB/s)"
        )
    notes += [f"caveat: {c}" for c in CAVEATS]
    return Sheet(
        title=f"volbench firsttouch {run.id}",
        columns=COLUMNS,
        rows=tuple(sheet_rows),
        document={
            **run_document(run),
            "passes": documents(sheet_rows),
            "penalty_pct": penalty,
            "notes": notes,
        },
        notes=tuple(notes),
    )
