"""The WSAT page: IOPS of each sample vs time and vs total GB written, and how the
written total ended against 4 x the active range."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts.wsat import WSAT_CAPACITY_MULTIPLE, WsatOptions
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.pts.data import PtsData, runtime_s, sheet, with_document
from volbench.report.pts.page import BasePage, Figure
from volbench.report.sheet import Column, Sheet, fmt_count


def wsat_sheet(data: PtsData) -> Sheet:
    rows = []
    elapsed_s = 0.0
    written = 0
    for index, r in enumerate(data.history("wsat")):
        cell = next(iter(r.cells.values()))
        elapsed_s += runtime_s(cell)
        written += cell.io_bytes
        rows.append(
            {
                "sample": index + 1,
                "elapsed_s": elapsed_s,
                "iops": cell.iops,
                "written_gb": written / 1e9,
            }
        )
    columns = (
        Column("sample", "Sample", numeric=True),
        Column("elapsed_s", "Time (s)", lambda v: f"{float(v):,.0f}", numeric=True),
        Column("written_gb", "Written (GB)", lambda v: f"{float(v):,.2f}", numeric=True),
        Column("iops", "IOPS", fmt_count, numeric=True),
    )
    target = WSAT_CAPACITY_MULTIPLE * data.active
    notes = (
        f"4 KiB random write until {target / 1e9:,.2f} GB (4 x active range) are written, "
        f"at most {data.options.of(WsatOptions).max_rounds} samples of"
        f" {data.options.cell_seconds:g} s "
        "(the last one cut short to end at the target)",
        *wsat_written_notes(data, written, len(rows)),
    )
    table = sheet("WSAT: IOPS vs time and vs total GB written", columns, rows, notes)
    return with_document(table, target_bytes=target, written_bytes=written)


def wsat_written_notes(data: PtsData, written: int, samples: int) -> tuple[str, ...]:
    """How the written total ended against 4 x the active range: at it, past it by
    what the last sample wrote after it, or short of it at the sample limit."""
    target = WSAT_CAPACITY_MULTIPLE * data.active
    total = f"written {written / 1e9:,.2f} GB of {target / 1e9:,.2f} GB"
    if written > target:
        over = written - target
        return (
            f"{total}: the last sample wrote {over / 1e6:,.1f} MB ({over / target:.2%}) "
            "past 4 x active range",
        )
    if written == target:
        return (f"{total}: stopped at 4 x active range",)
    if samples >= data.options.of(WsatOptions).max_rounds:
        return (f"{total}: stopped at the limit of {samples} samples, short of 4 x active range",)
    return (f"{total} so far",)


def wsat_charts(sheets: Sequence[Sheet], prefix: str) -> list[Chart]:
    """IOPS vs time, and vs total GB written on linear and log axes."""
    rows = sheets[0].rows
    iops = [r["iops"] for r in rows]
    by_time = [Series("IOPS", [r["elapsed_s"] for r in rows], iops)]
    by_gb = [Series("IOPS", [r["written_gb"] for r in rows], iops)]
    return [
        line_chart(
            f"{prefix}-time",
            "WSAT: IOPS vs time",
            by_time,
            x_title="Time (s)",
            y_title="IOPS",
            markers=None,
            unit="IOPS",
        ),
        line_chart(
            f"{prefix}-gb",
            "WSAT: IOPS vs total GB written",
            by_gb,
            x_title="Total written (GB)",
            y_title="IOPS",
            markers=None,
            unit="IOPS",
        ),
        line_chart(
            f"{prefix}-gb-log",
            "WSAT: IOPS vs total GB written (log)",
            by_gb,
            x_title="Total written (GB)",
            y_title="IOPS",
            log_x=True,
            log_y=True,
            markers=None,
            unit="IOPS",
        ),
    ]


@dataclass(frozen=True)
class WsatPage(BasePage):
    test: str = "wsat"
    title: str = "WSAT: write saturation"

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [wsat_sheet(data)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return wsat_charts(sheets, prefix)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        rows = sheets[0].rows
        if not rows:
            return []
        return [
            Figure(f"IOPS of the last sample ({rows[-1]['sample']})", rows[-1]["iops"], "IOPS"),
            Figure("written", rows[-1]["written_gb"], "GB"),
        ]

    def header_fields(self, data: PtsData) -> list[tuple[str, str]]:
        samples = len(data.history(self.test, "run"))
        return [("Samples", f"{samples} (at most {data.options.of(WsatOptions).max_rounds})")]


PAGES = (WsatPage(),)
"""This module's page (:mod:`.pages` finds it)."""
