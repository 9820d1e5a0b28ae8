"""Charts and the report section of any fio run (the generic section).

IOPS and MB/s bars per test (each labelled), the latency percentiles of every test
(p50..p99.99 as a ladder, capped at the test's maximum), the latency histogram from
fio's json+ bins (the share of each test's I/Os per bucket) and the per-second IOPS /
MB/s / latency series from fio's logs (stored with each round). Every plotted value
is a stored result (or a json+ bin count / log value) divided by a unit constant:
MB/s = bytes/s / 10^6; latency in the unit that fits the chart (µs, ms, s = ns /
10^3, 10^6, 10^9).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

from volbench.analysis.aggregate import group_tests, place_tests
from volbench.analysis.percentiles import merge_bins
from volbench.analysis.stored_bursts import stored_bursts
from volbench.analysis.timeseries import (
    common_origin_ms,
    round_logs,
    shifted,
    summed,
    weighted_latency,
)
from volbench.analysis.validity import Validity
from volbench.model import LogSeries, RunRecord, Stall
from volbench.report.axis import latency_unit, spans_decades
from volbench.report.chart import Chart, Series, bar_chart, line_chart
from volbench.report.chart_spans import burst_spans, mark_spans, stall_spans, with_spans
from volbench.report.document import Section
from volbench.report.fleet_charts import place_charts
from volbench.report.fleet_sheets import aggregate_run, fleet_sheet, is_fleet
from volbench.report.histogram_output import histogram_output
from volbench.report.ladder import ladder_chart
from volbench.report.plan_view import PlanView
from volbench.report.run_sheets import ResultRow, report_for, result_records, shown_percentile
from volbench.report.sheet import Sheet
from volbench.report.summary import Summary, summarise
from volbench.report.validity_sheets import Verdicts, given, validity_sheet, with_marks
from volbench.units import format_bytes

MB = 1_000_000
PERCENTILES: tuple[tuple[str, str], ...] = (
    ("p50", "lat_p50_ns"),
    ("p90", "lat_p90_ns"),
    ("p99", "lat_p99_ns"),
    ("p99.9", "lat_p999_ns"),
    ("p99.99", "lat_p9999_ns"),
)
MAX_LINES = 24
"""Beyond this many tests, per-test line charts keep the first 24 (the table has all)."""


def run_header(run: RunRecord) -> tuple[tuple[str, str], ...]:
    """The fields every run's section starts with."""
    target, host = run.target, run.host
    fields = [
        ("Run", f"{run.id} · {run.plan} · {run.status.value}"),
        ("Started / ended", f"{run.started_at} / {run.ended_at or '-'}"),
        (
            "Target",
            f"{target.path} ({format_bytes(target.capacity_bytes)}, "
            f"{target.kind}, model {target.model or '-'})",
        ),
        (
            "Host",
            f"{host.hostname} · {host.kernel} · {host.cpu_model} ({host.cpu_count} CPUs)",
        ),
        ("fio", f"{host.fio_version} · ioengine {run.settings.ioengine or '-'}"),
    ]
    if run.labels:
        fields.append(("Labels", " ".join(f"{k}={v}" for k, v in sorted(run.labels.items()))))
    if run.non_compliant:
        fields.append(("Compliance", "NON-COMPLIANT (shortened or reduced plan)"))
    if run.error:
        fields.append(("Note", run.error))
    return tuple(fields)


def _category(row: ResultRow, duplicated: set[str]) -> str:
    test = row.result.test
    return f"{test} (round {row.result.round})" if test in duplicated else test


def _duplicated(rows: Sequence[ResultRow]) -> set[str]:
    rounds: dict[str, set[int]] = {}
    for row in rows:
        rounds.setdefault(row.result.test, set()).add(row.result.round)
    return {t for t, r in rounds.items() if len(r) > 1}


def rate_charts(prefix: str, rows: Sequence[ResultRow]) -> list[Chart]:
    """IOPS and MB/s bars per test, one series per direction."""
    duplicated = _duplicated(rows)
    directions = sorted({r.result.direction for r in rows})

    def series(figure: Callable[[ResultRow], float], scale: float) -> list[Series]:
        out = []
        for direction in directions:
            chosen = [r for r in rows if r.result.direction == direction]
            out.append(
                Series(
                    direction,
                    [_category(r, duplicated) for r in chosen],
                    [float(figure(r)) / scale for r in chosen],
                )
            )
        return out

    return [
        bar_chart(
            f"{prefix}-iops",
            "IOPS per test",
            series(lambda r: r.result.iops, 1),
            y_title="IOPS",
            unit="IOPS",
        ),
        bar_chart(
            f"{prefix}-mbps",
            "MB/s per test",
            series(lambda r: r.result.bw_bytes_per_s, MB),
            y_title="MB/s",
            unit="MB/s",
        ),
    ]


