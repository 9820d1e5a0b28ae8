"""The DIRTH page: the demand-intensity sweep (:mod:`.demand`) with its MaxIOPS,
MidIOPS and MinIOPS points, and the response-time histograms of those points
(json+ bins in power-of-two buckets, with percentiles)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.analysis.percentiles import percentiles_from_bins
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.pts.data import US, PtsData, sheet
from volbench.report.pts.demand import demand_charts, demand_rows, demand_sheet
from volbench.report.pts.page import BasePage
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
    """The points' histograms, a stepped line each (bucket upper edges in µs)."""
    series = [
        Series(f"{r['point']} ({r['cell']})", [int(e) / US for e in r["histogram"]],
               list(r["histogram"].values()))
        for r in histograms.rows
    ]  # fmt: skip
    return line_chart(f"{prefix}-histograms", "Response-time histograms", series,
                      x_title="Response time, bucket upper edge (µs)", y_title="I/Os",
                      log_x=True, step=True, unit="I/Os")  # fmt: skip


@dataclass(frozen=True)
class DirthPage(BasePage):
    test: str = "dirth"
    title: str = "DIRTH: demand intensity / response-time histogram"

    def sheets(self, data: PtsData) -> list[Sheet]:
        rows = dirth_rows(data)
        return [demand_sheet(data, self.test, "DIRTH", rows), histogram_sheet(data, rows)]

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        charts = demand_charts(sheets, prefix)
        if len(sheets) > 1 and sheets[1].rows:
            charts.append(histogram_chart(sheets[1], prefix))
        return charts


DIRTH_PAGE = DirthPage()
