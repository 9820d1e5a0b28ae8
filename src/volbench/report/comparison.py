"""Comparison of runs (``volbench compare``, a report's comparison section): a table of
each group's value and spread per test, direction and metric with its % difference
from the first group (the figures: :mod:`volbench.report.group_figures`), grouped bars
per metric (the spread as error bars) and a radar of every metric normalised to the
best group.

Tables and charts show latency in the unit that fits (the JSON in µs). In the radar a
rate scores value / best and a latency best / value, so 1 is always the best group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from volbench.errors import UsageError
from volbench.model import RunRecord
from volbench.report.axis import latency_unit
from volbench.report.chart import Chart, Series, bar_chart, radar_chart
from volbench.report.document import Section
from volbench.report.group_figures import METRICS, ComparisonRow, comparison_rows, group_runs
from volbench.report.rows import documents, number, rows_of
from volbench.report.sheet import Column, Sheet, fmt_latency

SCHEMA = "volbench.compare/2"


def _row(row: Mapping[str, object]) -> ComparisonRow:
    if not isinstance(row, ComparisonRow):
        raise TypeError("not a comparison row")
    return row


def _fmt_number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def _value_text(index: int) -> Callable[[Mapping[str, object]], str | None]:
    """A group's value as shown: latency in the unit that fits (stored in µs)."""

    def shown(mapping: Mapping[str, object]) -> str | None:
        row = _row(mapping)
        value = row.figures[index].value
        if value is None:
            return None
        return fmt_latency(value * 1e3) if row.metric_key.startswith("lat_") else _fmt_number(value)

    return shown


def _spread_text(index: int) -> Callable[[Mapping[str, object]], str | None]:
    """A group's spread: its runs' minimum-maximum and the standard deviation as a
    share of the value (None for a group of one run)."""

    def shown(mapping: Mapping[str, object]) -> str | None:
        row = _row(mapping)
        figure = row.figures[index]
        low, high, n = figure.min, figure.max, figure.runs
        if low is None or high is None or not n or n < 2:
            return None
        latency = row.metric_key.startswith("lat_")
        text = (
            f"{fmt_latency(low * 1e3)}-{fmt_latency(high * 1e3)}"
            if latency
            else f"{_fmt_number(low)}-{_fmt_number(high)}"
        )
        stdev, value = figure.stdev, figure.value
        if stdev is not None and value:
            text += f" (sd {stdev / value:.0%})"
        return text

    return shown


def _fmt_pct(value: object) -> str:
    return f"{number(value):+.1f}%"


def comparison_sheet(runs: Sequence[RunRecord], by: Sequence[str] = ()) -> Sheet:
    """The comparison table of ``runs`` (grouped by the labels ``by``)."""
    if len(runs) < 2:
        raise UsageError("compare needs at least two runs")
    groups = group_runs(runs, by)
    if len(groups) < 2:
        raise UsageError(
            f"every run has the same {'/'.join(by)} label values: compare by another label"
        )
    rows = comparison_rows(groups)
    several = any(len(g.runs) > 1 for g in groups)
    columns = [Column("test", "Test"), Column("direction", "Dir"), Column("metric", "Metric")]
    for index, group in enumerate(groups):
        label = group.name + (f" ({len(group.runs)} runs)" if len(group.runs) > 1 else "")
        columns.append(Column(f"value_{index}", label, numeric=True, shown=_value_text(index)))
        if several:
            columns.append(
                Column(f"min_{index}", "min-max", numeric=True, shown=_spread_text(index))
            )
    for index, group in enumerate(groups[1:], start=1):
        columns.append(
            Column(f"diff_pct_{index}", f"{group.name} vs {groups[0].name}", _fmt_pct, numeric=True)
        )
    notes = [f"{g.name}: run(s) {', '.join(str(r.id) for r in g.runs)}" for g in groups]
    notes.append("difference % = (value - baseline) / baseline; latency: lower is better")
    if several:
        notes.append(
            "a group of several runs: IOPS and MB/s their mean, min-max and standard"
            " deviation (sd, share of the mean); mean latency over all their I/Os; p99 of"
            " all their I/Os from fio's json+ bins merged (the worst run's where a run has"
            " no bins), the runs' own p99 as min-max"
        )
    document = {
        "schema": SCHEMA,
        "by": list(by),
        "groups": [{"name": g.name, "runs": [r.id for r in g.runs]} for g in groups],
        "rows": documents(rows),
    }
    return Sheet("Comparison", tuple(columns), tuple(rows), document, tuple(notes))


def comparison_charts(sheet: Sheet) -> list[Chart]:
    """Grouped bars per metric (each group's spread as error bars) and the normalised
    radar, from the comparison rows."""
    every = rows_of(sheet.rows, ComparisonRow)
    groups = [f.group for f in every[0].figures] if every else []
    charts = []
    radar_axes: list[str] = []
    radar: list[list[float]] = [[] for _ in groups]
    for n, metric in enumerate(METRICS):
        rows = [r for r in every if r.metric_key == metric.key]
        if not any(f.value is not None for r in rows for f in r.figures):
            continue
        categories = [f"{r.test} {r.direction}" for r in rows]
        unit, size = (
            latency_unit(f.max and f.max * 1e3 for r in rows for f in r.figures)
            if metric.latency
            else (metric.label, 1.0)
        )
        factor = 1e3 / size if metric.latency else 1.0

        def scaled(values: list[float | None], factor: float = factor) -> list[float | None]:
            return [v * factor if v is not None else None for v in values]

        series = [
            Series(
                name,
                categories,
                scaled([r.figures[i].value for r in rows]),
                low=scaled([r.figures[i].min for r in rows]),
                high=scaled([r.figures[i].max for r in rows]),
            )
            for i, name in enumerate(groups)
        ]
        label = f"{metric.label} ({unit})" if metric.latency else metric.label
        charts.append(
            bar_chart(f"compare-{n}", f"Comparison: {label}", series, y_title=label, unit=unit)
        )
        for row, category in zip(rows, categories, strict=True):
            values = [f.value for f in row.figures]
            present = [v for v in values if v is not None and v > 0]
            if len(present) != len(values):
                continue
            best = max(present) if metric.higher_is_better else min(present)
            radar_axes.append(f"{category} {metric.label}")
            for i, v in enumerate(present):
                radar[i].append(v / best if metric.higher_is_better else best / v)
    if radar_axes:
        charts.append(
            radar_chart(
                "compare-radar",
                "Summary: every metric normalised to the best group (1 = best)",
                radar_axes,
                [
                    Series(name, radar_axes, scores)
                    for name, scores in zip(groups, radar, strict=True)
                ],
            )
        )
    return charts


def comparison_section(runs: Sequence[RunRecord], by: Sequence[str] = ()) -> Section:
    """The comparison: its table first, then its charts."""
    sheet = comparison_sheet(runs, by)
    return Section("Comparison", charts=tuple(comparison_charts(sheet)), lead=(sheet,))
