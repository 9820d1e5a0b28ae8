"""Latency percentiles as a ladder: for each test a column of markers, one per
percentile (p50 .. p99.99), joined by a thin line, on a log axis. Five series
whatever the number of tests, so the chart stays readable with 14 tests, where a
line per test would not."""

from __future__ import annotations

from collections.abc import Sequence

from volbench.report.axis import log_axis, value_text
from volbench.report.chart import Chart, Number, base_layout, colour

SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x", "star")


def ladder_chart(
    chart_id: str,
    title: str,
    categories: Sequence[str],
    levels: Sequence[tuple[str, Sequence[Number | None]]],
    *,
    y_title: str,
    unit: str,
) -> Chart:
    """``levels``: (name, a value per category), lowest first; each level a series
    of markers, each category's levels joined by a grey line (not hoverable)."""
    spans_x: list[str | None] = []
    spans_y: list[Number | None] = []
    for index, category in enumerate(categories):
        column = [float(v) for _, values in levels if (v := values[index]) is not None]
        if column:
            spans_x += [category, category, None]
            spans_y += [min(column), max(column), None]
    data: list[dict[str, object]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "range",
            "x": spans_x,
            "y": spans_y,
            "line": {"color": "#9aa3b0", "width": 2},
            "hoverinfo": "skip",
            "showlegend": False,
        }
    ]
    for n, (name, values) in enumerate(levels):
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": list(categories),
                "y": list(values),
                "marker": {"color": colour(n), "size": 10, "symbol": SYMBOLS[n % len(SYMBOLS)]},
                "text": [value_text(float(v), unit) if v is not None else "" for v in values],
                "hovertemplate": "%{x}<br>%{fullData.name}: %{text}<extra></extra>",
            }
        )
    every = [v for _, values in levels for v in values]
    layout = base_layout(
        title,
        "",
        y_title,
        xaxis={"type": "category"},
        yaxis=log_axis(every, unit),
        meta={"unit": unit},
    )
    return Chart(chart_id, title, {"data": data, "layout": layout})
