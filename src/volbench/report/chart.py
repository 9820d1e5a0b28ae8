"""Charts: one definition per chart type, as a plotly figure (plain JSON data).

A Chart holds a plotly figure (``data`` traces + ``layout``) built here and
nowhere else; the HTML page draws it with the inlined plotly.js (hover, zoom,
legend toggles) and the PDF is that same page printed by Chromium, where every
chart is SVG, so vector. Builders take figures already in the units they show
(IOPS, MB/s, µs) so each plotted value is a stored value divided by a constant.

The 3D bar chart is drawn in an oblique projection with 2D filled shapes
(like the Excel charts of SNIA's PTS report pages) rather than with WebGL:
WebGL does not survive printing, 2D shapes stay vector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Number = float | int

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
)


MARKER_POINTS = 30


@dataclass(frozen=True)
class Chart:
    """One figure: ``figure`` is plotly's JSON (``{"data": [...], "layout": {...}}``)."""

    id: str
    title: str
    figure: Mapping[str, Any]


@dataclass(frozen=True)
class Series:
    """One named line or set of bars: ``x`` and ``y`` of equal length (None = gap)."""

    name: str
    x: Sequence[Any]
    y: Sequence[Number | None]


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
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


def bar_chart(
    chart_id: str,
    title: str,
    series: Sequence[Series],
    *,
    x_title: str = "",
    y_title: str = "",
    log_y: bool = False,
    unit: str = "",
) -> Chart:
    """Grouped bars: one bar per x category and series; hover shows the value."""
    data = [
        {
            "type": "bar",
            "name": s.name,
            "x": list(s.x),
            "y": list(s.y),
            "hovertemplate": f"%{{x}}<br>{s.name}: %{{y:,.6~g}} {unit}<extra></extra>",
        }
        for s in series
    ]
    layout = _layout(
        title, x_title, y_title, barmode="group", yaxis={"type": "log" if log_y else "linear"}
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
) -> Chart:
    """Lines, one per series; log axes where the data spans decades. ``markers``
    None: markers only on series short enough to show them (<= 30 points)."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers"
            if (markers if markers is not None else len(s.x) <= MARKER_POINTS)
            else "lines",
            "name": s.name,
            "x": list(s.x),
            "y": list(s.y),
            "line": {"shape": "hv" if step else "linear"},
            "hovertemplate": f"{s.name}<br>%{{x}}: %{{y:,.6~g}} {unit}<extra></extra>",
        }
        for s in series
    ]
    layout = _layout(
        title,
        x_title,
        y_title,
        xaxis={"type": "log" if log_x else "-"},
        yaxis={"type": "log" if log_y else "linear"},
    )
    return Chart(chart_id, title, {"data": data, "layout": layout})


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
    for pct, colour in ((20, "rgba(255,165,0,0.12)"), (10, "rgba(44,160,44,0.15)")):
        lo, hi = average * (1 - pct / 100), average * (1 + pct / 100)
        bands.append(
            {
                "type": "scatter",
                "name": f"±{pct}% of average",
                "x": [first, last, last, first, first],
                "y": [lo, lo, hi, hi, lo],
                "fill": "toself",
                "fillcolor": colour,
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
            "hovertemplate": "round %{x}: %{y:,.6~g}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"average {average:,.6g}",
            "x": [first, last],
            "y": [average, average],
            "line": {"dash": "dash"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"fit (slope {slope:,.4g}/round)",
            "x": [first, last],
            "y": [intercept + slope * first, intercept + slope * last],
            "line": {"dash": "dot"},
        },
    ]
    layout = _layout(title, "Round", y_title, xaxis={"dtick": 1})
    return Chart(chart_id, title, {"data": data, "layout": layout})


def bars3d_chart(
    chart_id: str,
    title: str,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    z: Sequence[Sequence[Number | None]],
    *,
    x_title: str,
    y_title: str,
    z_title: str,
    log_z: bool = False,
) -> Chart:
    """3D bars (z[row=y][col=x]) in an oblique projection: each bar is a front
    face, a top and a side, drawn back row first; hovering a bar's front shows
    its value. ``log_z`` scales heights by log10 (labels keep the real values)."""
    import math

    values = [float(v) for row in z for v in row if v is not None and v > 0]
    top = max(values, default=1.0)
    bottom = min(values, default=1.0)

    def height(value: float) -> float:
        if log_z:
            lo = math.floor(math.log10(bottom))
            span = max(math.log10(top) - lo, 1e-9)
            return (math.log10(max(value, 10**lo)) - lo) / span
        return value / top

    width, depth_dx, depth_dy = 0.6, 0.35, 0.25
    data: list[dict[str, Any]] = []
    for j in reversed(range(len(y_labels))):
        colour = PALETTE[j % len(PALETTE)]
        for i, _ in enumerate(x_labels):
            value = z[j][i]
            if value is None:
                continue
            h = height(float(value))
            x0 = i + j * depth_dx
            y0 = j * depth_dy
            front = [(x0, y0), (x0 + width, y0), (x0 + width, y0 + h), (x0, y0 + h)]
            top_face = [
                (x0, y0 + h),
                (x0 + width, y0 + h),
                (x0 + width + depth_dx * 0.8, y0 + h + depth_dy * 0.8),
                (x0 + depth_dx * 0.8, y0 + h + depth_dy * 0.8),
            ]
            side = [
                (x0 + width, y0),
                (x0 + width + depth_dx * 0.8, y0 + depth_dy * 0.8),
                (x0 + width + depth_dx * 0.8, y0 + h + depth_dy * 0.8),
                (x0 + width, y0 + h),
            ]
            for face, opacity, hover in ((side, 0.55, False), (top_face, 0.75, False)):
                data.append(_polygon(face, colour, opacity, y_labels[j], hover=hover))
            data.append(
                {
                    **_polygon(front, colour, 1.0, y_labels[j], hover=True),
                    "text": f"{y_title} {y_labels[j]} · {x_title} {x_labels[i]}: "
                    f"{float(value):,.6g} {z_title}",
                    "customdata": [float(value)] * 5,
                }
            )
    ticks = [i + width / 2 for i in range(len(x_labels))]
    layout = _layout(
        title,
        x_title,
        z_title + (" (log scale)" if log_z else ""),
        showlegend=False,
        xaxis={"tickvals": ticks, "ticktext": list(x_labels), "showgrid": False},
        yaxis={"showticklabels": False, "showgrid": False, "zeroline": False},
        annotations=[
            {
                "x": len(x_labels) - 1 + width + j * depth_dx + 0.1,
                "y": j * depth_dy,
                "text": f"{y_labels[j]}",
                "showarrow": False,
                "xanchor": "left",
                "font": {"size": 10},
            }
            for j in range(len(y_labels))
        ],
    )
    return Chart(chart_id, title, {"data": data, "layout": layout})


def _polygon(
    points: Sequence[tuple[float, float]], colour: str, opacity: float, name: str, *, hover: bool
) -> dict[str, Any]:
    closed = [*points, points[0]]
    return {
        "type": "scatter",
        "mode": "lines",
        "x": [p[0] for p in closed],
        "y": [p[1] for p in closed],
        "fill": "toself",
        "fillcolor": colour,
        "opacity": opacity,
        "line": {"color": "#333", "width": 0.5},
        "name": name,
        "hoveron": "fills" if hover else "points",
        "hoverinfo": "text" if hover else "skip",
        "showlegend": False,
    }


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
            "hovertemplate": f"{s.name}<br>%{{theta}}: %{{r:.3f}}<extra></extra>",
        }
        for s in series
    ]
    polar = {
        "radialaxis": {"range": [0, 1.05], "visible": True, "tickfont": {"size": 9}},
        "angularaxis": {"tickfont": {"size": 9}},
    }
    # side margins for the axis labels, also on a 680 px wide printed page
    layout = _layout(title, "", "", polar=polar, margin={"l": 160, "r": 160})
    if len(axes) > RADAR_AXES_AT_DEFAULT_HEIGHT:  # room for every axis label
        layout["height"] = min(RADAR_MAX_HEIGHT_PX, 420 + 16 * len(axes))
    return Chart(chart_id, title, {"data": data, "layout": layout})


RADAR_AXES_AT_DEFAULT_HEIGHT = 12
"""Axis labels a radar shows legibly at the default chart height (420 px)."""

RADAR_MAX_HEIGHT_PX = 900


def traces_values(chart: Chart) -> dict[str, list[Any]]:
    """Each named trace's y values (tests compare them with the stored results)."""
    return {
        str(t.get("name")): list(t.get("y", t.get("r", [])))
        for t in chart.figure["data"]
        if t.get("hoverinfo") != "skip"
    }
