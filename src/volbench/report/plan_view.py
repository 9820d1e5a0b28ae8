"""How one plan's runs are shown: its own sheet, report, sections and charts.

The report functions take a :class:`PlanView` from their caller (the table of plans
is :data:`volbench.plans.registry.PLANS`, a layer above); a part left None is the
generic one: the results table, its one sheet, the fio-run section, no own charts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from volbench.model import RunRecord
from volbench.report.chart import Chart
from volbench.report.document import Section
from volbench.report.sheet import Sheet

Report = tuple[list[Sheet], Mapping[str, Any]]
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


GENERIC = PlanView()
"""A plan with nothing of its own (quick, imported runs, a plan no longer known)."""
