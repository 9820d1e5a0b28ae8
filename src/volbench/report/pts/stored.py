"""The table of every stored cell of a PTS run, as stored: the rows the other
tables are computed from."""

from __future__ import annotations

from volbench.model import RunRecord
from volbench.report.pts.data import MB, sheet
from volbench.report.pts.steady import cell_label
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate


def cells_sheet(run: RunRecord) -> Sheet:
    """Every stored cell of every round, as stored (fio's own per-direction figures),
    partial rounds included: the rows the tables above are computed from."""
    rows = []
    for r in run.results:
        test, phase, cell = [*r.test.split(".", 2), "", ""][:3]
        rows.append(
            {
                "round": r.round,
                "test": test,
                "phase": phase,
                "cell": cell,
                "cell_label": cell_label(cell),
                "direction": r.direction,
                "iops": r.iops,
                "bw_bytes_per_s": r.bw_bytes_per_s,
                "bw_mb_per_s": r.bw_bytes_per_s / MB,
                "lat_mean_ns": r.lat_mean_ns,
            }
        )
    columns = (
        Column("round", "Round", numeric=True),
        Column("test", "Test"),
        Column("phase", "Phase"),
        Column("cell_label", "Cell"),
        Column("direction", "Dir"),
        Column("iops", "IOPS", fmt_count, numeric=True),
        Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
        Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    )
    notes = (
        "phases: wipc preconditioning, ss steady-state round, run WSAT sample, idle HIR "
        "wait state, group XSR access group, sweep TC x QD sweep",
    )
    return sheet("Every stored cell of every round", columns, rows, notes)
