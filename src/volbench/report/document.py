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
    """One page (or more) of a report, in the order it is shown: what it says first
    (``lead``: the summary table, the check against the promise; ``verdicts``: a line
    each; ``notes``), then the header table, the charts and the full tables."""

    title: str
    header: tuple[tuple[str, str], ...] = ()
    charts: tuple[Chart, ...] = ()
    sheets: tuple[Sheet, ...] = ()
    notes: tuple[str, ...] = ()
    lead: tuple[Sheet, ...] = ()
    verdicts: tuple[str, ...] = ()
    summary: bool = False
    """Whether its first lead table is a run's summary (what its first screen shows)."""


@dataclass(frozen=True)
class Document:
    title: str
    subtitle: str
    sections: tuple[Section, ...]

    def charts(self) -> list[Chart]:
        return [c for s in self.sections for c in s.charts]
