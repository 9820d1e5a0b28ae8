"""The PTS report of a run: its tables (a page per test, from :mod:`.pages`),
the steady-state table, every stored cell; the stable JSON form; the HTML/PDF
sections (header, charts, tables per test).

Charts are drawn from the tables' own rows, so a chart shows exactly the values of
its table, and from the stored rounds for the convergence plots. Units: IOPS as
stored, MB/s = bytes/s / 10^6, µs = ns / 10^3, GB = bytes / 10^9 (as in the tables).
"""

from __future__ import annotations

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.model import RunRecord
from volbench.plans.pts import catalog
from volbench.report.document import Section
from volbench.report.pts.data import PtsData
from volbench.report.pts.header import header_notes, page_header
from volbench.report.pts.pages import page_for
from volbench.report.pts.steady import (
    convergence_chart,
    steady_state_sheet,
    tracked_cells,
    window_charts,
)
from volbench.report.pts.stored import cells_sheet
from volbench.report.sheet import Sheet

SCHEMA = "volbench.pts/1"


def pts_sheets(run: RunRecord) -> list[Sheet]:
    """Every table of a PTS run, the header notes on the first one."""
    data = PtsData(run)
    sheets: list[Sheet] = []
    for test in data.options.tests:
        if data.history(test):
            sheets += page_for(test).sheets(data)
    steady = steady_state_sheet(data)  # none for a run of WSAT and XSR only
    sheets += [*([steady] if steady.rows else []), cells_sheet(run)]
    first = sheets[0]
    sheets[0] = Sheet(
        first.title,
        first.columns,
        first.rows,
        first.document,
        header_notes(run) + first.notes,
        first.flagged_rows,
    )
    return sheets


def pts_document(run: RunRecord) -> dict[str, object]:
    """The stable JSON form of a PTS report (schema ``volbench.pts/1``)."""
    data = PtsData(run)
    return {
        "schema": SCHEMA,
        "id": run.id,
        "status": run.status.value,
        "non_compliant": run.non_compliant,
        "header": list(header_notes(run)),
        "settings": run.settings.record(),
        "steady_state": {
            test.name: {
                "steady": data.verdict(test.name).steady,
                "rounds": len(data.history(test.name, "ss")),
                "evaluated": len(data.history(test.name, "ss")) >= WINDOW_ROUNDS,
            }
            for test in catalog.tests_of(data.options)
            if test.steady_state
        },
        "tables": [dict(s.document) | {"notes": list(s.notes)} for s in pts_sheets(run)],
    }


def pts_sections(run: RunRecord) -> list[Section]:
    """One section per test with stored rounds: its table, header, charts, more tables."""
    data = PtsData(run)
    sections = []
    for test in data.options.tests:
        if not data.history(test):
            continue
        page = page_for(test)
        sheets = page.sheets(data)
        prefix = f"run{run.id}-pts-{test}"
        charts = page.charts(sheets, prefix, data)
        ss = data.history(test, "ss")
        if ss:
            figure, tracked = tracked_cells(data, test)
            names = page.convergence_cells(data, tuple(ss[0].cells), tracked)
            cid = f"{prefix}-convergence"
            charts += [
                convergence_chart(data, test, page.title, cid, names, figure),
                *window_charts(data, test, page.title, prefix),
            ]
        sections.append(
            Section(
                title=f"Run {run.id}: PTS {page.title}",
                header=page_header(data, test),
                charts=tuple(charts),
                sheets=tuple(sheets[1:]),
                lead=tuple(sheets[:1]),  # the test's results first, then its charts
            )
        )
    steady = steady_state_sheet(data)
    if steady.rows:
        sections.append(Section(f"Run {run.id}: PTS steady state", sheets=(steady,)))
    return sections
