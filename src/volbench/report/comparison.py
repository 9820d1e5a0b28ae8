"""Comparison of runs: each group's value and spread, % differences per metric, grouped
bars per metric (the spread as error bars) and a radar of every metric normalised to
the best group.

Metrics per (test, direction): IOPS, MB/s (bytes/s / 10^6), mean and p99 latency
(in JSON µs = ns / 10^3; tables and charts in the unit that fits), each from the
stored results of the test's last round. Runs are grouped by label values (``--by
vendor,size_gib``; a group is named by its labels, ``vendor=alpha size_gib=50``).
A group of several runs shows:

- IOPS and MB/s: the mean of its runs, their minimum and maximum, and the sample
  standard deviation;
- mean latency: the mean over all the group's I/Os (each run's mean weighted by its
  I/O count, IOPS x runtime), the runs' minimum and maximum;
- p99 latency: the p99 of all the group's I/Os, from the json+ bins of its runs merged
  bucket by bucket (percentiles are merged, never averaged; DESIGN.md), at most the
  largest I/O; where a run has no bins, the worst of the runs' p99 (``source_N``
  says which). The spread: the runs' own p99, minimum and maximum.

The first group is the baseline: difference % = (value - baseline) / baseline x 100.
In the radar a rate scores value / best and a latency best / value, so 1 is always
the best group.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import RunRecord
from volbench.report.axis import latency_unit
from volbench.report.chart import Chart, Series, bar_chart, radar_chart
from volbench.report.document import Section
from volbench.report.fleet_sheets import is_fleet
from volbench.report.rows import Row, documents, number, optional_number, rows_of
from volbench.report.run_sheets import ResultRow, result_records, shown_percentile
from volbench.report.sheet import Column, Sheet, fmt_latency

SCHEMA = "volbench.compare/2"


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    scale: float
    higher_is_better: bool

    @property
    def latency(self) -> bool:
        return self.key.startswith("lat_")


METRICS = (
    Metric("iops", "IOPS", 1.0, True),
    Metric("bw_bytes_per_s", "MB/s", 1e6, True),
    Metric("lat_mean_ns", "mean latency", 1e3, False),
    Metric("lat_p99_ns", "p99 latency", 1e3, False),
)


@dataclass(frozen=True)
class Group:
    name: str
    runs: tuple[RunRecord, ...]


def group_runs(runs: Sequence[RunRecord], by: Sequence[str]) -> list[Group]:
    """Runs grouped by the values of the labels ``by`` (each run alone without ``by``),
    in the order of first appearance; a group is named by its labels (``vendor=alpha``)."""
    groups: dict[str, list[RunRecord]] = {}
    for run in runs:
        if by:
            missing = [k for k in by if k not in run.labels]
            if missing:
                raise UsageError(
                    f"run {run.id} has no label {missing[0]!r}: add it with "
                    f"'volbench label {run.id} {missing[0]}=VALUE' or compare without --by"
                )
            name = " ".join(f"{k}={run.labels[k]}" for k in by)
        else:
            name = f"run {run.id}"
        groups.setdefault(name, []).append(run)
    return [Group(name, tuple(members)) for name, members in groups.items()]


Key = tuple[str, str]
"""(test, direction)"""


def _latest(run: RunRecord) -> dict[Key, ResultRow]:
    """(test, direction) -> the result row of the test's last round."""
    latest: dict[Key, ResultRow] = {}
    for row in result_records(run):
        result = row.result
        if result.hostname is not None:  # a place's share: the aggregate stands for it
            continue
        key = (result.test, result.direction)
        if key not in latest or result.round >= latest[key].result.round:
            latest[key] = row
    return latest


class _Bins:
    """json+ latency bins of a run's tests, each round's raw output parsed once."""

    def __init__(self) -> None:
        self._parsed: dict[tuple[int, int], dict[Key, dict[int, int]]] = {}

    def of(self, run: RunRecord, round_no: int, key: Key) -> dict[int, int] | None:
        if (run.id, round_no) not in self._parsed:
            self._parsed[run.id, round_no] = self._read(run, round_no)
        return self._parsed[run.id, round_no].get(key)

    @staticmethod
    def _read(run: RunRecord, round_no: int) -> dict[Key, dict[int, int]]:
        if round_no >= len(run.raw_outputs):
            return {}
        try:
            output = parse(run.raw_outputs[round_no])
            tests = place_tests(output)[0] if is_fleet(run) else group_tests(output)
        except Exception:  # an unreadable output: no bins, the worst p99 stands in
            return {}
        return {
            (test.name, direction): merge_bins(result.latency.bins)
            for test in tests
            for direction, result in test.directions.items()
            if result.latency is not None and result.latency.bins
        }


