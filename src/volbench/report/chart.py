"""Charts: one definition per chart type, as a plotly figure (plain JSON data).

A Chart holds a plotly figure (``data`` traces + ``layout``) built here and
nowhere else; the HTML page draws it with the inlined plotly.js (hover, zoom,
legend toggles) and the PDF is that same page printed by Chromium, where every
chart is SVG, so vector. Builders take figures already in the units they show
(IOPS, MB/s, µs/ms/s as :func:`volbench.report.axis.latency_unit` chose) so each
plotted value is a stored value divided by a constant.

Every bar is labelled with its value; a bar chart whose values span decades (QD 1
beside QD 64) gets a log axis, and log axes are ticked by :mod:`volbench.report.axis`
(no bare "2" and "5"). Each series has a colour of its own: 16 distinct colours,
then the same colours dashed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.report.axis import LATENCY_UNITS, log_axis, number_text, spans_decades, value_text

Number = float | int

Plotly = dict[str, Any]
"""plotly.js's own JSON (a figure, its layout, an axis, a trace): plotly's keys, to any
depth, which plotly does not type; nowhere else in the report is a value untyped."""

Category = str | float
"""An x value: a category's name (a test, a block size's text) or a number."""

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000075",
    "#800000",
    "#469990",
    "#f032e6",
    "#e6ab02",
    "#222222",
)
"""plotly's ten colours, then six more of a 20-colour set chosen to be told apart
(Sasha Trubetskoy, "List of 20 Simple, Distinct Colors"), without its pale ones."""

DASHES = ("solid", "dash", "dot", "dashdot")
"""Series beyond the palette: its colours again, dashed."""

MARKER_POINTS = 30

MARK_COLOR = "#d62728"


@dataclass(frozen=True)
class Chart:
    """One figure: ``figure`` is plotly's JSON (``{"data": [...], "layout": {...}}``)."""

    id: str
    title: str
    figure: Plotly


