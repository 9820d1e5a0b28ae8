"""The XSR page: throughput and response time of every cell vs time, a line per
access group, and the recovery time of group 3."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.plans.pts.cells import GroupCell, parse_cell_as
from volbench.plans.pts.test import StoredRound
from volbench.report.axis import latency_unit
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.pts.data import MB, PtsData, runtime_s, sheet, with_document
from volbench.report.pts.page import BasePage, Figure
from volbench.report.sheet import Column, Sheet, fmt_latency, fmt_rate

XSR_RECOVERED_FRACTION = 0.9
"""XSR recovery: group 3 has recovered at the first cell with at least 90% of the
throughput of group 1's last five cells (volbench's definition; PTS shows the plot)."""


def xsr_recovery_s(groups: Sequence[StoredRound]) -> float | None:
    """Seconds from the start of access group 3 to the end of its first recovered cell."""
    if len(groups) < 3:
        return None
    first = list(groups[0].cells.values())[-5:]
    baseline = sum(c.bw_bytes_per_s for c in first) / len(first)
    elapsed = 0.0
    for cell in groups[2].cells.values():
        elapsed += runtime_s(cell)
        if cell.bw_bytes_per_s >= XSR_RECOVERED_FRACTION * baseline:
            return elapsed
    return None


def xsr_sheet(data: PtsData) -> Sheet:
    groups = data.history("xsr", "group")
    rows = []
    elapsed = 0.0
    for group in groups:
        for name, cell in group.cells.items():
            elapsed += runtime_s(cell)
            parsed = parse_cell_as(GroupCell, name)
            rows.append(
                {
                    "group": parsed.group,
                    "cell": parsed.n,
                    "elapsed_s": elapsed,
                    "bw_bytes_per_s": cell.bw_bytes_per_s,
                    "bw_mb_per_s": cell.bw_bytes_per_s / MB,
                    "lat_mean_ns": cell.lat_mean_ns,
                }
            )
    columns = (
        Column("group", "Access group"),
        Column("cell", "Cell", numeric=True),
        Column("elapsed_s", "Time (s)", lambda v: f"{float(v):,.1f}", numeric=True),
        Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
        Column("lat_mean_ns", "Avg response", fmt_latency, numeric=True),
    )
    recovery = xsr_recovery_s(groups)
    notes = (
        "recovery time: "
        + (f"{recovery:,.1f} s" if recovery is not None else "not recovered")
        + f" (group 3 back to {XSR_RECOVERED_FRACTION:.0%} of group 1's final throughput)",
    )
    table = sheet("XSR: throughput and response time vs time", columns, rows, notes)
    return with_document(table, recovery_s=recovery)


def xsr_charts(sheets: Sequence[Sheet], prefix: str) -> list[Chart]:
    """Throughput and response time vs time, one line per access group."""
    groups: dict[str, list[Any]] = {}
    for row in sheets[0].rows:
        groups.setdefault(str(row["group"]), []).append(row)
    bw = [
        Series(g, [r["elapsed_s"] for r in rs], [r["bw_mb_per_s"] for r in rs])
        for g, rs in groups.items()
    ]
    unit, size = latency_unit(r["lat_mean_ns"] for r in sheets[0].rows)
    lat = [
        Series(
            g,
            [r["elapsed_s"] for r in rs],
            [r["lat_mean_ns"] / size if r["lat_mean_ns"] is not None else None for r in rs],
        )
        for g, rs in groups.items()
    ]
    return [
        line_chart(
            f"{prefix}-bw",
            "XSR: throughput vs time",
            bw,
            x_title="Time (s)",
            y_title="MB/s",
            markers=None,
            unit="MB/s",
        ),
        line_chart(
            f"{prefix}-lat",
            "XSR: response time vs time",
            lat,
            x_title="Time (s)",
            y_title="Average response time",
            log_y=True,
            markers=None,
            unit=unit,
        ),
    ]


@dataclass(frozen=True)
class XsrPage(BasePage):
    test: str = "xsr"
    title: str = "XSR: cross-stimulus recovery"

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [xsr_sheet(data)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return xsr_charts(sheets, prefix)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        return [Figure("recovery time", sheets[0].document.get("recovery_s"), "s")]


PAGES = (XsrPage(),)
"""This module's page (:mod:`.pages` finds it)."""
