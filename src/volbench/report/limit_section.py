"""The report's section on what limited each test of a run: a summary of the verdicts,
their sheet, the bursts of its tests (report/burst_sheets.py), and the host and device
samples per second beside fio's IOPS.

The samples are those stored with each round (analysis/host_series.py); times are
seconds since the run's first sample, so tests follow one another on one axis.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from volbench.analysis.host_series import RoundHost, round_hosts
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord
from volbench.report.burst_sheets import burst_sheet, run_bursts
from volbench.report.chart import Chart, Series, line_chart
from volbench.report.document import Section
from volbench.report.limit_sheets import limits_sheet


def _mean(values: tuple[float, ...]) -> float | None:
    return statistics.fmean(values) if values else None


def host_charts(run: RunRecord) -> list[Chart]:
    """CPUs busy and device busy (%), fio's CPU and the device's in-flight requests,
    per second over the whole run (empty when nothing was sampled)."""
    hosts: dict[int, RoundHost] = round_hosts(run.series)
    readings = [r for _, host in sorted(hosts.items()) for r in host.readings]
    if not readings:
        return []
    origin = readings[0].time_s
    x = [round(r.time_s - origin, 3) for r in readings]
    shares = [
        Series("CPUs busy (mean %)", x, [_mean(r.cpu_busy_pct) for r in readings]),
        Series("device busy (%)", x, [r.device_busy_pct for r in readings]),
    ]
    load = [
        Series("fio's processes (cores)", x, [r.fio_cpu_cores for r in readings]),
        Series("fio's threads waiting for a CPU", x, [r.fio_wait_threads for r in readings]),
        Series("device in-flight requests", x, [r.in_flight for r in readings]),
        Series(
            "device IOPS / 1000", x, [None if r.iops is None else r.iops / 1000 for r in readings]
        ),
    ]
    prefix = f"run{run.id}-host"
    charts = []
    for key, title, lines, y_title in (
        ("busy", "Host and device busy, per second", shares, "%"),
        ("load", "fio's CPU, waits and the device's queue, per second", load, "count"),
    ):
        kept = [s for s in lines if any(v is not None for v in s.y)]
        if kept:
            charts.append(
                line_chart(
                    f"{prefix}-{key}",
                    title,
                    kept,
                    x_title="Time since the run's first sample (s)",
                    y_title=y_title,
                    markers=None,
                )
            )
    return charts


def limit_section(run: RunRecord, caps: Sequence[KnownCap] = ()) -> Section | None:
    """The section of ``run``'s verdicts (None when it has no tests)."""
    sheet = limits_sheet(run, caps)
    if sheet is None:
        return None
    counts = Counter(str(row["limit"]) for row in sheet.rows)
    summary = ", ".join(f"{limit}: {n} test{'s' * (n != 1)}" for limit, n in counts.most_common())
    found = run_bursts(run)
    bursts = burst_sheet(run, found)
    said = "; ".join(f"{b.test}: {b.burst.sentence()}" for b in found)
    return Section(
        title=f"Run {run.id}: what limited each test",
        header=(("Limits", summary), *((("Bursts", said),) if said else ())),
        charts=tuple(host_charts(run)),
        sheets=(sheet,) if bursts is None else (sheet, bursts),
    )