@dataclass(frozen=True)
class Series:
    """One named line or set of bars: ``x`` and ``y`` of equal length (None = gap);
    ``low``/``high``: a spread around each ``y`` (min and max), drawn as error bars."""

    name: str
    x: Sequence[Category]
    y: Sequence[Number | None]
    low: Sequence[Number | None] | None = None
    high: Sequence[Number | None] | None = None


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def dash(index: int) -> str:
    return DASHES[(index // len(PALETTE)) % len(DASHES)]


def base_layout(title: str, x_title: str, y_title: str, **extra: object) -> Plotly:
    """plotly's layout of a chart: title, axis titles, legend above, margins; ``meta``
    (plotly keeps it and draws nothing) holds the units the values are in."""
    layout: Plotly = {
        "title": {"text": title, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top"},
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True},
        "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0, "yanchor": "bottom"},
        "margin": {"t": 80, "l": 60, "r": 20, "b": 60},
        "hovermode": "closest",
        "template": {"layout": {"colorway": list(PALETTE), "plot_bgcolor": "#f4f6fa"}},
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _hover(unit: str) -> str:
    """How a hovered y value reads: latency with its unit, figures with separators."""
    return f"%{{y:,.6~g}} {unit}".rstrip()


def _label(value: Number | None, unit: str) -> str:
    """A bar's label: its value (a share to 0.1 %, none below 0.05 %)."""
    if value is None:
        return ""
    if unit == "%":
        return f"{value:.1f}" if value >= 0.05 else ""
    return value_text(float(value), unit) if unit in LATENCY_UNITS else number_text(float(value))


def _less(a: Number | None, b: Number | None) -> float | None:
    return float(a) - float(b) if a is not None and b is not None else None


def _errors(s: Series) -> Plotly:
    if s.low is None or s.high is None:
        return {}
    plus = [_less(h, y) for h, y in zip(s.high, s.y, strict=True)]
    minus = [_less(y, lo) for lo, y in zip(s.low, s.y, strict=True)]
    return {
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": plus,
            "arrayminus": minus,
            "color": "#444",
            "thickness": 1.2,
            "width": 4,
        }
    }


def bar_chart(
    chart_id: str,
    title: str,
    series: Sequence[Series],
    *,
    x_title: str = "",
    y_title: str = "",
    log_y: bool | None = None,
    unit: str = "",
) -> Chart:
    """Grouped bars, one per x category and series, each labelled with its value;
    ``log_y`` None: a log axis when the values span decades."""
    values = [v for s in series for v in s.y]
    log = spans_decades(values) if log_y is None else log_y
    data = [
        {
            "type": "bar",
            "name": s.name,
            "x": list(s.x),
            "y": list(s.y),
            "marker": {"color": colour(i)},
            "text": [_label(v, unit) for v in s.y],
            "textposition": "outside",
            "cliponaxis": False,
            "textfont": {"size": 10},
            "hovertemplate": f"%{{x}}<br>%{{fullData.name}}: {_hover(unit)}<extra></extra>",
            **_errors(s),
        }
        for i, s in enumerate(series)
    ]
    tops = [h for s in series for h in (s.high or s.y) if h is not None]
    yaxis: Plotly = (
        log_axis([*values, *tops], unit) if log else {"type": "linear", "rangemode": "tozero"}
    )
    if not log and tops:  # room above the tallest bar for its label
        yaxis["range"] = [0, max(max(tops), 0) * 1.12 or 1]
    layout = base_layout(
        title,
        x_title,
        y_title,
        barmode="group",
        yaxis=yaxis,
        uniformtext={"minsize": 8, "mode": "show"},
        meta={"unit": unit},
    )
    return Chart(chart_id, title, {"data": data, "layout": layout})


def line_chart(
    chart_id: str,
    title: str,
    series: Sequence[Series],
    *,
    x_title: str = "",
    y_title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    markers: bool | None = True,
    step: bool = False,
    unit: str = "",
    x_unit: str = "",
    x_at_values: bool = False,
    y_from_zero: bool = False,
) -> Chart:
    """Lines, one per series; log axes where the data span decades (ticked by
    :func:`volbench.report.axis.log_axis`; ``x_at_values``: at the x values when they
    are few). ``markers`` None: markers only on series of at most 30 points;
    ``y_from_zero``: a linear y axis from 0 (a flat line reads as flat, not as noise)."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers"
            if (markers if markers is not None else len(s.x) <= MARKER_POINTS)
            else "lines",
            "name": s.name,
            "x": list(s.x),
            "y": list(s.y),
            "line": {"shape": "hv" if step else "linear", "color": colour(i), "dash": dash(i)},
            "marker": {"color": colour(i)},
            "hovertemplate": f"%{{fullData.name}}<br>%{{x}}: {_hover(unit)}<extra></extra>",
        }
        for i, s in enumerate(series)
    ]
    xs = [x for s in series for x in s.x]
    ys = [y for s in series for y in s.y]
    layout = base_layout(
        title,
        x_title,
        y_title,
        xaxis=log_axis(xs, x_unit, at_values=x_at_values) if log_x else {"type": "-"},
        yaxis=log_axis(ys, unit)
        if log_y
        else {"type": "linear", **({"rangemode": "tozero"} if y_from_zero else {})},
        meta={"unit": unit, "x_unit": x_unit},
    )
    return Chart(chart_id, title, {"data": data, "layout": layout})


@dataclass(frozen=True)
class Mark:
    """A point a chart names: the knee of a sweep, its peak, the best point under a
    latency target."""

    x: Category
    y: float
    text: str


def with_marks(chart: Chart, marks: Sequence[Mark], *, name: str = "marked") -> Chart:
    """``chart`` with each mark drawn as a star and named beside it."""
    if not marks:
        return chart
    layout = dict(chart.figure["layout"])
    log_x = layout.get("xaxis", {}).get("type") == "log"
    log_y = layout.get("yaxis", {}).get("type") == "log"
    notes = list(layout.get("annotations", []))
    for mark in marks:  # an annotation on a log axis sits at log10 of its value
        notes.append(
            {
                "x": _at(mark.x, log_x),
                "y": _at(mark.y, log_y),
                "text": mark.text,
                "showarrow": True,
                "arrowhead": 2,
                "ax": 0,
                "ay": -36,
                "font": {"size": 11, "color": MARK_COLOR},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    layout["annotations"] = notes
    stars = {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [m.x for m in marks],
        "y": [m.y for m in marks],
        "text": [m.text for m in marks],
        "marker": {
            "symbol": "star",
            "size": 14,
            "color": MARK_COLOR,
            "line": {"color": "#fff", "width": 1},
        },
        "hovertemplate": "%{text}<extra></extra>",
    }
    return Chart(chart.id, chart.title, {"data": [*chart.figure["data"], stars], "layout": layout})


def _at(value: Category, log: bool) -> Category:
    return math.log10(value) if log and isinstance(value, int | float) and value > 0 else value


def with_fits(chart: Chart, fits: Sequence[tuple[Series, str]]) -> Chart:
    """``chart`` with curves fitted to its data drawn over it: each ``(series, colour)``
    a dashed line without markers, in the colour of the data it was fitted to (the
    values in the chart's own units)."""
    unit = str(chart.figure["layout"].get("meta", {}).get("unit", ""))
    lines = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": s.name,
            "x": list(s.x),
            "y": list(s.y),
            "line": {"color": color, "dash": "dash", "width": 1.5},
            "hovertemplate": f"%{{fullData.name}}<br>%{{x}}: {_hover(unit)}<extra></extra>",
        }
        for s, color in fits
    ]
    return Chart(chart.id, chart.title, {**chart.figure, "data": [*chart.figure["data"], *lines]})


def with_level(
    chart: Chart, y: float, text: str, *, color: str = MARK_COLOR, right: bool = False
) -> Chart:
    """``chart`` with a dashed horizontal line at ``y`` (a latency target, a fitted cap),
    named at its left end (``right``: at its right end, so two levels near each other
    keep their names apart) in ``color``."""
    layout = dict(chart.figure["layout"])
    layout["shapes"] = [
        *layout.get("shapes", []),
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "yref": "y",
            "y0": y,
            "y1": y,
            "line": {"color": color, "width": 1.5, "dash": "dash"},
        },
    ]
    at = _at(y, layout.get("yaxis", {}).get("type") == "log")
    layout["annotations"] = [
        *layout.get("annotations", []),
        {
            "xref": "paper",
            "x": 1 if right else 0,
            "xanchor": "right" if right else "left",
            "y": at,
            "yanchor": "bottom",
            "text": text,
            "showarrow": False,
            "font": {"size": 11, "color": color},
        },
    ]
    return Chart(chart.id, chart.title, {**chart.figure, "layout": layout})


