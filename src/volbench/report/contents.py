"""What a report holds: for several runs, a summary of each and their comparison; then
each run's sections, its own summary first."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence

from volbench import __version__
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord
from volbench.report.comparison import comparison_section
from volbench.report.document import Document, Section
from volbench.report.limit_section import limit_section
from volbench.report.plan_view import PlanView
from volbench.report.run_charts import run_sections
from volbench.report.summary import overview_sheet, summarise
from volbench.report.validity_sheets import Verdicts, given


def report_document(
    runs: Sequence[RunRecord],
    views: Callable[[str], PlanView],
    by: Sequence[str] = (),
    caps: Mapping[int, Sequence[KnownCap]] | None = None,
    verdicts: Verdicts | None = None,
) -> Document:
    """The report of ``runs``, each shown as ``views(its plan)`` says (from the stored
    runs alone: fio's per-second series are in the store); ``caps``: each run's
    volume's known caps by run id (:mod:`volbench.volume_limits`); ``verdicts``: each
    test's validity, the report's own (:class:`Verdicts`: worked out once a run)."""
    known = caps or {}
    verdicts = given(verdicts)
    sections: list[Section] = []
    summaries = [
        summarise(run, views(run.plan), caps=known.get(run.id, ()), verdicts=verdicts)
        for run in runs
    ]
    if len(runs) > 1:
        overview = overview_sheet(summaries)
        sections.append(Section("Summary of the runs", lead=(overview,), summary=True))
        sections.append(comparison_section(runs, by))
    for run, summary in zip(runs, summaries, strict=True):
        sections += run_sections(run, views(run.plan), summary, verdicts)
        limits = limit_section(run, known.get(run.id, ()))
        if limits is not None:
            sections.append(limits)
    ids = ", ".join(str(r.id) for r in runs)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Document(
        title=f"volbench report: run{'s' if len(runs) > 1 else ''} {ids}",
        subtitle=f"generated {now} by volbench {__version__}",
        sections=tuple(sections),
    )
