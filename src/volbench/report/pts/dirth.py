"""The DIRTH page: the demand-intensity sweep (:mod:`.demand`) with its MaxIOPS,
MidIOPS and MinIOPS points, and the response-time histograms of those points
(json+ bins in power-of-two buckets, with percentiles)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from volbench.analysis.percentiles import percentiles_from_bins
from volbench.report.axis import duration_text
from volbench.report.chart import Chart, Series, bar_chart
from volbench.report.pts.data import PtsData, sheet
from volbench.report.pts.demand import DemandRow, demand_charts, demand_rows, demand_sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.rows import Row, rows_of
from volbench.report.sheet import Column, Sheet, fmt_latency

DIRTH_MAX_LATENCY_NS = 5e6
"""DIRTH MaxIOPS: the highest IOPS whose average response time is below 5 ms."""

HISTOGRAM_PCTS = (50.0, 90.0, 99.0, 99.9, 99.99)


def dirth_rows(data: PtsData) -> list[DemandRow]:
    """The sweep's rows with MaxIOPS, MidIOPS and MinIOPS marked in ``point``."""
    rows = demand_rows(data, "dirth")
    if not rows:
        return rows
    every = range(len(rows))
    under = [i for i in every if (rows[i].lat_mean_ns or 0) < DIRTH_MAX_LATENCY_NS]
    top = max(under or every, key=lambda i: rows[i].iops)
    low = min(every, key=lambda i: rows[i].toio)
    middle = (rows[top].iops + rows[low].iops) / 2
    others = [i for i in every if i not in (top, low)] or list(every)
    mid = min(others, key=lambda i: abs(rows[i].iops - middle))
    for i, label in ((top, "MaxIOPS"), (mid, "MidIOPS"), (low, "MinIOPS")):
        point = rows[i].point
        rows[i] = replace(rows[i], point=label if point is None else f"{point}+{label}")
    return rows


@dataclass(frozen=True, eq=False)
class HistogramRow(Row):
    """The response times of one DIRTH point (MaxIOPS, MidIOPS, MinIOPS): percentiles
    (ns) from its json+ bins, and its I/Os per power-of-two bucket (upper edge in ns,
    as text: JSON's keys)."""

    point: str
    cell: str
    p50_ns: float | None
    p90_ns: float | None
    p99_ns: float | None
    p99_9_ns: float | None
    p99_99_ns: float | None
    histogram: dict[str, int]

    renamed: ClassVar[Mapping[str, str]] = {"p99_9_ns": "p99.9_ns", "p99_99_ns": "p99.99_ns"}


def histogram_sheet(data: PtsData, points: list[DemandRow]) -> Sheet:
    """Response-time histograms of the MaxIOPS, MidIOPS and MinIOPS points: the json+
    bins in power-of-two buckets (upper edge in ns), with percentiles."""
    sweep = data.history("dirth", "sweep")
    rows = []
    for point in points:
        if not point.point:
            continue
        bins = data.bins(sweep[-1].cells[point.cell].round_no, f"dirth.sweep.{point.cell}")
        buckets: dict[int, int] = {}
        for value, count in bins.items():
            edge = 1 << max(int(value).bit_length(), 10)
            buckets[edge] = buckets.get(edge, 0) + count
        pcts = percentiles_from_bins(bins, HISTOGRAM_PCTS) if bins else {}
        rows.append(
            HistogramRow(
                point=point.point,
                cell=point.cell,
                p50_ns=pcts.get(50.0),
                p90_ns=pcts.get(90.0),
                p99_ns=pcts.get(99.0),
                p99_9_ns=pcts.get(99.9),
                p99_99_ns=pcts.get(99.99),
                histogram={str(edge): count for edge, count in sorted(buckets.items())},
            )
        )
    columns = (
        Column("point", "Point"),
        Column("cell", "TC x QD"),
        *(Column(f"p{p:g}_ns", f"p{p:g}", fmt_latency, numeric=True) for p in HISTOGRAM_PCTS),
        Column("histogram", "Histogram (<= ns: I/Os)", _histogram),
    )
    return sheet("DIRTH response-time histograms", columns, rows, ())


def _histogram(value: object) -> str:
    if not isinstance(value, Mapping):
        raise TypeError(f"not a histogram: {value!r}")
    return " ".join(f"{fmt_latency(int(edge))}:{count}" for edge, count in value.items())


def histogram_chart(histograms: Sheet, prefix: str) -> Chart:
    """The points' histograms as the share of each point's I/Os per power-of-two
    bucket (a bar per bucket and point, bucket upper edges as categories): MinIOPS
    at QD 1 did far fewer I/Os than MaxIOPS, and reads as clearly."""
    rows = rows_of(histograms.rows, HistogramRow)
    edges = sorted({int(e) for r in rows for e in r.histogram})
    series = []
    for r in rows:
        total = sum(r.histogram.values()) or 1
        series.append(
            Series(
                f"{r.point} ({r.cell})",
                [_edge_label(e) for e in edges],
                [100 * r.histogram.get(str(e), 0) / total for e in edges],
            )
        )
    return bar_chart(
        f"{prefix}-histograms",
        "Response-time histograms: share of I/Os",
        series,
        x_title="Response time, up to (bucket upper edge)",
        y_title="% of the point's I/Os",
        log_y=False,
        unit="%",
    )


def _edge_label(edge_ns: int) -> str:
    return f"≤ {duration_text(edge_ns)}"


@dataclass(frozen=True)
class DirthPage(BasePage):
    test: str = "dirth"
    title: str = "DIRTH: demand intensity / response-time histogram"

    def sheets(self, data: PtsData) -> list[Sheet]:
        rows = dirth_rows(data)
        return [demand_sheet(data, self.test, "DIRTH", rows), histogram_sheet(data, rows)]

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        """IOPS and average response time of MaxIOPS and MinIOPS."""
        figures = []
        for row in rows_of(sheets[0].rows, DemandRow):
            for label in ("MaxIOPS", "MinIOPS"):
                if label in (row.point or "").split("+"):
                    at = f"{label} (TC {row.tc} x QD {row.qd})"
                    figures.append(Figure(at, row.iops, "IOPS"))
                    figures.append(Figure(f"{at} average response", row.lat_mean_ns, "ns"))
        return figures

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        charts = demand_charts(sheets, prefix)
        if len(sheets) > 1 and sheets[1].rows:
            charts.append(histogram_chart(sheets[1], prefix))
        return charts


PAGES = (DirthPage(),)
"""This module's page (:mod:`.pages` finds it)."""
