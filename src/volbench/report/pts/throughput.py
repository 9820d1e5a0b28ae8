"""The Throughput pages: SEQ 100% write and read bandwidth over the window, as bars;
one page per block size (SNIA SSS PTS-E 1.1), one for both in runs stored before."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts.cells import MixCell, block_size_label, parse_cell_as
from volbench.plans.pts.options import THROUGHPUT_TESTS
from volbench.report.chart import Chart, Series, bar_chart
from volbench.report.pts.data import MB, PtsData, average, sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.pts.steady import steady_notes
from volbench.report.sheet import Column, Sheet, fmt_rate

THROUGHPUT_METHOD = (
    "SNIA SSS PTS-E 1.1 Throughput test (as PTS 2.0.2): each block size a test of its own "
    "(purge, WIPC, rounds of SEQ 100% write and 100% read to steady state)"
)
LEGACY_THROUGHPUT = (
    "1024 KiB and 128 KiB in each round after one purge and WIPC (recorded before volbench "
    "ran each block size as a test of its own, as SNIA SSS PTS-E 1.1 does)"
)


def throughput_title(test: str) -> str:
    """``throughput-1024k`` -> ``Throughput SEQ 1024 KiB``; the legacy test: ``Throughput``."""
    if test in THROUGHPUT_TESTS:
        return f"Throughput SEQ {block_size_label(THROUGHPUT_TESTS[test])}"
    return "Throughput"


def throughput_sheet(data: PtsData, test: str) -> Sheet:
    window = data.window(test)
    rows = []
    for name in window[0].cells if window else {}:
        bw = average([r.cells[name].bw_bytes_per_s for r in window if name in r.cells]) or 0.0
        cell = parse_cell_as(MixCell, name)
        direction = "read" if cell.read_pct == 100 else "write"
        rows.append(
            {
                "cell": f"SEQ {block_size_label(cell.bs_bytes)} {direction}",
                "bs_bytes": cell.bs_bytes,
                "direction": direction,
                "bw_bytes_per_s": bw,
                "bw_mb_per_s": bw / MB,
            }
        )
    columns = (Column("cell", "Access"), Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True))
    method = THROUGHPUT_METHOD if test in THROUGHPUT_TESTS else LEGACY_THROUGHPUT
    return sheet(throughput_title(test), columns, rows, (*steady_notes(data, test), method))


@dataclass(frozen=True)
class ThroughputPage(BasePage):
    """The page of one Throughput test (``throughput-1024k``, ``throughput-128k``, or
    the legacy ``throughput``)."""

    test: str

    @property
    def title(self) -> str:
        return throughput_title(self.test)

    def sheets(self, data: PtsData) -> list[Sheet]:
        return [throughput_sheet(data, self.test)]

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        return [Figure(r["cell"], r["bw_mb_per_s"], "MB/s") for r in sheets[0].rows]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        rows = sheets[0].rows
        series = [Series("MB/s", [r["cell"] for r in rows], [r["bw_mb_per_s"] for r in rows])]
        title = sheets[0].title
        return [bar_chart(f"{prefix}-bars", title, series, y_title="MB/s", unit="MB/s")]


PAGES = tuple(ThroughputPage(test) for test in (*THROUGHPUT_TESTS, "throughput"))
"""This module's pages, one per block size and the legacy test's (:mod:`.pages` finds them)."""
"""``throughput-1024k``, ``throughput-128k`` and the legacy ``throughput``."""
