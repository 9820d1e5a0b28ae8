"""The HIR page: IOPS per wait state (while writing, incl. idle, continuous after)
against the steady-state IOPS."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts.cells import WaitCell, parse_cell_as
from volbench.plans.pts.hir import HIR_CONTINUOUS_S, HIR_WRITE_S, HirOptions
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.pts.data import PtsData, average, sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.pts.steady import steady_notes
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.units import format_seconds


def hir_sheet(data: PtsData) -> Sheet:
    """IOPS per wait state: over the whole cycle cell (fio's figure, idle time
    included), during the write periods only (4 KiB I/Os / (cycles x write time)),
    and over the continuous writes after it; against the steady-state IOPS."""
    window = data.window("hir")
    baseline = average([c.iops for r in window for c in r.cells.values()])
    scale = data.options.cell_seconds / 60
    rows = []
    for r in data.history("hir", "idle"):
        name = next(n for n in r.cells if n.endswith("-cycles"))
        wait = parse_cell_as(WaitCell, name).wait_s
        cycles, cont = r.cells[name], r.cells[str(WaitCell(wait, "cont"))]
        write_s = data.options.of(HirOptions).cycles * HIR_WRITE_S * scale
        rows.append(
            {
                "wait_s": wait * scale,
                "cycles": data.options.of(HirOptions).cycles,
                "cycle_iops": cycles.iops,
                "write_period_iops": cycles.io_bytes / 4096 / write_s,
                "continuous_iops": cont.iops,
                "steady_state_iops": baseline,
            }
        )
    columns = (
        Column("wait_s", "Wait", lambda v: format_seconds(float(v)), numeric=True),
        Column("cycles", "Cycles", numeric=True),
        Column("write_period_iops", "IOPS while writing", fmt_count, numeric=True),
        Column("cycle_iops", "IOPS incl. idle", fmt_count, numeric=True),
        Column("continuous_iops", "IOPS after (continuous)", fmt_count, numeric=True),
        Column("steady_state_iops", "Steady-state IOPS", fmt_count, numeric=True),
    )
    notes = (
        *steady_notes(data, "hir"),
        f"times scaled by cell length: write periods {format_seconds(HIR_WRITE_S * scale)}, "
        f"continuous {format_seconds(HIR_CONTINUOUS_S * scale)}",
    )
    return sheet("HIR: IOPS per wait state", columns, rows, notes)


def hir_charts(sheets: Sequence[Sheet], prefix: str) -> list[Chart]:
    """IOPS per wait state: while writing, incl. idle, after, and the steady state."""
    rows = sheets[0].rows
    waits = [r["wait_s"] for r in rows]
    series = [
        Series(label, waits, [r[key] for r in rows])
        for key, label in (
            ("write_period_iops", "while writing"),
            ("cycle_iops", "incl. idle"),
            ("continuous_iops", "continuous after"),
            ("steady_state_iops", "steady state"),
        )
    ]
    return [
        line_chart(
            f"{prefix}-waits",
            "HIR: IOPS across wait states",
            series,
            x_title="Wait state (s)",
            y_title="IOPS",
            unit="IOPS",
        )
    ]


@dataclass(frozen=True)
class HirPage(BasePage):
    test: str = "hir"
    title: str = "HIR: host idle recovery"

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [hir_sheet(data)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return hir_charts(sheets, prefix)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        """The steady-state IOPS and the IOPS while writing after the longest wait."""
        rows = sheets[0].rows
        if not rows:
            return []
        longest = max(rows, key=lambda r: r["wait_s"])
        return [
            Figure("steady-state IOPS", rows[0]["steady_state_iops"], "IOPS"),
            Figure(
                f"IOPS while writing, wait {format_seconds(longest['wait_s'])}",
                longest["write_period_iops"],
                "IOPS",
            ),
        ]


PAGES = (HirPage(),)
"""This module's page (:mod:`.pages` finds it)."""
