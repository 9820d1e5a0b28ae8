"""The DIRTH page: the demand-intensity sweep (:mod:`.demand`) with its MaxIOPS,
MidIOPS and MinIOPS points, and the response-time histograms of those points
(json+ bins in power-of-two buckets, with percentiles)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.analysis.percentiles import percentiles_from_bins
from volbench.report.axis import duration_text
from volbench.report.chart import Chart, Series, bar_chart
from volbench.report.pts.data import PtsData, sheet
from volbench.report.pts.demand import demand_charts, demand_rows, demand_sheet
from volbench.report.pts.page import BasePage, Figure
from volbench.report.sheet import Column, Sheet, fmt_latency

DIRTH_MAX_LATENCY_NS = 5e6
"""DIRTH MaxIOPS: the highest IOPS whose average response time is below 5 ms."""

HISTOGRAM_PCTS = (50.0, 90.0, 99.0, 99.9, 99.99)


def dirth_rows(data: PtsData) -> list[dict[str, Any]]:
    """The sweep's rows with MaxIOPS, MidIOPS and MinIOPS marked in ``point``."""
    rows = demand_rows(data, "dirth")
    if not rows:
        return rows
    under = [r for r in rows if (r["lat_mean_ns"] or 0) < DIRTH_MAX_LATENCY_NS]
    top = max(under or rows, key=lambda r: r["iops"])
    low = min(rows, key=lambda r: r["toio"])
    middle = (top["iops"] + low["iops"]) / 2
    others = [r for r in rows if r is not top and r is not low] or rows
    mid = min(others, key=lambda r: abs(r["iops"] - middle))
    for row, label in ((top, "MaxIOPS"), (mid, "MidIOPS"), (low, "MinIOPS")):
        row["point"] = label if row["point"] is None else f"{row['point']}+{label}"
    return rows


def histogram_sheet(data: PtsData, points: list[dict[str, Any]]) -> Sheet:
    """Response-time histograms of the MaxIOPS, MidIOPS and MinIOPS points: the json+
    bins in power-of-two buckets (upper edge in ns), with percentiles."""
    sweep = data.history("dirth", "sweep")
    rows = []
    for point in (r for r in points if r["point"]):
        bins = data.bins(sweep[-1].cells[point["cell"]].round_no, f"dirth.sweep.{point['cell']}")
        buckets: dict[int, int] = {}
        for value, count in bins.items():
            edge = 1 << max(int(value).bit_length(), 10)
            buckets[edge] = buckets.get(edge, 0) + count
        pcts = percentiles_from_bins(bins, HISTOGRAM_PCTS) if bins else {}
        rows.append(
            {
                "point": point["point"],
                "cell": point["cell"],
                **{f"p{p:g}_ns": pcts.get(p) for p in HISTOGRAM_PCTS},
                "histogram": {str(edge): count for edge, count in sorted(buckets.items())},
            }
        )
    columns = (
        Column("point", "Point"),
        Column("cell", "TC x QD"),
        *(Column(f"p{p:g}_ns", f"p{p:g}", fmt_latency, numeric=True) for p in HISTOGRAM_PCTS),
        Column("histogram", "Histogram (<= ns: I/Os)", _histogram),
    )
    return sheet("DIRTH response-time histograms", columns, rows, ())


def _histogram(value: Any) -> str:
    return " ".join(f"{fmt_latency(int(edge))}:{count}" for edge, count in value.items())


def histogram_chart(histograms: Sheet, prefix: str) -> Chart:
    """The points' histograms as the share of each point's I/Os per power-of-two
    bucket (a bar per bucket and point, bucket upper edges as categories): MinIOPS
    at QD 1 did far fewer I/Os than MaxIOPS, and reads as clearly."""
    edges = sorted({int(e) for r in histograms.rows for e in r["histogram"]})
    series = []
    for r in histograms.rows:
        total = sum(r["histogram"].values()) or 1
        series.append(Series(
            f"{r['point']} ({r['cell']})", [_edge_label(e) for e in edges],
            [100 * r["histogram"].get(str(e), 0) / total for e in edges],
        ))  # fmt: skip
    return bar_chart(f"{prefix}-histograms", "Response-time histograms: share of I/Os",
                     series, x_title="Response time, up to (bucket upper edge)",
                     y_title="% of the point's I/Os", log_y=False, unit="%")  # fmt: skip


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
        for row in sheets[0].rows:
            for label in ("MaxIOPS", "MinIOPS"):
                if label in (row["point"] or "").split("+"):
                    at = f"{label} (TC {row['tc']} x QD {row['qd']})"
                    figures.append(Figure(at, row["iops"], "IOPS"))
                    figures.append(Figure(f"{at} average response", row["lat_mean_ns"], "ns"))
        return figures

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        charts = demand_charts(sheets, prefix)
        if len(sheets) > 1 and sheets[1].rows:
            charts.append(histogram_chart(sheets[1], prefix))
        return charts


DIRTH_PAGE = DirthPage()
