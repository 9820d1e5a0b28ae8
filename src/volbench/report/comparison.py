"""Comparison of runs: absolute values and % differences per metric, grouped
bars per metric and a radar of every metric normalised to the best run.

Metrics per (test, direction): IOPS, MB/s (bytes/s / 10^6), mean and p99
latency (µs = ns / 10^3), each from the stored results of the test's last
round. Runs are grouped by label values (``--by vendor,size_gib``); a group of
several runs shows their plain average. The first group is the baseline:
difference % = (value - baseline) / baseline x 100. In the radar a rate scores
value / best and a latency best / value, so 1 is always the best run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.errors import UsageError
from volbench.model import RunRecord
from volbench.report.chart import Chart, Series, bar_chart, radar_chart
from volbench.report.document import Section
from volbench.report.run_sheets import result_rows
from volbench.report.sheet import Column, Sheet

SCHEMA = "volbench.compare/1"


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    scale: float
    higher_is_better: bool


METRICS = (
    Metric("iops", "IOPS", 1.0, True),
    Metric("bw_bytes_per_s", "MB/s", 1e6, True),
    Metric("lat_mean_ns", "mean latency (µs)", 1e3, False),
    Metric("lat_p99_ns", "p99 latency (µs)", 1e3, False),
)


@dataclass(frozen=True)
class Group:
    name: str
    runs: tuple[RunRecord, ...]


def group_runs(runs: Sequence[RunRecord], by: Sequence[str]) -> list[Group]:
    """Runs grouped by the values of the labels ``by`` (each run alone without ``by``),
    in the order of first appearance."""
    groups: dict[str, list[RunRecord]] = {}
    for run in runs:
        if by:
            missing = [k for k in by if k not in run.labels]
            if missing:
                raise UsageError(
                    f"run {run.id} has no label {missing[0]!r}: add it with "
                    f"'volbench label {run.id} {missing[0]}=VALUE' or compare without --by"
                )
            name = " ".join(run.labels[k] for k in by)
        else:
            name = f"run {run.id}"
        groups.setdefault(name, []).append(run)
    return [Group(name, tuple(members)) for name, members in groups.items()]


def _values(run: RunRecord) -> dict[tuple[str, str], dict[str, float | None]]:
    """(test, direction) -> metric values from the test's last round."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in result_rows(run):
        key = (row["test"], row["direction"])
        if key not in latest or row["round"] >= latest[key]["round"]:
            latest[key] = row
    return {
        key: {
            m.key: (float(row[m.key]) / m.scale if row.get(m.key) is not None else None)
            for m in METRICS
        }
        for key, row in latest.items()
    }


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def comparison_rows(groups: Sequence[Group]) -> list[dict[str, Any]]:
    """One row per test, direction and metric: each group's value and % vs the first."""
    per_group = []
    for group in groups:
        runs = [_values(r) for r in group.runs]
        keys = list(dict.fromkeys(k for values in runs for k in values))
        per_group.append(
            {
                k: {m.key: _mean([v[k][m.key] for v in runs if k in v]) for m in METRICS}
                for k in keys
            }
        )
    order: list[tuple[str, str]] = []
    for values in per_group:
        order += [k for k in values if k not in order]
    rows = []
    for test, direction in order:
        for metric in METRICS:
            row: dict[str, Any] = {
                "test": test,
                "direction": direction,
                "metric": metric.label,
                "metric_key": metric.key,
            }
            base = per_group[0].get((test, direction), {}).get(metric.key)
            for index, (group, values) in enumerate(zip(groups, per_group, strict=True)):
                value = values.get((test, direction), {}).get(metric.key)
                row[f"value_{index}"] = value
                if index > 0:
                    row[f"diff_pct_{index}"] = (
                        (value - base) / base * 100 if value is not None and base else None
                    )
                row[f"group_{index}"] = group.name
            rows.append(row)
    return rows


def _fmt_value(value: Any) -> str:
    number = float(value)
    return f"{number:,.0f}" if abs(number) >= 100 else f"{number:,.2f}"


def _fmt_pct(value: Any) -> str:
    return f"{float(value):+.1f}%"


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
    columns = [Column("test", "Test"), Column("direction", "Dir"), Column("metric", "Metric")]
    for index, group in enumerate(groups):
        label = group.name + (f" ({len(group.runs)} runs)" if len(group.runs) > 1 else "")
        columns.append(Column(f"value_{index}", label, _fmt_value, numeric=True))
    for index, group in enumerate(groups[1:], start=1):
        columns.append(
            Column(f"diff_pct_{index}", f"{group.name} vs {groups[0].name}", _fmt_pct, numeric=True)
        )
    notes = [f"{g.name}: run(s) {', '.join(str(r.id) for r in g.runs)}" for g in groups] + [
        "difference % = (value - baseline) / baseline; latency: lower is better"
    ]
    document = {
        "schema": SCHEMA,
        "by": list(by),
        "groups": [{"name": g.name, "runs": [r.id for r in g.runs]} for g in groups],
        "rows": rows,
    }
    return Sheet("Comparison", tuple(columns), tuple(rows), document, tuple(notes))


def comparison_charts(sheet: Sheet) -> list[Chart]:
    """Grouped bars per metric and the normalised radar, from the comparison rows."""
    groups = [g["name"] for g in sheet.document["groups"]]
    charts = []
    radar_axes: list[str] = []
    radar: list[list[float]] = [[] for _ in groups]
    for n, metric in enumerate(METRICS):
        rows = [r for r in sheet.rows if r["metric_key"] == metric.key]
        if not any(r.get(f"value_{i}") is not None for r in rows for i in range(len(groups))):
            continue
        categories = [f"{r['test']} {r['direction']}" for r in rows]
        series = [
            Series(name, categories, [r.get(f"value_{i}") for r in rows])
            for i, name in enumerate(groups)
        ]
        charts.append(
            bar_chart(
                f"compare-{n}",
                f"Comparison: {metric.label}",
                series,
                y_title=metric.label,
                unit=metric.label,
            )
        )
        for row, category in zip(rows, categories, strict=True):
            values = [row.get(f"value_{i}") for i in range(len(groups))]
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
                "Summary: every metric normalised to the best run (1 = best)",
                radar_axes,
                [
                    Series(name, radar_axes, scores)
                    for name, scores in zip(groups, radar, strict=True)
                ],
            )
        )
    return charts


def comparison_section(runs: Sequence[RunRecord], by: Sequence[str] = ()) -> Section:
    sheet = comparison_sheet(runs, by)
    return Section("Comparison", charts=tuple(comparison_charts(sheet)), sheets=(sheet,))
