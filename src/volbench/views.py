"""The one table of how each plan's runs are shown: per plan name, its own sheet,
report, sections, charts and headline (:class:`volbench.report.plan_view.PlanView`;
a part left None is the generic one). It joins the plans (their names) and the
report (their pages), so it stands above both; what a plan is to the run engine
(how it resumes, its recorded options) is :mod:`volbench.plans.kinds`.

:data:`VIEWS` is written out here, whole; nothing registers itself on import.
A plan name not in the table (a run stored by another volbench) is shown with the
generic sheet and section.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TypeVar

from volbench.analysis import qos_results
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord
from volbench.plans import capture, firsttouch, hdtune, iometer, limits, quick, replay, sweep
from volbench.plans.imported import importing
from volbench.plans.jobs import tests as job_tests
from volbench.plans.pts import options as pts
from volbench.plans.qos import capability as qos_capability
from volbench.plans.runs import fill
from volbench.report import contents, run_sheets
from volbench.report.diskmark_sheets import quick_sheet
from volbench.report.document import Document
from volbench.report.firsttouch_sheets import firsttouch_sheet
from volbench.report.hdtune_sheets import filebench_sheet, scan_sheet
from volbench.report.iometer_sheets import iometer_sheet
from volbench.report.limit_sheets import limits_sheet
from volbench.report.limits_card import limits_card
from volbench.report.limits_charts import limits_charts
from volbench.report.plan_charts import iometer_charts, qos_verify_charts, scan_charts, sweep_charts
from volbench.report.plan_view import PlanView, Report, SheetBuilder
from volbench.report.pts.report import pts_document, pts_sections, pts_sheets
from volbench.report.pts.summary import pts_headline
from volbench.report.qos_verify_sheets import run_verify_sheet, verify_headline
from volbench.report.sheet import Sheet
from volbench.report.summary import Summary, summarise
from volbench.report.sweep_sheets import sweep_headline, sweep_sheet
from volbench.report.validity_sheets import (
    Verdicts,
    given,
    validity_documents,
    validity_sheet,
    with_marks,
)
from volbench.report.workload_sheets import workload_report, workload_sections

VIEWS: Mapping[str, PlanView] = MappingProxyType(
    {
        quick.NAME: PlanView(sheet=quick_sheet),
        sweep.NAME: PlanView(sheet=sweep_sheet, charts=sweep_charts, headline=sweep_headline),
        limits.NAME: PlanView(sheet=limits_card, charts=limits_charts),
        iometer.NAME: PlanView(sheet=iometer_sheet, charts=iometer_charts),
        hdtune.SCAN: PlanView(sheet=scan_sheet, charts=scan_charts),
        hdtune.FILEBENCH: PlanView(sheet=filebench_sheet),
        firsttouch.NAME: PlanView(sheet=firsttouch_sheet),
        pts.NAME: PlanView(
            report=lambda run: (pts_sheets(run), pts_document(run)),
            sections=pts_sections,
            headline=pts_headline,
        ),
        qos_results.PLAN: PlanView(
            sheet=run_verify_sheet, charts=qos_verify_charts, headline=verify_headline
        ),
        qos_capability.NAME: PlanView(),
        importing.PLAN: PlanView(),
        capture.NAME: PlanView(report=workload_report, sections=workload_sections),
        replay.NAME: PlanView(),
        job_tests.NAME: PlanView(),
    }
)
"""Every plan volbench creates runs of, by name (read-only)."""

T = TypeVar("T")

UNKNOWN = PlanView()
"""The view of a plan name not in :data:`VIEWS`: everything generic."""


def view(plan: str) -> PlanView:
    """The table's view of plan name ``plan`` (:data:`UNKNOWN` when not in it); its own
    parts see a run without its fill (``--fill``: not a test of the plan, e.g. not a
    point of a sweep), the generic ones with it."""
    found = VIEWS.get(plan, UNKNOWN)
    if not (found.sheet or found.report or found.sections or found.headline):
        return found
    return dataclasses.replace(
        found,
        sheet=None if found.sheet is None else _filled_note(found.sheet),
        report=_unfilled(found.report),
        sections=_unfilled(found.sections),
        headline=_unfilled(found.headline),
    )


def _filled_note(sheet: SheetBuilder) -> SheetBuilder:
    """A plan's own sheet of a run without its fill, with a note of what the fill did."""

    def built(run: RunRecord) -> Sheet:
        shown = sheet(fill.without(run))
        done = fill.done(run)
        if done is None:
            return shown
        notes = [*shown.document.get("notes", ()), done]
        document = {**shown.document, "notes": notes}
        return dataclasses.replace(shown, notes=(*shown.notes, done), document=document)

    return built


def _unfilled(part: Callable[[RunRecord], T] | None) -> Callable[[RunRecord], T] | None:
    """``part`` of a plan's view, given runs without their fill (:func:`fill.without`)."""
    return None if part is None else lambda run: part(fill.without(run))


def report_for(
    run: RunRecord, caps: Sequence[KnownCap] = (), verdicts: Verdicts | None = None
) -> Report:
    """The sheets and JSON document of ``run``, as its plan's entry says
    (:func:`volbench.report.run_sheets.report_for`), each table that names its tests
    with a mark on each figure that is not the volume's, then what limited each test (its
    rows under ``limits`` in the JSON: :mod:`volbench.report.limit_sheets`; not of its
    fill), with the volume's known ``caps`` (:mod:`volbench.volume_limits`), then the
    marked tests and what to do (every test's verdict under ``validity`` in the JSON:
    :mod:`volbench.report.validity_sheets`; not of its fill); ``verdicts``: the command's
    (:class:`~volbench.report.validity_sheets.Verdicts`)."""
    verdicts = given(verdicts)
    sheets, document = run_sheets.report_for(run, view(run.plan))
    found = verdicts.of(run)
    sheets = [with_marks(sheet, found) for sheet in sheets]
    document = {**document, "validity": validity_documents(found)}
    limits = limits_sheet(fill.without(run), caps)  # the fill measures nothing asked for
    if limits is not None:
        sheets, document = [*sheets, limits], {**document, "limits": list(limits.rows)}
    marks = validity_sheet(run, verdicts)
    return [*sheets, marks] if marks is not None else sheets, document


def summary_for(
    run: RunRecord,
    *,
    check: bool = True,
    caps: Sequence[KnownCap] = (),
    verdicts: Verdicts | None = None,
) -> Summary:
    """The summary of ``run`` as its plan's entry says (headline figures, the check
    against the promise with ``check``: :func:`volbench.report.summary.summarise`)."""
    return summarise(run, view(run.plan), check=check, caps=caps, verdicts=verdicts)


def report_document(
    runs: Sequence[RunRecord],
    by: Sequence[str] = (),
    caps: Mapping[int, Sequence[KnownCap]] | None = None,
    verdicts: Verdicts | None = None,
) -> Document:
    """The HTML/PDF report of ``runs``, each as its plan's entry says
    (:func:`volbench.report.contents.report_document`); ``verdicts``: the command's."""
    return contents.report_document(runs, view, by, caps, verdicts)
