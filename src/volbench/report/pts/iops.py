"""The IOPS page: the average IOPS of each R/W mix x block size over the window, as a
2D plot (a line per mix) and a heatmap of the block size x mix matrix, each figure
written in its cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts.cells import MixCell, block_size_label
from volbench.plans.pts.iops import Matrix
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.heatmap import heatmap_chart
from volbench.report.pts.data import PtsData, average, sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.pts.steady import steady_notes
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.units import format_block_size

TRACKED_CELLS = ((0, 4096), (65, 65536), (100, 1048576))
"""The IOPS test's tracking variables (R/W mix, block size), PTS 2.0.2."""


def iops_sheet(data: PtsData) -> Sheet:
    window = data.window("iops")
    mixes = data.options.of(Matrix).mixes
    rows = []
    for bs in data.options.of(Matrix).block_sizes:
        row: dict[str, object] = {"bs_bytes": bs, "block_size": format_block_size(bs)}
        for mix in mixes:
            key = str(MixCell(mix, bs))
            row[f"iops_{mix}"] = average([r.cells[key].iops for r in window if key in r.cells])
        rows.append(row)
    columns = (
        Column("bs_bytes", "Block size", lambda v: block_size_label(int(v))),
        *(Column(f"iops_{m}", f"R/W {m}/{100 - m}", fmt_count, numeric=True) for m in mixes),
    )
    return sheet("IOPS (average over the window)", columns, rows, steady_notes(data, "iops"))


def iops_charts(sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
    """IOPS vs block size (a line per R/W mix, log axes, ticked at the block sizes) and
    the bs x mix matrix as a heatmap with every figure written in its cell."""
    rows = sheets[0].rows
    mixes = data.options.of(Matrix).mixes
    lines = [
        Series(
            f"R/W {m}/{100 - m}",
            [r["bs_bytes"] / 1024 for r in rows],
            [r[f"iops_{m}"] for r in rows],
        )
        for m in mixes
    ]
    by_size = line_chart(
        f"{prefix}-2d",
        "IOPS vs block size",
        lines,
        x_title="Block size",
        y_title="IOPS",
        log_x=True,
        log_y=True,
        x_at_values=True,
        unit="IOPS",
    )
    xaxis = by_size.figure["layout"]["xaxis"]
    if "tickvals" in xaxis:  # the block sizes as the tables print them
        xaxis["ticktext"] = [block_size_label(round(v * 1024)) for v in xaxis["tickvals"]]
    return [
        by_size,
        heatmap_chart(
            f"{prefix}-matrix",
            "IOPS by block size and R/W mix",
            [block_size_label(r["bs_bytes"]) for r in rows],
            [f"R/W {m}/{100 - m}" for m in mixes],
            [[r[f"iops_{m}"] for r in rows] for m in mixes],
            x_title="Block size",
            y_title="R/W mix",
            unit="IOPS",
        ),
    ]


@dataclass(frozen=True)
class IopsPage(BasePage):
    test: str = "iops"
    title: str = "IOPS"

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [iops_sheet(data)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return iops_charts(sheets, prefix, data)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        """The IOPS of the tracking variables the matrix has (R/W 0/100 4 KiB, 65/35
        64 KiB, 100/0 1024 KiB: PTS 2.0.2) and the matrix's highest."""
        cells = {
            (m, r["bs_bytes"]): r[f"iops_{m}"]
            for r in sheets[0].rows
            for m in data.options.of(Matrix).mixes
        }
        figures = [
            Figure(f"R/W {m}/{100 - m}, {block_size_label(bs)}", cells[m, bs], "IOPS")
            for m, bs in TRACKED_CELLS
            if cells.get((m, bs)) is not None
        ]
        known = {k: v for k, v in cells.items() if v is not None}
        if known and max(known, key=lambda k: known[k]) not in TRACKED_CELLS:
            (m, bs), top = max(known.items(), key=lambda item: item[1])
            figures.append(
                Figure(f"highest: R/W {m}/{100 - m}, {block_size_label(bs)}", top, "IOPS")
            )
        return figures

    def convergence_cells(
        self, data: PtsData, cells: Sequence[str], tracked: list[str]
    ) -> list[str]:
        """Every block size at the tracked write mix (0/100), as the spec plots it."""
        mixes = data.options.of(Matrix).mixes
        mix = "0-100" if 0 in mixes else f"{mixes[0]}-"
        return [c for c in cells if c.startswith(mix)]


PAGES = (IopsPage(),)
"""This module's page (:mod:`.pages` finds it)."""