def percentile_chart(prefix: str, rows: Sequence[ResultRow]) -> Chart | None:
    """Latency percentiles p50..p99.99 of every test and direction as a ladder (a
    column of markers per test, log axis), each capped at the test's maximum."""
    duplicated = _duplicated(rows)
    timed = [r for r in rows if r.result.lat_p50_ns is not None]
    if not timed:
        return None
    unit, size = latency_unit(shown_percentile(r, key) for r in timed for _, key in PERCENTILES)
    categories = [f"{_category(r, duplicated)} {r.result.direction}" for r in timed]
    levels = [
        (label, [_scaled(shown_percentile(r, key), size) for r in timed])
        for label, key in PERCENTILES
    ]
    return ladder_chart(
        f"{prefix}-percentiles",
        "Latency percentiles",
        categories,
        levels,
        y_title="Latency",
        unit=unit,
    )


def _scaled(value: float | None, size: float) -> float | None:
    return value / size if value is not None else None


BUCKETS_PER_DECADE = 10
"""The latency histogram's buckets: ten per decade (each about 26% wider than the one
before), so fio's 64 bins per power of two read as one curve."""


def share_histogram(bins: dict[int, int]) -> list[tuple[float, float]]:
    """json+ bins (latency in ns -> I/Os) as a stepped curve of the share of I/Os (%)
    per bucket of :data:`BUCKETS_PER_DECADE`: ``(bucket's lower edge in ns, %)``, empty
    buckets between as 0, closed by the last bucket's upper edge at 0."""
    total = sum(bins.values())
    if not total:
        return []
    counts: dict[int, int] = {}
    for value, count in bins.items():
        bucket = math.floor(math.log10(max(value, 1)) * BUCKETS_PER_DECADE + 1e-9)
        counts[bucket] = counts.get(bucket, 0) + count

    def edge(bucket: int) -> float:
        return float(10 ** (bucket / BUCKETS_PER_DECADE))

    first, last = min(counts), max(counts)
    points = [(edge(first), 0.0)]
    points += [(edge(b), 100 * counts.get(b, 0) / total) for b in range(first, last + 1)]
    return [*points, (edge(last + 1), points[-1][1]), (edge(last + 1), 0.0)]


def histogram_chart(prefix: str, run: RunRecord) -> Chart | None:
    """Latency histograms of every test (all its jobs' json+ bins merged), as the share
    of its I/Os in each bucket: a QD 1 test that did few I/Os reads as clearly as a
    deep-queue one."""
    curves: list[tuple[str, list[tuple[float, float]]]] = []
    for round_no, raw in enumerate(run.raw_outputs):
        if '"bins"' not in raw:  # not json+: no histogram, and nothing to parse
            continue
        try:
            output = histogram_output(raw, MAX_LINES)
            tests = place_tests(output)[0] if is_fleet(run) else group_tests(output)
        except Exception:  # an unreadable raw output has no histogram to show
            continue
        for test in tests:
            for direction, result in test.directions.items():
                if not result.active or result.latency is None or not result.latency.bins:
                    continue
                name = f"{test.name} {direction}" + (
                    f" (round {round_no})" if len(run.raw_outputs) > 1 else ""
                )
                curves.append((name, share_histogram(merge_bins(result.latency.bins))))
    curves = [c for c in curves if c[1]][:MAX_LINES]
    if not curves:
        return None
    unit, size = latency_unit(x for _, points in curves for x, _ in points)
    series = [Series(name, [x / size for x, _ in pts], [y for _, y in pts]) for name, pts in curves]
    return line_chart(
        f"{prefix}-histogram",
        "Latency histogram: share of each test's I/Os (fio json+ bins)",
        series,
        x_title="Latency",
        y_title="% of the test's I/Os",
        log_x=True,
        x_unit=unit,
        markers=False,
        step=True,
        unit="%",
    )


