"""The demand-intensity pages (ECW, and DIRTH's first part): IOPS and response time
of every TC x QD of the sweep, as demand variation (IOPS vs QD) and demand
intensity (response time vs IOPS), a line per TC."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts.cells import GridCell, parse_cell_as
from volbench.report.axis import latency_unit
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.pts.data import PtsData, sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.pts.steady import steady_notes
from volbench.report.rows import Row, rows_of
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency


@dataclass(frozen=True, eq=False)
class DemandRow(Row):
    """One TC x QD cell of a demand-intensity sweep (the last sweep round): threads,
    queue depth, their product TOIO, IOPS and mean response time (ns); ``point``
    names DIRTH's MaxIOPS, MidIOPS and MinIOPS cells (joined by ``+``), else None."""

    cell: str
    tc: int
    qd: int
    toio: int
    iops: float
    lat_mean_ns: float | None
    point: str | None


def demand_rows(data: PtsData, test: str) -> list[DemandRow]:
    """The sweep: one row per TC x QD (``point``: None, see :mod:`.dirth`)."""
    sweep = data.history(test, "sweep")
    if not sweep:
        return []
    rows: list[DemandRow] = []
    for name, cell in sweep[-1].cells.items():
        grid = parse_cell_as(GridCell, name)
        rows.append(
            DemandRow(name, grid.tc, grid.qd, grid.tc * grid.qd, cell.iops, cell.lat_mean_ns, None)
        )
    return rows


def demand_sheet(data: PtsData, test: str, name: str, rows: list[DemandRow]) -> Sheet:
    """The sweep table of ``test`` (``name`` in its title) from its ``rows``."""
    columns = (
        Column("tc", "TC", numeric=True),
        Column("qd", "QD", numeric=True),
        Column("toio", "TOIO", numeric=True),
        Column("iops", "IOPS", fmt_count, numeric=True),
        Column("lat_mean_ns", "Avg response", fmt_latency, numeric=True),
        Column("point", "Point"),
    )
    notes = (
        *steady_notes(data, test),
        "demand intensity: IOPS vs TOIO and response time vs IOPS",
    )
    return sheet(f"{name}: demand-intensity sweep", columns, rows, notes)


def demand_headline(sheets: Sequence[Sheet]) -> list[Figure]:
    """The sweep's highest IOPS and its average response time there."""
    rows = [r for r in rows_of(sheets[0].rows, DemandRow) if r.iops is not None]
    if not rows:
        return []
    top = max(rows, key=lambda r: r.iops)
    at = f"TC {top.tc} x QD {top.qd}"
    return [
        Figure(f"highest IOPS ({at})", top.iops, "IOPS"),
        Figure(f"average response time at {at}", top.lat_mean_ns, "ns"),
    ]


def demand_charts(sheets: Sequence[Sheet], prefix: str) -> list[Chart]:
    """Demand variation (IOPS vs QD, a line per TC) and demand intensity (response
    time vs IOPS, a line per TC)."""
    rows = rows_of(sheets[0].rows, DemandRow)
    per_tc: dict[int, list[DemandRow]] = {}
    for row in rows:
        per_tc.setdefault(int(row.tc), []).append(row)
    ordered = {tc: sorted(rs, key=lambda r: r.qd) for tc, rs in sorted(per_tc.items())}
    variation = [
        Series(f"TC {tc}", [r.qd for r in rs], [r.iops for r in rs]) for tc, rs in ordered.items()
    ]
    unit, size = latency_unit(r.lat_mean_ns for r in rows)
    intensity = [
        Series(
            f"TC {tc}",
            [r.iops for r in rs],
            [r.lat_mean_ns / size if r.lat_mean_ns is not None else None for r in rs],
        )
        for tc, rs in ordered.items()
    ]
    return [
        line_chart(
            f"{prefix}-variation",
            "Demand variation: IOPS vs queue depth",
            variation,
            x_title="QD",
            y_title="IOPS",
            log_x=True,
            x_at_values=True,
            unit="IOPS",
        ),
        line_chart(
            f"{prefix}-intensity",
            "Demand intensity: response time vs IOPS",
            intensity,
            x_title="IOPS",
            y_title=f"Average response time ({unit})",
            unit=unit,
        ),
    ]


@dataclass(frozen=True)
class EcwPage(BasePage):
    test: str = "ecw"
    title: str = "ECW: enterprise composite workload"

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [demand_sheet(data, self.test, "ECW", demand_rows(data, self.test))]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return demand_charts(sheets, prefix)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        return demand_headline(sheets)


PAGES = (EcwPage(),)
"""This module's page (:mod:`.pages` finds it)."""
