"""The figures of a comparison of runs: runs grouped by label values, and each group's
value and spread per test, direction and metric, with its difference from the first
group's.

Metrics per (test, direction): IOPS, MB/s (bytes/s / 10^6), mean and p99 latency
(in µs = ns / 10^3), each from the stored results of the test's last round. Runs are
grouped by label values (``--by vendor,size_gib``; a group is named by its labels,
``vendor=alpha size_gib=50``). A group of several runs gives:

- IOPS and MB/s: the mean of its runs, their minimum and maximum, and the sample
  standard deviation;
- mean latency: the mean over all the group's I/Os (each run's mean weighted by its
  I/O count, IOPS x runtime), the runs' minimum and maximum;
- p99 latency: the p99 of all the group's I/Os, from the json+ bins of its runs merged
  bucket by bucket (percentiles are merged, never averaged; DESIGN.md), at most the
  largest I/O; where a run has no bins, the worst of the runs' p99 (``source_N``
  says which). The spread: the runs' own p99, minimum and maximum.

The first group is the baseline: difference % = (value - baseline) / baseline x 100.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.errors import UsageError
from volbench.fio.parser import parse
from volbench.model import RunRecord
from volbench.report.fleet_sheets import is_fleet
from volbench.report.rows import Row, optional_number
from volbench.report.run_sheets import ResultRow, result_records, shown_percentile


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
        row: dict[str, object] = {
            "test": self.test,
            "direction": self.direction,
            "metric": self.metric,
            "metric_key": self.metric_key,
        }
        for index, f in enumerate(self.figures):
            row.update(
                {
                    f"group_{index}": f.group,
                    f"value_{index}": f.value,
                    f"min_{index}": f.min,
                    f"max_{index}": f.max,
                    f"stdev_{index}": f.stdev,
                    f"runs_{index}": f.runs,
                    f"source_{index}": f.source,
                }
            )
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
        top = max(
            (float(r.result.lat_max_ns) for _, r in rows if r.result.lat_max_ns is not None),
            default=p99,
        )
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
