"""A matrix of figures as a heatmap: each cell coloured by its value and labelled with
it, so every number can be read (the PTS block size x R/W mix figures; SNIA's own
report pages draw them as oblique 3D bars, whose heights cannot be read off)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from volbench.report.axis import LATENCY_UNITS, nice_ticks, number_text, tick_text, value_text
from volbench.report.chart import Chart, Number, base_layout

COLOURS = "YlGnBu"
"""A light-to-dark scale (reversed: the larger a value, the darker its cell): values
read in dark text on light cells and in light text on dark ones (plotly picks the
text colour per cell)."""


def _text(value: Number | None, unit: str) -> str:
    if value is None:
        return ""
    return value_text(float(value), unit) if unit in LATENCY_UNITS else number_text(float(value))


def heatmap_chart(
    chart_id: str,
    title: str,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    z: Sequence[Sequence[Number | None]],
    *,
    x_title: str,
    y_title: str,
    unit: str,
    log: bool = True,
) -> Chart:
    """``z[row][column]`` (a row per ``y_labels``, a column per ``x_labels``): colour
    by value (by log10 of it when ``log``: figures spanning decades), the value
    written in each cell and shown on hover (``customdata`` holds the values)."""
    values = [float(v) for row in z for v in row if v is not None and v > 0]

    def shade(value: Number | None) -> float | None:
        if value is None or (log and value <= 0):
            return None
        return math.log10(value) if log else float(value)

    colorbar: dict[str, object] = {"title": {"text": unit}, "thickness": 12}
    if log and values:
        ticks = nice_ticks(min(values), max(values))
        colorbar.update(
            tickvals=[math.log10(t) for t in ticks], ticktext=[tick_text(t, unit) for t in ticks]
        )
    trace = {
        "type": "heatmap",
        "x": list(x_labels),
        "y": list(y_labels),
        "z": [[shade(v) for v in row] for row in z],
        "customdata": [list(row) for row in z],
        "text": [[_text(v, unit) for v in row] for row in z],
        "texttemplate": "%{text}",
        "textfont": {"size": 12},
        "colorscale": COLOURS,
        "reversescale": True,
        "xgap": 2,
        "ygap": 2,
        "colorbar": colorbar,
        "hovertemplate": f"{y_title} %{{y}} · {x_title} %{{x}}: %{{text}}<extra></extra>",
        "name": title,
    }
    layout = base_layout(
        title,
        x_title,
        y_title,
        xaxis={"type": "category", "showgrid": False},
        yaxis={"type": "category", "showgrid": False, "autorange": "reversed"},
        height=max(260, 120 + 44 * len(y_labels)),
    )
    return Chart(chart_id, title, {"data": [trace], "layout": layout})
