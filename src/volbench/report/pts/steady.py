"""The steady-state part of the PTS report: the notes under each test's table, the
table of every tracking variable's window, the convergence and window charts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from volbench.analysis.steady_state import WINDOW_ROUNDS, Window
from volbench.plans.pts import catalog
from volbench.plans.pts.cells import parse_cell
from volbench.plans.pts.test import FIGURES as CELL_ATTRIBUTES
from volbench.report.chart import Chart, Series, line_chart, window_chart
from volbench.report.pts.data import PtsData, average, sheet
from volbench.report.rows import Row, number
from volbench.report.sheet import Column, Sheet

FIGURE_UNITS = {"iops": ("IOPS", 1.0), "bw": ("MB/s", 1e6), "lat": ("µs", 1e3)}
"""Tracking-variable figure -> (unit the tables print, divisor of the stored value)."""

_FIGURE_NAMES = {"iops": "IOPS", "bw": "bandwidth", "lat": "mean response time"}


def variable_label(name: str) -> str:
    """A tracking variable as a person reads it: ``0-100.4k iops`` -> ``R/W 0/100,
    4 KiB, IOPS``; ``tc2-qd2 iops`` -> ``TC 2 x QD 2, IOPS``."""
    cell, _, figure = name.rpartition(" ")
    return ", ".join([cell_label(cell or name), _FIGURE_NAMES.get(figure, figure)])


def cell_label(cell: str) -> str:
    """A cell name (``CELL`` of ``TEST.PHASE.CELL``) as a person reads it:
    ``100-0.4k`` -> ``R/W 100/0, 4 KiB`` (not 100 - 0.4k), ``100-0.512`` ->
    ``R/W 100/0, 512 B``, ``tc2-qd2`` -> ``TC 2 x QD 2``, ``pass1`` -> ``pass 1``;
    others as they are."""
    parsed = parse_cell(cell)
    return parsed.label if parsed is not None else cell


def figure_text(value: object) -> str:
    """A figure with thousands separators and no exponent: ``60410.3`` -> ``60,410``,
    ``27.31`` -> ``27.3``, ``0.0123`` -> ``0.0123``."""
    figure = number(value)
    size = abs(figure)
    if size >= 100 or figure == 0:
        return f"{figure:,.0f}"
    decimals = min(6, 2 - math.floor(math.log10(size)))
    return f"{figure:,.{decimals}f}"


def _pct(value: object) -> str:
    return f"{number(value):.1f}%"


def not_evaluated(rounds: int) -> str:
    return (
        f"steady state not evaluated: {rounds} round{'s' if rounds != 1 else ''} "
        f"(needs a {WINDOW_ROUNDS}-round window)"
    )


def steady_notes(data: PtsData, test: str) -> tuple[str, ...]:
    """The steady-state note under a test's table."""
    verdict = data.verdict(test)
    ss = data.history(test, "ss")
    if verdict.steady:
        rounds = verdict.window_rounds
        return (f"steady state reached: rounds {rounds[0] + 1}-{rounds[-1] + 1} of {len(ss)}",)
    if len(ss) < WINDOW_ROUNDS:
        return (not_evaluated(len(ss)) + " (figures: average of these rounds)",)
    return (f"steady state NOT achieved after {len(ss)} rounds (figures: last window)",)


def window_text(name: str, w: Window) -> str:
    """One tracking variable's window, for a page header."""
    avg = w.average or 1e-12
    unit, divisor = FIGURE_UNITS.get(name.rsplit(" ", 1)[-1], ("", 1.0))
    shown = f"{figure_text(w.average / divisor)} {unit}".rstrip()
    return (
        f"rounds {w.rounds[0] + 1}-{w.rounds[-1] + 1}: average {shown}, "
        f"excursion {w.data_excursion / avg:.1%} (<= 20%), slope x 4 "
        f"{w.slope_excursion / avg:.1%} (<= 10%)"
    )


@dataclass(frozen=True, eq=False)
class SteadyRow(Row):
    """One tracking variable's steady-state window: the rounds and their values, the
    average, fit line (slope per round, intercept) and both excursions (% of the
    average), in fio's units (IO/s, bytes/s, ns), then the same in the table's ``unit``
    (IOPS, MB/s, µs)."""

    test: str
    variable: str
    label: str
    rounds: str
    round_values: list[float]
    average: float | None
    slope: float | None
    intercept: float | None
    data_excursion_pct: float | None
    slope_excursion_pct: float | None
    steady: str
    unit: str
    average_in_unit: float | None
    slope_in_unit: float | None
    intercept_in_unit: float | None

    renamed: ClassVar[Mapping[str, str]] = {"round_values": "values"}  # Mapping.values stays


