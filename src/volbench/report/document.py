"""A report document: sections of header fields, tables (Sheets) and charts.

The HTML and PDF renderers take a Document; what goes in it is decided by each
plan's view (:mod:`volbench.report.plan_view`) and the comparison, not by the
renderers.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.report.chart import Chart
from volbench.report.sheet import Sheet


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
