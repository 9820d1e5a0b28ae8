"""A published site: stored runs as a folder of static pages (``volbench publish``).

The site works from the folder itself (``file://``) or from any static web server:
every address in it is relative, every script and style is in it, and nothing is
asked of any other address; there is no server process to secure or keep running.
It holds::

    index.html                  the runs: filters and sorting by label, plan and
                                status; headline figures and verdicts; links
    runs/run-ID.html            each run's full report (as ``volbench report`` writes it)
    compare/BY--PLAN.html       a comparison per ``--by`` grouping and plan, where the
                                plan's runs form two groups or more
    bundles/run-ID.vbundle      each run's bundle (``volbench import`` reads it back),
                                when a bundle writer is given
    assets/plotly.min.js        plotly.js, once, for every page's charts

:func:`site_files` returns the files (relative path -> bytes); the command writes them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from volbench import __version__
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord
from volbench.report.comparison import comparison_section
from volbench.report.contents import report_document
from volbench.report.document import Document, Section
from volbench.report.group_figures import group_runs
from volbench.report.html import render_html
from volbench.report.plan_view import PlanView
from volbench.report.publish_index import Comparison, IndexEntry, index_page
from volbench.report.summary import summarise
from volbench.report.validity_sheets import Verdicts, given

PLOTLY = "assets/plotly.min.js"

Bundler = Callable[[Sequence[RunRecord]], bytes]
"""Writes runs as one bundle (``volbench export``'s format)."""


@dataclass(frozen=True)
class Bundles:
    """How the site offers each run to download: the writer and its file suffix."""

    write: Bundler
    suffix: str


def run_page(run: RunRecord) -> str:
    return f"runs/run-{run.id}.html"


def _slug(text: str) -> str:
    """``text`` as a file name part: letters, digits, ``.``, ``_`` and ``-`` only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


def comparison_page(by: Sequence[str], plan: str) -> str:
    return f"compare/{_slug(','.join(by))}--{_slug(plan)}.html"


def _plotly() -> bytes:
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    return str(get_plotlyjs()).encode()


def comparisons(
    runs: Sequence[RunRecord], groupings: Sequence[Sequence[str]]
) -> list[tuple[Comparison, list[RunRecord]]]:
    """For each grouping and plan: the runs that have the grouping's labels, when they
    form two groups or more (runs without a label are named in ``left_out``)."""
    found = []
    for by in groupings:
        plans = list(dict.fromkeys(r.plan for r in runs))
        for plan in plans:
            of_plan = [r for r in runs if r.plan == plan]
            labelled = [r for r in of_plan if all(k in r.labels for k in by)]
            groups = group_runs(labelled, by) if labelled else []
            if len(groups) < 2:
                continue
            left_out = tuple(r.id for r in of_plan if r not in labelled)
            names = tuple(g.name for g in groups)
            found.append(
                (Comparison(tuple(by), plan, comparison_page(by, plan), names, left_out), labelled)
            )
    return found


def site_files(
    runs: Sequence[RunRecord],
    views: Callable[[str], PlanView],
    groupings: Sequence[Sequence[str]] = (),
    bundles: Bundles | None = None,
    caps: Mapping[int, Sequence[KnownCap]] | None = None,
    verdicts: Verdicts | None = None,
) -> dict[str, bytes]:
    """Every file of the site of ``runs`` (each read with its raw outputs and series),
    a comparison page per grouping (``--by``) and plan; ``caps``: each run's volume's
    known caps by run id (:mod:`volbench.volume_limits`); ``verdicts``: each test's
    validity, the command's (:class:`~volbench.report.validity_sheets.Verdicts`)."""
    known = caps or {}
    verdicts = given(verdicts)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    files: dict[str, bytes] = {PLOTLY: _plotly()}
    entries = []
    for run in runs:
        summary = summarise(run, views(run.plan), caps=known.get(run.id, ()), verdicts=verdicts)
        bundle = None
        if bundles is not None:
            bundle = f"bundles/run-{run.id}{bundles.suffix}"
            files[bundle] = bundles.write([run])
        links = [("all runs", "../index.html")]
        if bundle:
            links.append((f"download run {run.id} as a bundle", f"../{bundle}"))
        document = report_document([run], views, caps=known, verdicts=verdicts)
        files[run_page(run)] = render_html(document, plotly_src=f"../{PLOTLY}", links=links)
        entries.append(IndexEntry(summary, run_page(run), bundle))
    found = comparisons(runs, groupings)
    for comparison, members in found:
        document = _comparison_document(comparison, members, now)
        links = [("all runs", "../index.html")]
        links += [(f"run {r.id}", f"../{run_page(r)}") for r in members]
        files[comparison.page] = render_html(document, plotly_src=f"../{PLOTLY}", links=links)
    files["index.html"] = index_page(entries, [c for c, _ in found], now)
    return files


def _comparison_document(comparison: Comparison, runs: Sequence[RunRecord], now: str) -> Document:
    """The comparison of one grouping's runs of one plan, with links to each run."""
    section = comparison_section(runs, comparison.by)
    notes = tuple(
        f"run {r.id}: {' '.join(f'{k}={v}' for k, v in sorted(r.labels.items()))}" for r in runs
    )
    if comparison.left_out:
        notes += (
            f"left out (no {'/'.join(comparison.by)} label): run(s) "
            + ", ".join(str(i) for i in comparison.left_out),
        )
    section = Section(section.title, charts=section.charts, lead=section.lead, notes=notes)
    return Document(
        title=f"{comparison.plan} runs by {', '.join(comparison.by)}",
        subtitle=f"generated {now} by volbench {__version__}",
        sections=(section,),
    )
