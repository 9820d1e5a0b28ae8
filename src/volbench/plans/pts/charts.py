"""PTS report pages: one report section per test, laid out like the spec's pages.

Each section has the PTS header (platform, device, purge, preconditioning,
active range, TC/QD, data pattern, write cache, rounds, steady-state window),
the test's charts and its tables. Charts are drawn from the tables' own rows
(``report.py``), so a chart shows exactly the values of its table, and from the
stored rounds for the convergence plots. Units: IOPS as stored, MB/s = bytes/s /
10^6, µs = ns / 10^3, GB = bytes / 10^9 (as in the tables).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from volbench.analysis.steady_state import Window
from volbench.model import RunRecord
from volbench.plans.pts import catalog, state
from volbench.plans.pts.options import THROUGHPUT_TESTS
from volbench.plans.pts.report import (
    _BUILDERS,
    FIGURE_UNITS,
    _figure,
    _Run,
    steady_state_sheet,
    throughput_title,
    variable_label,
)
from volbench.report.chart import Chart, Series, bar_chart, bars3d_chart, line_chart, window_chart
from volbench.report.document import Section
from volbench.report.run_charts import run_header
from volbench.report.sheet import Sheet

MB = 1_000_000
US = 1_000
TITLES = {
    "iops": "IOPS",
    "throughput": "Throughput",
    **{test: throughput_title(test) for test in THROUGHPUT_TESTS},
    "latency": "Latency",
    "wsat": "WSAT: write saturation",
    "hir": "HIR: host idle recovery",
    "xsr": "XSR: cross-stimulus recovery",
    "ecw": "ECW: enterprise composite workload",
    "dirth": "DIRTH: demand intensity / response-time histogram",
}
FIGURES = {"iops": ("IOPS", 1.0), "bw": ("MB/s", MB), "lat": ("µs", US)}
"""Tracking-variable figure -> (unit shown, divisor of the stored value)."""


def _us(value: Any) -> float | None:
    return float(value) / US if value is not None else None


def header(data: _Run, test: str) -> tuple[tuple[str, str], ...]:
    """The PTS test header of one test's page."""
    run, s, options = data.run, data.run.settings, data.options
    ss = data.history(test, "ss")
    verdict = data.verdict(test)
    fields = [
        *run_header(run),
        ("Purge", str(s.get("purge_method"))),
        ("Preconditioning", catalog.preconditioning_for(test)),
        ("Active range", f"{options.active_range_pct}% ({data.active >> 20} MiB)"),
        ("TC x QD", "1 x 1" if test == "latency" else f"{options.threads} x {options.iodepth}"),
        ("Data pattern", str(s.get("data_pattern"))),
        ("Write cache", str(s.get("write_cache"))),
        ("Cell length", f"{options.cell_seconds:g} s"),
    ]
    reasons = s.get("non_compliant_reasons") or []
    if reasons:
        fields.append(("Non-compliant", "; ".join(reasons)))
    if test == "wsat":
        samples = len(data.history(test, "run"))
        fields.append(("Samples", f"{samples} (at most {options.wsat_max_rounds})"))
    if test not in ("wsat", "xsr"):
        fields.append(("Rounds", f"{len(ss)} (at most {options.max_rounds})"))
        if verdict.steady:
            rounds = verdict.window_rounds
            window = f"reached, rounds {rounds[0] + 1}-{rounds[-1] + 1}"
        else:
            window = f"NOT achieved after {len(ss)} rounds (figures: last window)"
        fields.append(("Steady state", window))
        for name, w in verdict.windows.items():
            fields.append((f"Window {variable_label(name)}", _window_text(name, w)))
    return tuple(fields)


def _window_text(name: str, w: Window) -> str:
    avg = w.average or 1e-12
    unit, divisor = FIGURE_UNITS.get(name.rsplit(" ", 1)[-1], ("", 1.0))
    average = f"{_figure(w.average / divisor)} {unit}".rstrip()
    return (
        f"rounds {w.rounds[0] + 1}-{w.rounds[-1] + 1}: average {average}, "
        f"excursion {w.data_excursion / avg:.1%} (<= 20%), slope x 4 "
        f"{w.slope_excursion / avg:.1%} (<= 10%)"
    )