def _row(
    test: str,
    name: str,
    rounds: str,
    values: list[float],
    fit: tuple[float | None, float | None, float | None],
    excursions: tuple[float | None, float | None],
    steady: str,
) -> SteadyRow:
    """A row, its figures also in the unit the table prints (the raw ones stay)."""
    unit, divisor = FIGURE_UNITS.get(name.rsplit(" ", 1)[-1], ("", 1.0))
    shown = [value / divisor if value is not None else None for value in fit]
    return SteadyRow(
        test, name, variable_label(name), rounds, values, *fit, *excursions, steady, unit, *shown
    )


def steady_state_sheet(data: PtsData) -> Sheet:
    """Every tracking variable's window: average, fit line and both excursions."""
    rows: list[SteadyRow] = []
    for test in (t for t in catalog.tests_of(data.options) if t.steady_state):
        verdict = data.verdict(test.name)
        ss = data.history(test.name, "ss")
        if not verdict.windows and ss:  # fewer rounds than a window: the rounds there are
            for name, values in test.tracking(ss).items():
                rows.append(
                    _row(
                        test.name,
                        name,
                        f"1-{len(values)}",
                        values,
                        (average(values), None, None),
                        (None, None),
                        not_evaluated(len(values)).removeprefix("steady state "),
                    )
                )
        for name, w in verdict.windows.items():
            rows.append(
                _row(
                    test.name,
                    name,
                    f"{w.rounds[0] + 1}-{w.rounds[-1] + 1}",
                    list(w.values),
                    (w.average, w.slope, w.intercept),
                    (
                        100 * w.data_excursion / w.average if w.average else None,
                        100 * w.slope_excursion / w.average if w.average else None,
                    ),
                    "yes" if w.steady else "NOT achieved",
                )
            )
    columns = (
        Column("test", "Test"),
        Column("label", "Tracking variable"),
        Column("rounds", "Window"),
        Column("unit", "Unit"),
        Column("average_in_unit", "Average", figure_text, numeric=True),
        Column("slope_in_unit", "Slope/round", figure_text, numeric=True),
        Column("intercept_in_unit", "Intercept", figure_text, numeric=True),
        Column("data_excursion_pct", "Excursion (<=20%)", _pct, numeric=True),
        Column("slope_excursion_pct", "Slope x4 (<=10%)", _pct, numeric=True),
        Column("steady", "Steady state"),
    )
    notes = (
        "figures in the unit of their row: IOPS, MB/s (10^6 bytes/s), µs (mean response "
        "time); in JSON, average/slope/intercept in IO/s, bytes/s and ns",
    )
    return sheet("Steady state (PTS 5-round window)", columns, rows, notes)


def tracked_cells(data: PtsData, test: str) -> tuple[str, list[str]]:
    """The tracked figure of ``test`` (iops, bw, lat) and its tracked cells."""
    tracked = catalog.by_name(test).tracking(data.history(test, "ss"))
    figure = next(iter(tracked)).rsplit(" ", 1)[1] if tracked else "iops"
    return figure, [name.rsplit(" ", 1)[0] for name in tracked]


def convergence_chart(
    data: PtsData, test: str, title: str, cid: str, names: list[str], figure: str
) -> Chart:
    """Steady-state convergence: ``figure`` of each of the cells ``names`` over every
    steady-state round."""
    ss = data.history(test, "ss")
    unit, divisor = FIGURE_UNITS[figure]
    series = []
    for name in names:
        values = [
            getattr(r.cells[name], CELL_ATTRIBUTES[figure]) if name in r.cells else None for r in ss
        ]
        series.append(
            Series(
                name,
                [r + 1 for r in range(len(ss))],
                [float(v) / divisor if v is not None else None for v in values],
            )
        )
    chart = line_chart(
        cid, f"{title}: steady-state convergence", series, x_title="Round", y_title=unit, unit=unit
    )
    chart.figure["layout"]["xaxis"]["dtick"] = 1  # rounds are whole numbers
    return chart


def window_charts(data: PtsData, test: str, title: str, prefix: str) -> list[Chart]:
    """The measurement-window plot of each tracking variable (rounds 1-based)."""
    charts = []
    for n, (name, w) in enumerate(data.verdict(test).windows.items()):
        unit, divisor = FIGURE_UNITS[name.rsplit(" ", 1)[1]]
        charts.append(
            window_chart(
                f"{prefix}-window{n}",
                f"{title}: measurement window, {variable_label(name)}",
                [r + 1 for r in w.rounds],
                [v / divisor for v in w.values],
                average=w.average / divisor,
                slope=w.slope / divisor,
                intercept=(w.intercept - w.slope) / divisor,  # the fit at round index r+1-1
                y_title=unit,
            )
        )
    return charts
