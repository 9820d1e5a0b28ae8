"""A report document: sections of header fields, tables (Sheets) and charts.

The HTML and PDF renderers take a Document; what goes in it is decided by the
plans' chart registrations and the comparison, not by the renderers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from volbench.model import RunRecord
from volbench.report.chart import Chart
from volbench.report.sheet import Sheet

SheetCharts = Callable[[Sheet], list[Chart]]


@dataclass(frozen=True)
class Section:
    """One page (or more) of a report: a header table, charts, tables, notes."""

    title: str
    header: tuple[tuple[str, str], ...] = ()
    charts: tuple[Chart, ...] = ()
    sheets: tuple[Sheet, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Document:
    title: str
    subtitle: str
    sections: tuple[Section, ...]

    def charts(self) -> list[Chart]:
        return [c for s in self.sections for c in s.charts]


SectionBuilder = Callable[[RunRecord, Path | None], list[Section]]
"""Sections of a run, given the folder of its fio logs (None when not on this machine)."""

PLAN_SECTIONS: dict[str, SectionBuilder] = {}
"""Plans whose reports have sections of their own (charts and tables), registered
by their module; other runs get the generic fio-run section."""

PLAN_CHARTS: dict[str, SheetCharts] = {}
"""Charts drawn from a plan's own sheet (so they show the table's very values),
shown before the generic fio-run charts; registered by report/plan_charts.py."""