@dataclass(frozen=True)
class GroupFigure:
    """One group's figure of one metric (in the metric's JSON unit: IOPS, MB/s, µs):
    its value, its runs' minimum, maximum and sample standard deviation, how many runs
    gave it, what the value is (``source``: the run's own, mean of runs, all I/Os,
    json+ bins, worst run) and its difference from the first group's (%)."""

    group: str
    value: float | None = None
    min: float | None = None
    max: float | None = None
    stdev: float | None = None
    runs: int = 0
    source: str | None = None
    diff_pct: float | None = None


@dataclass(frozen=True, eq=False)
class ComparisonRow(Row):
    """One test, direction and metric, with each group's figure: its keys are the
    test's, then ``group_N``, ``value_N``, ``min_N``, ``max_N``, ``stdev_N``,
    ``runs_N``, ``source_N`` of group N, and ``diff_pct_N`` beside each group after
    the first."""

    test: str
    direction: str
    metric: str
    metric_key: str
    figures: tuple[GroupFigure, ...]

    def keys_of(self) -> tuple[str, ...]:
        return tuple(self.document())

    def __getitem__(self, key: str) -> object:
        return self.document()[key]

    def document(self) -> dict[str, object]:
        row: dict[str, object] = {"test": self.test, "direction": self.direction,
                                  "metric": self.metric, "metric_key": self.metric_key}  # fmt: skip
        for index, f in enumerate(self.figures):
            row.update({f"group_{index}": f.group, f"value_{index}": f.value,
                        f"min_{index}": f.min, f"max_{index}": f.max,
                        f"stdev_{index}": f.stdev, f"runs_{index}": f.runs,
                        f"source_{index}": f.source})  # fmt: skip
            if index:
                row[f"diff_pct_{index}"] = f.diff_pct
        return row


def _ios(row: ResultRow) -> float:
    return row.result.iops * float(row.result.runtime_ms or 0) / 1000


def _figure(
    metric: Metric, key: Key, rows: Sequence[tuple[RunRecord, ResultRow]], bins: _Bins, group: str
) -> GroupFigure:
    """One group's figure of one metric: value, min, max, stdev, runs, and what the
    value is (``source``: the run's own, mean of runs, all I/Os, json+ bins, worst
    run)."""

    def own(row: ResultRow) -> float | None:
        value = (
            shown_percentile(row, metric.key)
            if metric.key == "lat_p99_ns"
            else optional_number(row[metric.key])
        )
        return value / metric.scale if value is not None else None

    values = [v for _, row in rows if (v := own(row)) is not None]
    if not values:
        return GroupFigure(group, runs=0)
    spread = GroupFigure(
        group,
        min=min(values),
        max=max(values),
        stdev=statistics.stdev(values) if len(values) > 1 else None,
        runs=len(values),
    )
    if len(rows) == 1 or not metric.latency:
        source = "mean of runs" if len(rows) > 1 else "the run's own"
        return replace(spread, value=statistics.fmean(values), source=source)
    if metric.key == "lat_mean_ns":
        timed = [(row, own(row)) for _, row in rows if own(row) is not None]
        weight = sum(_ios(row) for row, _ in timed)
        value = (
            sum(_ios(row) * (v or 0.0) for row, v in timed) / weight
            if weight
            else statistics.fmean(values)
        )
        return replace(spread, value=value, source="all I/Os")
    found = [bins.of(run, row.result.round, key) for run, row in rows]
    if all(found):
        merged = merge_bins(*(b for b in found if b))
        p99 = percentiles_from_bins(merged, (99.0,))[99.0]
        top = max((float(r.result.lat_max_ns) for _, r in rows if r.result.lat_max_ns is not None),
                  default=p99)  # fmt: skip
        return replace(spread, value=min(p99, top) / metric.scale, source="json+ bins")
    return replace(spread, value=max(values), source="worst run")


def comparison_rows(groups: Sequence[Group]) -> list[ComparisonRow]:
    """One row per test, direction and metric: each group's value, spread and % vs the
    first group."""
    bins = _Bins()
    latest = [[(run, _latest(run)) for run in g.runs] for g in groups]
    order: list[Key] = []
    for members in latest:
        for _, rows in members:
            order += [k for k in rows if k not in order]
    out = []
    for key in order:
        for metric in METRICS:
            figures: list[GroupFigure] = []
            for group, members in zip(groups, latest, strict=True):
                present = [(run, rows[key]) for run, rows in members if key in rows]
                figure = _figure(metric, key, present, bins, group.name)
                base, value = (figures[0].value if figures else None), figure.value
                if figures:
                    diff = (value - base) / base * 100 if value is not None and base else None
                    figure = replace(figure, diff_pct=diff)
                figures.append(figure)
            out.append(ComparisonRow(key[0], key[1], metric.label, metric.key, tuple(figures)))
    return out


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
