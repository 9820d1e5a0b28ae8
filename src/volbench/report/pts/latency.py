"""The Latency page: average, maximum and p99.999 response time at TC1/QD1 of each
R/W mix x block size over the window (p99.999 from the merged json+ bins)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.plans.pts.cells import MixCell, block_size_label, parse_cell_as
from volbench.report.chart import Chart
from volbench.report.heatmap import heatmap_chart
from volbench.report.pts.data import PtsData, average, micro_s, sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.pts.steady import steady_notes
from volbench.report.sheet import Column, Sheet, fmt_latency


def latency_sheet(data: PtsData) -> Sheet:
    window = data.window("latency")
    rows = []
    for name in window[0].cells if window else {}:
        cell = parse_cell_as(MixCell, name)
        cells = [r.cells[name] for r in window if name in r.cells]
        means = [c.lat_mean_ns for c in cells if c.lat_mean_ns is not None]
        maxima = [r.lat_max_ns for c in cells for r in c.results if r.lat_max_ns is not None]
        bins = merge_bins(*(data.bins(c.round_no, f"latency.ss.{name}") for c in cells))
        p = percentiles_from_bins(bins, (99.999,))[99.999] if bins else None
        if p is not None and maxima:  # a bucket's value may exceed the true maximum by 1/128
            p = min(p, max(maxima))
        rows.append(
            {
                "cell": f"RND {block_size_label(cell.bs_bytes)} R/W "
                f"{cell.read_pct}/{100 - cell.read_pct}",
                "bs_bytes": cell.bs_bytes,
                "read_pct": cell.read_pct,
                "lat_mean_ns": average(means),
                "lat_max_ns": max(maxima) if maxima else None,
                "lat_p99999_ns": p,
            }
        )
    columns = (
        Column("cell", "Access (TC1/QD1)"),
        Column("lat_mean_ns", "Average", fmt_latency, numeric=True),
        Column("lat_max_ns", "Maximum", fmt_latency, numeric=True),
        Column("lat_p99999_ns", "p99.999", fmt_latency, numeric=True),
    )
    return sheet("Latency (response time)", columns, rows, steady_notes(data, "latency"))


def latency_charts(sheets: Sequence[Sheet], prefix: str) -> list[Chart]:
    """Average, maximum and p99.999 response time as heatmaps (a row per R/W mix, a
    column per block size), each figure written in its cell."""
    rows = sheets[0].rows
    cells = [
        (block_size_label(r["bs_bytes"]), f"R/W {r['read_pct']}/{100 - r['read_pct']}")
        for r in rows
    ]
    sizes = list(dict.fromkeys(bs for bs, _ in cells))
    mixes = list(dict.fromkeys(mix for _, mix in cells))
    charts = []
    for key, title in (
        ("lat_mean_ns", "Average"),
        ("lat_max_ns", "Maximum"),
        ("lat_p99999_ns", "p99.999"),
    ):
        value = {cell: micro_s(r[key]) for cell, r in zip(cells, rows, strict=True)}
        if not any(v is not None for v in value.values()):
            continue
        z = [[value.get((bs, mix)) for bs in sizes] for mix in mixes]
        charts.append(
            heatmap_chart(
                f"{prefix}-{key}",
                f"{title} response time (TC1/QD1)",
                sizes,
                mixes,
                z,
                x_title="Block size",
                y_title="R/W mix",
                unit="µs",
            )
        )
    return charts


@dataclass(frozen=True)
class LatencyPage(BasePage):
    test: str = "latency"
    title: str = "Latency"
    fixed_tc_qd: tuple[int, int] | None = (1, 1)

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [latency_sheet(data)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        return latency_charts(sheets, prefix)

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        """Average and p99.999 response time of the 4 KiB cells (of every cell when
        the matrix has no 4 KiB)."""
        rows = [r for r in sheets[0].rows if r["bs_bytes"] == 4096] or list(sheets[0].rows)
        return [
            Figure(f"{r['cell']} {name}", r[key], "ns")
            for r in rows
            for key, name in (("lat_mean_ns", "average"), ("lat_p99999_ns", "p99.999"))
            if r[key] is not None
        ]

    def convergence_cells(
        self, data: PtsData, cells: Sequence[str], tracked: list[str]
    ) -> list[str]:
        """Every cell of the matrix (one is tracked)."""
        return list(cells)


PAGES = (LatencyPage(),)
"""This module's page (:mod:`.pages` finds it)."""