def timeseries_charts(
    prefix: str,
    series: Sequence[LogSeries],
    stalls: Sequence[Stall] = (),
    found: Mapping[tuple[int, str], Validity] | None = None,
) -> list[Chart]:
    """Per-second IOPS, MB/s and mean latency of every test, from fio's logs stored
    with each round (round by round); on fio's own clock, each stall marked as a
    shaded span where it began in its test, and each burst (analysis/stored_bursts.py)
    as the span it lasted on the IOPS or MB/s chart. ``found``: each test's validity:
    the part of a test a mark tells apart shaded on the IOPS chart (a mark with no part
    of its own marks its test in the section's tables)."""
    found = found or {}
    own_clock = True
    iops: list[Series] = []
    mbps: list[Series] = []
    latency: list[Series] = []
    for _, logs in sorted(round_logs(series).items()):
        origin = common_origin_ms(points for jobs in logs.values() for points in jobs)
        own_clock = own_clock and origin == 0
        logs = {key: shifted(jobs, origin) for key, jobs in logs.items()}
        for name in sorted({n for n, _ in logs}):
            iops_jobs = logs.get((name, "iops"), [])
            for direction, points in summed(iops_jobs).items():
                iops.append(Series(f"{name} {direction}", *_xy(points, 1)))
            for direction, points in summed(logs.get((name, "bw"), [])).items():
                # fio logs bandwidth in KiB/s
                mbps.append(Series(f"{name} {direction}", *_xy(points, MB / 1024)))
            lat_jobs = logs.get((name, "lat"), [])
            for direction, points in weighted_latency(lat_jobs, iops_jobs).items():
                latency.append(Series(f"{name} {direction}", *_xy(points, 1)))
    unit, size = latency_unit(y for s in latency for y in s.y)
    latency = [Series(s.name, s.x, [_scaled(y, size) for y in s.y]) for s in latency]
    charts = []
    for key, title, lines, y_title, y_unit in (
        ("ts-iops", "IOPS per second", iops, "IOPS", "IOPS"),
        ("ts-mbps", "MB/s per second", mbps, "MB/s", "MB/s"),
        ("ts-lat", "Mean latency per second", latency, f"Latency ({unit})", unit),
    ):
        if lines:
            # latency spanning decades (QD 1 beside QD 64 tests) on a log axis
            log = y_unit == unit and spans_decades([y for s in lines for y in s.y])
            chart = line_chart(
                f"{prefix}-{key}",
                title,
                lines[:MAX_LINES],
                x_title="Time since the test started (s)",
                y_title="Latency" if log else y_title,
                log_y=log,
                markers=None,
                unit=y_unit,
            )
            if own_clock:
                chart = with_spans(chart, stall_spans(stalls))
                if key in BURST_KINDS:
                    chart = with_spans(chart, burst_spans(stored_bursts(series, BURST_KINDS[key])))
                if key == "ts-iops":
                    chart = with_spans(chart, mark_spans(found))
            charts.append(chart)
    return charts


BURST_KINDS = {"ts-iops": "iops", "ts-mbps": "bw"}
"""The per-second charts a burst is marked on, and the log it is found in."""


def _xy(points: Sequence[tuple[float, float]], scale: float) -> tuple[list[float], list[float]]:
    return [t for t, _ in points], [v / scale for _, v in points]


def fio_run_charts(run: RunRecord, verdicts: Verdicts | None = None) -> list[Chart]:
    """Every generic chart whose data exists for ``run`` (of a run on several places
    at once: the aggregate's, then each place's share); ``verdicts``: the command's, whose
    marks shade the per-second chart."""
    prefix = f"run{run.id}"
    rows = result_records(aggregate_run(run))
    charts = rate_charts(prefix, rows) if rows else []
    charts += [c for c in (percentile_chart(prefix, rows), histogram_chart(prefix, run)) if c]
    if len(run.settings.places) > 1:  # one place's charts are the run's own
        charts += place_charts(prefix, fleet_sheet(run))
    found = given(verdicts).of(run) if run.raw_outputs else {}
    return charts + timeseries_charts(prefix, run.series, run.stalls, found)


class SummaryParts(TypedDict):
    """The fields of a run's first :class:`Section` its summary fills."""

    lead: tuple[Sheet, ...]
    verdicts: tuple[str, ...]
    notes: tuple[str, ...]
    summary: bool


def summary_parts(summary: Summary) -> SummaryParts:
    """What a run's first section says first: the headline table (with the promised
    figures), the verdict lines (promise, then what limited the tests), the notes
    (knee, throttle, stalls, non-compliance)."""
    return {
        "lead": (summary.table,),
        "verdicts": tuple(v for v in (summary.verdict, *summary.limits) if v),
        "notes": summary.notes,
        "summary": True,
    }


def run_sections(
    run: RunRecord,
    view: PlanView,
    summary: Summary | None = None,
    verdicts: Verdicts | None = None,
) -> list[Section]:
    """The sections of one run: its summary first, then its plan's own sections
    (``view.sections``), else the generic fio-run section (its plan's own charts first);
    the check against the promise in full with the tables. ``verdicts``: the report's
    (:class:`Verdicts`)."""
    verdicts = given(verdicts)
    summary = summary or summarise(run, view, verdicts=verdicts)
    promise = (summary.promise,) if summary.promise else ()
    if view.sections is not None:
        first = Section(
            f"Run {run.id}: {run.plan}",
            header=run_header(run),
            sheets=promise,
            **summary_parts(summary),
        )
        return [first, *view.sections(run)]
    sheets, _ = report_for(run, view)
    charts = view.charts(sheets[0]) if view.charts and sheets else []
    if run.raw_outputs:  # each figure's mark, and the marked tests with what to do
        sheets = [with_marks(sheet, verdicts.of(run)) for sheet in sheets]
        marks = validity_sheet(run, verdicts)
        sheets += [marks] if marks is not None else []
    return [
        Section(
            title=f"Run {run.id}: {run.plan}",
            header=run_header(run),
            charts=tuple(charts + fio_run_charts(run, verdicts)),
            sheets=(*sheets, *promise),
            **summary_parts(summary),
        )
    ]