def window_chart(
    chart_id: str,
    title: str,
    rounds: Sequence[int],
    values: Sequence[float],
    *,
    average: float,
    slope: float,
    intercept: float,
    y_title: str,
) -> Chart:
    """The PTS measurement-window plot: the tracked values, their average, the
    least-squares fit line and the ±10% / ±20% bands around the average.

    PTS 2.0.2 steady state: max - min <= 20% of the average (data excursion) and
    the fit's excursion over the window <= 10% of the average (slope excursion).
    """
    xs = list(rounds)
    first, last = (xs[0], xs[-1]) if xs else (0, 0)
    bands = []
    for pct, fill in ((20, "rgba(255,165,0,0.12)"), (10, "rgba(44,160,44,0.15)")):
        lo, hi = average * (1 - pct / 100), average * (1 + pct / 100)
        bands.append(
            {
                "type": "scatter",
                "name": f"±{pct}% of average",
                "x": [first, last, last, first, first],
                "y": [lo, lo, hi, hi, lo],
                "fill": "toself",
                "fillcolor": fill,
                "line": {"width": 0},
                "hoverinfo": "skip",
                "mode": "lines",
            }
        )
    data = [
        *bands,
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "measured",
            "x": xs,
            "y": list(values),
            "line": {"color": colour(0)},
            "hovertemplate": "round %{x}: %{y:,.6~g}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"average {number_text(average)}",
            "x": [first, last],
            "y": [average, average],
            "line": {"dash": "dash", "color": colour(1)},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"fit (slope {number_text(slope)}/round)",
            "x": [first, last],
            "y": [intercept + slope * first, intercept + slope * last],
            "line": {"dash": "dot", "color": colour(2)},
        },
    ]
    layout = base_layout(title, "Round", y_title, xaxis={"dtick": 1})
    return Chart(chart_id, title, {"data": data, "layout": layout})


def radar_chart(chart_id: str, title: str, axes: Sequence[str], series: Sequence[Series]) -> Chart:
    """A radar of scores in 0..1 (1 = the best run), one closed line per series;
    ``Series.x`` is unused (the axes name the points)."""
    data = [
        {
            "type": "scatterpolar",
            "name": s.name,
            "r": [*s.y, s.y[0]] if s.y else [],
            "theta": [*axes, axes[0]] if axes else [],
            "fill": "toself",
            "opacity": 0.6,
            "line": {"color": colour(i)},
            "hovertemplate": "%{fullData.name}<br>%{theta}: %{r:.3f}<extra></extra>",
        }
        for i, s in enumerate(series)
    ]
    polar = {
        "radialaxis": {"range": [0, 1.05], "visible": True, "tickfont": {"size": 9}},
        "angularaxis": {"tickfont": {"size": 9}},
    }
    # side margins for the axis labels, also on a 680 px wide printed page
    layout = base_layout(title, "", "", polar=polar, margin={"l": 160, "r": 160})
    if len(axes) > RADAR_AXES_AT_DEFAULT_HEIGHT:  # room for every axis label
        layout["height"] = min(RADAR_MAX_HEIGHT_PX, 420 + 16 * len(axes))
    return Chart(chart_id, title, {"data": data, "layout": layout})


RADAR_AXES_AT_DEFAULT_HEIGHT = 12
"""Axis labels a radar shows legibly at the default chart height (420 px)."""

RADAR_MAX_HEIGHT_PX = 900


TEMPLATE_KEYS = frozenset({"hovertemplate", "texttemplate"})
"""Keys whose strings are volbench's own plotly templates (with their markup); every
other string of a figure may come from a user's file (a job or product name)."""


def plain_figure(value: object) -> object:
    """A figure with every string but its templates written as plain text for plotly,
    which reads a subset of HTML in names, labels and titles (``<a href>`` becomes a
    live link, plotly.js ``svg_text_utils``): ``&``, ``<`` and ``>`` as entities,
    which plotly shows as the characters themselves. Names reach the hover text
    through ``%{fullData.name}``, never pasted into a template."""
    if isinstance(value, str):
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if isinstance(value, dict):
        return {k: v if k in TEMPLATE_KEYS else plain_figure(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_figure(v) for v in value]
    return value


def traces_values(chart: Chart) -> dict[str, list[Number | None]]:
    """Each named trace's y values (tests compare them with the stored results)."""
    return {
        str(t.get("name")): list(t.get("y", t.get("r", [])))
        for t in chart.figure["data"]
        if t.get("hoverinfo") != "skip"
    }
