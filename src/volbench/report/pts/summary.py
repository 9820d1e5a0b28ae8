"""The headline of a PTS run: a row per test, its headline figures (its page's
:meth:`~volbench.report.pts.page.TestPage.headline`) and its steady-state verdict, under
the PTS test header (purge, preconditioning, TC/QD, cache)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.model import RunRecord
from volbench.plans.pts import catalog
from volbench.report.plan_view import Headline
from volbench.report.pts.data import PtsData
from volbench.report.pts.header import header_notes
from volbench.report.pts.page import Figure
from volbench.report.pts.pages import page_for
from volbench.report.rows import Row, documents
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate
from volbench.units import format_seconds

COLUMNS = (
    Column("test", "Test"),
    Column("figures", "Headline figures", lambda v: " · ".join(f["label"] for f in v)),
    Column("steady_state", "Steady state"),
)

FIGURES_LISTED = 3
"""Headline figures a list of runs shows of a PTS run (the first tests' first ones)."""


def figure_text(figure: Figure) -> str:
    """A headline figure in its unit: ``60,410 IOPS``, ``1,093.5 MB/s``, ``78.5 µs``."""
    value = figure.value
    if value is None:
        return "not reached" if figure.unit == "s" else "-"
    if figure.unit == "IOPS":
        return f"{fmt_count(value)} IOPS"
    if figure.unit == "MB/s":
        return f"{fmt_rate(value)} MB/s"
    if figure.unit == "ns":
        return fmt_latency(value)
    if figure.unit == "s":
        return format_seconds(float(value))
    return f"{float(value):,.2f} {figure.unit}"


def steady_text(data: PtsData, test: str) -> str:
    """A test's steady state in a few words (``-`` for a test without one)."""
    if not catalog.by_name(test).steady_state:
        return "-"
    ss = data.history(test, "ss")
    verdict = data.verdict(test)
    if verdict.steady:
        rounds = verdict.window_rounds
        return f"reached (rounds {rounds[0] + 1}-{rounds[-1] + 1})"
    if len(ss) < WINDOW_ROUNDS:
        return f"not evaluated ({len(ss)} round{'s' * (len(ss) != 1)})"
    return f"NOT achieved ({len(ss)} rounds)"


class FigureEntry(TypedDict):
    """A headline figure as the JSON lists it: name, value in ``unit``, and as shown."""

    name: str
    value: float | None
    unit: str
    label: str


@dataclass(frozen=True, eq=False)
class TestHeadlineRow(Row):
    """A PTS test at a glance: its page's title, headline figures and steady state."""

    test: str
    figures: list[FigureEntry]
    steady_state: str


def pts_headline(run: RunRecord) -> Headline:
    """A row per headline figure of each test the run has rounds of."""
    data = PtsData(run)
    rows: list[TestHeadlineRow] = []
    for test in data.options.tests:
        if not data.history(test):
            continue
        page = page_for(test)
        found = [
            FigureEntry(
                name=f.name, value=f.value, unit=f.unit, label=f"{f.name}: {figure_text(f)}"
            )
            for f in page.headline(page.sheets(data), data)
        ]
        steady = steady_text(data, test)
        rows.append(TestHeadlineRow(page.title, found, steady))
    table = Sheet(f"Run {run.id} at a glance: PTS", COLUMNS, tuple(rows), {"rows": documents(rows)})
    listed = [(r.test, f) for r in rows for f in r.figures if f["value"] is not None]
    figures = tuple(f"{test} {f['label']}" for test, f in listed[:FIGURES_LISTED])
    return Headline(table, figures, header_notes(run))