def convergence_chart(data: _Run, test: str, cid: str) -> Chart | None:
    """Steady-state convergence: each tracked cell's figure over every round (for
    IOPS every block size at the tracked write mix, as the spec plots it)."""
    ss = data.history(test, "ss")
    if not ss:
        return None
    cells = tuple(ss[0].cells)
    tracked = state.tracking(test, ss)
    figure = next(iter(tracked)).rsplit(" ", 1)[1] if tracked else "iops"
    if test == "iops":
        mix = "0-100" if 0 in data.options.mixes else f"{data.options.mixes[0]}-"
        names = [c for c in cells if c.startswith(mix)]
    elif test == "latency":
        names = list(cells)
    else:
        names = [name.rsplit(" ", 1)[0] for name in tracked]
    unit, divisor = FIGURES[figure]
    attr = {"iops": "iops", "bw": "bw_bytes_per_s", "lat": "lat_mean_ns"}[figure]
    series = []
    for name in names:
        values = [getattr(r.cells[name], attr) if name in r.cells else None for r in ss]
        series.append(
            Series(
                name,
                [r + 1 for r in range(len(ss))],
                [float(v) / divisor if v is not None else None for v in values],
            )
        )
    chart = line_chart(cid, f"{TITLES[test]}: steady-state convergence", series,
                       x_title="Round", y_title=unit, unit=unit)  # fmt: skip
    chart.figure["layout"]["xaxis"]["dtick"] = 1  # rounds are whole numbers
    return chart


def window_charts(data: _Run, test: str, prefix: str) -> list[Chart]:
    """The measurement-window plot of each tracking variable (rounds 1-based)."""
    charts = []
    for n, (name, w) in enumerate(data.verdict(test).windows.items()):
        unit, divisor = FIGURES[name.rsplit(" ", 1)[1]]
        charts.append(
            window_chart(
                f"{prefix}-window{n}",
                f"{TITLES[test]}: measurement window, {variable_label(name)}",
                [r + 1 for r in w.rounds],
                [v / divisor for v in w.values],
                average=w.average / divisor,
                slope=w.slope / divisor,
                intercept=(w.intercept - w.slope) / divisor,  # the fit at round index r+1-1
                y_title=unit,
            )
        )
    return charts


def iops_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """IOPS vs block size (a line per R/W mix, log axes) and the 3D bars bs x mix."""
    rows = sheets[0].rows
    mixes = data.options.mixes
    lines = [
        Series(f"R/W {m}/{100 - m}", [r["bs_bytes"] / 1024 for r in rows],
               [r[f"iops_{m}"] for r in rows])
        for m in mixes
    ]  # fmt: skip
    return [
        line_chart(f"{prefix}-2d", "IOPS vs block size", lines, x_title="Block size (KiB)",
                   y_title="IOPS", log_x=True, log_y=True, unit="IOPS"),
        bars3d_chart(f"{prefix}-3d", "IOPS by block size and R/W mix",
                     [catalog.block_size_label(r["bs_bytes"]) for r in rows],
                     [f"{m}/{100 - m}" for m in mixes],
                     [[r[f"iops_{m}"] for r in rows] for m in mixes],
                     x_title="Block size", y_title="R/W", z_title="IOPS", log_z=True),
    ]  # fmt: skip


def throughput_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    rows = sheets[0].rows
    series = [Series("MB/s", [r["cell"] for r in rows], [r["bw_mb_per_s"] for r in rows])]
    title = sheets[0].title
    return [bar_chart(f"{prefix}-bars", title, series, y_title="MB/s", unit="MB/s")]


def latency_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """Average and maximum response time as 3D bars: block size x R/W mix."""
    rows = sheets[0].rows
    cells = [
        (catalog.block_size_label(r["bs_bytes"]), f"{r['read_pct']}/{100 - r['read_pct']}")
        for r in rows
    ]
    sizes = list(dict.fromkeys(bs for bs, _ in cells))
    mixes = list(dict.fromkeys(mix for _, mix in cells))
    charts = []
    for key, title in (("lat_mean_ns", "Average"), ("lat_max_ns", "Maximum")):
        value = {cell: _us(r[key]) for cell, r in zip(cells, rows, strict=True)}
        z = [[value.get((bs, mix)) for bs in sizes] for mix in mixes]
        charts.append(
            bars3d_chart(f"{prefix}-{key}", f"{title} response time (TC1/QD1)", sizes, mixes, z,
                         x_title="Block size", y_title="R/W", z_title="µs", log_z=True)
        )  # fmt: skip
    return charts


def wsat_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """IOPS vs time, and vs total GB written on linear and log axes."""
    rows = sheets[0].rows
    iops = [r["iops"] for r in rows]
    by_time = [Series("IOPS", [r["elapsed_s"] for r in rows], iops)]
    by_gb = [Series("IOPS", [r["written_gb"] for r in rows], iops)]
    return [
        line_chart(f"{prefix}-time", "WSAT: IOPS vs time", by_time, x_title="Time (s)",
                   y_title="IOPS", markers=None, unit="IOPS"),
        line_chart(f"{prefix}-gb", "WSAT: IOPS vs total GB written", by_gb,
                   x_title="Total written (GB)", y_title="IOPS", markers=None, unit="IOPS"),
        line_chart(f"{prefix}-gb-log", "WSAT: IOPS vs total GB written (log)", by_gb,
                   x_title="Total written (GB)", y_title="IOPS", log_x=True, log_y=True,
                   markers=None, unit="IOPS"),
    ]  # fmt: skip


