"""The one table of plans: per plan name, how its runs are shown and resumed.

:data:`PLANS` is written out here, whole; nothing registers itself on import, and
every lookup of a plan's sheet, report, sections, charts or resume rebuilder goes
through :func:`entry`. Adding a plan: its own module(s), plus one line below.
A plan name not in the table (a run stored by another volbench) is shown with the
generic sheet and section, and cannot be rebuilt to resume it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from volbench.analysis import qos_results
from volbench.errors import UsageError
from volbench.model import RunRecord, RunSettings
from volbench.plans import (
    capture,
    firsttouch,
    hdtune,
    importing,
    iometer,
    qos_capability,
    quick,
    replay,
    sweep,
)
from volbench.plans.execution import PlanSpec
from volbench.plans.pts import options as pts
from volbench.records import section
from volbench.report import contents, run_sheets
from volbench.report.diskmark_sheets import quick_sheet
from volbench.report.document import Document
from volbench.report.firsttouch_sheets import firsttouch_sheet
from volbench.report.hdtune_sheets import filebench_sheet, scan_sheet
from volbench.report.iometer_sheets import iometer_sheet
from volbench.report.limit_sheets import limits_sheet
from volbench.report.plan_charts import iometer_charts, qos_verify_charts, scan_charts, sweep_charts
from volbench.report.plan_view import PlanView, Report
from volbench.report.pts.report import pts_document, pts_sections, pts_sheets
from volbench.report.pts.summary import pts_headline
from volbench.report.qos_verify_sheets import run_verify_sheet
from volbench.report.summary import Summary, summarise
from volbench.report.sweep_sheets import sweep_headline, sweep_sheet
from volbench.report.workload_sheets import workload_report, workload_sections

Rebuilder = Callable[[RunSettings], PlanSpec]
"""An adaptive plan (its next round chosen from results) from its run's settings."""

SetupReader = Callable[[RunRecord], object]
"""A plan's own recorded options as its typed record (RecordError: they do not fit)."""


def _section(key: str, kind: type[object]) -> SetupReader:
    """The reader of options stored under ``key`` as a ``kind`` record."""
    return lambda run: section(run.settings.options, key, kind)


def _whole(kind: type[object]) -> SetupReader:
    """The reader of all a plan's options as one ``kind`` record (:meth:`RunRecord.setup`)."""
    return lambda run: run.setup(kind)


def _find_max_again(settings: RunSettings) -> PlanSpec:
    """A find-max sweep from its recorded options."""
    options = sweep.options_from(settings.options)
    if options is None:
        raise UsageError("its sweep options were not recorded: start it again")
    return sweep.find_max_plan(options)


@dataclass(frozen=True)
class PlanEntry(PlanView):
    """A plan's row of the table: its view (sheet, report, sections, charts; None:
    the generic one) and, for an adaptive plan, how ``volbench resume`` rebuilds it."""

    resume: Rebuilder | None = None
    """None: the plan's recorded rounds are all there is to resume (or it is PTS,
    which resumes from its own recorded options)."""
    setup: SetupReader | None = None
    """Reads the plan's own recorded options (None: the plan records none to check)."""


PLANS: Mapping[str, PlanEntry] = MappingProxyType(
    {
        quick.NAME: PlanEntry(sheet=quick_sheet, setup=_section(quick.NAME, quick.QuickOptions)),
        sweep.NAME: PlanEntry(
            sheet=sweep_sheet,
            charts=sweep_charts,
            headline=sweep_headline,
            resume=_find_max_again,
            setup=_section(sweep.NAME, sweep.SweepOptions),
        ),
        iometer.NAME: PlanEntry(
            sheet=iometer_sheet,
            charts=iometer_charts,
            setup=_section(iometer.NAME, iometer.IometerOptions),
        ),
        hdtune.SCAN: PlanEntry(
            sheet=scan_sheet, charts=scan_charts, setup=_section(hdtune.SCAN, hdtune.ScanOptions)
        ),
        hdtune.FILEBENCH: PlanEntry(
            sheet=filebench_sheet, setup=_section(hdtune.FILEBENCH, hdtune.FilebenchOptions)
        ),
        firsttouch.NAME: PlanEntry(
            sheet=firsttouch_sheet,
            setup=_section(firsttouch.NAME, firsttouch.FirstTouchOptions),
        ),
        pts.NAME: PlanEntry(
            report=lambda run: (pts_sheets(run), pts_document(run)),
            sections=pts_sections,
            headline=pts_headline,
            setup=_whole(pts.PtsSetup),
        ),
        qos_results.PLAN: PlanEntry(
            sheet=run_verify_sheet, charts=qos_verify_charts, setup=qos_results.VerifySetup.of
        ),
        qos_capability.NAME: PlanEntry(),
        importing.PLAN: PlanEntry(),
        capture.NAME: PlanEntry(
            report=workload_report,
            sections=workload_sections,
            setup=_whole(capture.CaptureSetup),
        ),
        replay.NAME: PlanEntry(setup=_section(replay.NAME, replay.ReplayOptions)),
    }
)
"""Every plan volbench creates runs of, by name (read-only)."""

UNKNOWN = PlanEntry()
"""The entry of a plan name not in :data:`PLANS`."""


def entry(plan: str) -> PlanEntry:
    """The table's entry of plan name ``plan`` (:data:`UNKNOWN` when not in it)."""
    return PLANS.get(plan, UNKNOWN)


def check_setup(run: RunRecord) -> None:
    """RecordError when ``run``'s own recorded options do not fit its plan's record
    (a bundle to import is checked whole before anything of it is stored)."""
    reader = entry(run.plan).setup
    if reader is not None:
        reader(run)


def report_for(run: RunRecord) -> Report:
    """The sheets and JSON document of ``run``, as its plan's entry says
    (:func:`volbench.report.run_sheets.report_for`), then what limited each test (its
    rows under ``limits`` in the JSON: :mod:`volbench.report.limit_sheets`)."""
    sheets, document = run_sheets.report_for(run, entry(run.plan))
    limits = limits_sheet(run)
    if limits is None:
        return sheets, document
    return [*sheets, limits], {**document, "limits": list(limits.rows)}


def summary_for(run: RunRecord, *, check: bool = True) -> Summary:
    """The summary of ``run`` as its plan's entry says (headline figures, the check
    against the promise with ``check``: :func:`volbench.report.summary.summarise`)."""
    return summarise(run, entry(run.plan), check=check)


def report_document(runs: Sequence[RunRecord], by: Sequence[str] = ()) -> Document:
    """The HTML/PDF report of ``runs``, each as its plan's entry says
    (:func:`volbench.report.contents.report_document`)."""
    return contents.report_document(runs, entry, by)
