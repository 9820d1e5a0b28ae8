"""How one plan's runs are shown: its own sheet, report, sections and charts.

The report functions take a :class:`PlanView` from their caller (the table of plans
is :data:`volbench.views.VIEWS`, a layer above); a part left None is the
generic one: the results table, its one sheet, the fio-run section, no own charts,
a headline row per test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from volbench.model import RunRecord
from volbench.report.chart import Chart
from volbench.report.document import Section
from volbench.report.sheet import Sheet

Report = tuple[list[Sheet], Mapping[str, object]]
"""Several sheets and the one JSON document that stands for all of them."""

SheetBuilder = Callable[[RunRecord], Sheet]
"""The one sheet of a run (given the aggregate of a run on several places at once)."""

ReportBuilder = Callable[[RunRecord], Report]
"""The sheets of a run that takes several (e.g. PTS: one table per test)."""

SectionBuilder = Callable[[RunRecord], list[Section]]
"""Sections of a run (its per-second series are in the record, from the store)."""

SheetCharts = Callable[[Sheet], list[Chart]]
"""Charts drawn from a plan's own sheet (so they show the table's very values)."""


@dataclass(frozen=True)
class Headline:
    """What a report says first about a run of a plan: its headline figures as a table
    a person reads in ten seconds, the few figures a list of runs shows of it
    (``41,191 IOPS (randread-4k-iops)``), and the notes that explain them (the knee
    of a sweep, a rate limit, steady state)."""

    table: Sheet
    figures: tuple[str, ...]
    notes: tuple[str, ...] = ()


HeadlineBuilder = Callable[[RunRecord], Headline]
"""A plan's own headline of a run (for a run without raw outputs too: ``volbench runs``
reads the results alone)."""


@dataclass(frozen=True)
class PlanView:
    """The parts of a plan's reports that are its own; None: the generic part."""

    sheet: SheetBuilder | None = None
    """Its results in a sheet of their own (``volbench show``, export, report)."""
    report: ReportBuilder | None = None
    """Several sheets and their JSON document; replaces ``sheet``."""
    sections: SectionBuilder | None = None
    """Its HTML/PDF report pages; replaces the generic fio-run section."""
    charts: SheetCharts | None = None
    """Charts of its first sheet, shown before the generic fio-run charts."""
    headline: HeadlineBuilder | None = None
    """Its summary at the top of a report, in ``volbench runs`` and a published index;
    None: a row per test (IOPS, MB/s, latency)."""


GENERIC = PlanView()
"""A plan with nothing of its own (quick, imported runs, a plan no longer known)."""