def hir_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """IOPS per wait state: while writing, incl. idle, after, and the steady state."""
    rows = sheets[0].rows
    waits = [r["wait_s"] for r in rows]
    series = [
        Series(label, waits, [r[key] for r in rows])
        for key, label in (
            ("write_period_iops", "while writing"),
            ("cycle_iops", "incl. idle"),
            ("continuous_iops", "continuous after"),
            ("steady_state_iops", "steady state"),
        )
    ]
    return [line_chart(f"{prefix}-waits", "HIR: IOPS across wait states", series,
                       x_title="Wait state (s)", y_title="IOPS", unit="IOPS")]  # fmt: skip


def xsr_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """Throughput and response time vs time, one line per access group."""
    groups: dict[str, list[Any]] = {}
    for row in sheets[0].rows:
        groups.setdefault(str(row["group"]), []).append(row)
    bw = [Series(g, [r["elapsed_s"] for r in rs], [r["bw_mb_per_s"] for r in rs])
          for g, rs in groups.items()]  # fmt: skip
    lat = [Series(g, [r["elapsed_s"] for r in rs], [_us(r["lat_mean_ns"]) for r in rs])
           for g, rs in groups.items()]  # fmt: skip
    return [
        line_chart(f"{prefix}-bw", "XSR: throughput vs time", bw, x_title="Time (s)",
                   y_title="MB/s", markers=None, unit="MB/s"),
        line_chart(f"{prefix}-lat", "XSR: response time vs time", lat, x_title="Time (s)",
                   y_title="µs", log_y=True, markers=None, unit="µs"),
    ]  # fmt: skip


def demand_charts(sheets: Sequence[Sheet], prefix: str, data: _Run) -> list[Chart]:
    """Demand variation (IOPS vs QD, a line per TC) and demand intensity (response
    time vs IOPS, a line per TC); DIRTH's response-time histograms."""
    per_tc: dict[int, list[Any]] = {}
    for row in sheets[0].rows:
        per_tc.setdefault(int(row["tc"]), []).append(row)
    ordered = {tc: sorted(rs, key=lambda r: r["qd"]) for tc, rs in sorted(per_tc.items())}
    variation = [Series(f"TC {tc}", [r["qd"] for r in rs], [r["iops"] for r in rs])
                 for tc, rs in ordered.items()]  # fmt: skip
    intensity = [Series(f"TC {tc}", [r["iops"] for r in rs], [_us(r["lat_mean_ns"]) for r in rs])
                 for tc, rs in ordered.items()]  # fmt: skip
    charts = [
        line_chart(f"{prefix}-variation", "Demand variation: IOPS vs queue depth", variation,
                   x_title="QD", y_title="IOPS", log_x=True, unit="IOPS"),
        line_chart(f"{prefix}-intensity", "Demand intensity: response time vs IOPS", intensity,
                   x_title="IOPS", y_title="Average response time (µs)", unit="µs"),
    ]  # fmt: skip
    if len(sheets) > 1 and sheets[1].rows:
        histograms = [
            Series(f"{r['point']} ({r['cell']})", [int(e) / US for e in r["histogram"]],
                   list(r["histogram"].values()))
            for r in sheets[1].rows
        ]  # fmt: skip
        charts.append(
            line_chart(f"{prefix}-histograms", "Response-time histograms", histograms,
                       x_title="Response time, bucket upper edge (µs)", y_title="I/Os",
                       log_x=True, step=True, unit="I/Os")
        )  # fmt: skip
    return charts


TestCharts = Callable[[Sequence[Sheet], str, _Run], list[Chart]]
TEST_CHARTS: dict[str, TestCharts] = {
    "iops": iops_charts,
    "throughput": throughput_charts,
    **dict.fromkeys(THROUGHPUT_TESTS, throughput_charts),
    "latency": latency_charts,
    "wsat": wsat_charts,
    "hir": hir_charts,
    "xsr": xsr_charts,
    "ecw": demand_charts,
    "dirth": demand_charts,
}


def pts_sections(run: RunRecord) -> list[Section]:
    """One section per test with stored rounds: header, charts, tables."""
    data = _Run(run)
    sections = []
    for test in data.options.tests:
        if not data.history(test):
            continue
        sheets = _BUILDERS[test](data)
        prefix = f"run{run.id}-pts-{test}"
        charts = TEST_CHARTS[test](sheets, prefix, data)
        convergence = convergence_chart(data, test, f"{prefix}-convergence")
        if convergence is not None:
            charts += [convergence, *window_charts(data, test, prefix)]
        sections.append(
            Section(
                title=f"Run {run.id}: PTS {TITLES[test]}",
                header=header(data, test),
                charts=tuple(charts),
                sheets=tuple(sheets),
            )
        )
    steady = steady_state_sheet(data)
    if steady.rows:
        sections.append(Section(f"Run {run.id}: PTS steady state", sheets=(steady,)))
    return sections
