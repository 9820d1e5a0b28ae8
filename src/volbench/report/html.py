"""HTML renderer: a Document -> one self-contained page (bytes).

Everything is inlined: the styles, plotly.js (from the plotly package) and the
figures as JSON, so the page works offline and asks no network address for
anything (a published site's pages share one plotly.js file beside them instead).
``for_print`` draws static charts at a fixed width and breaks pages
between sections: the PDF renderer prints exactly that page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from volbench.report.chart import plain_figure
from volbench.report.document import Document, Section
from volbench.report.sheet import Sheet
from volbench.visible_text import visible

STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin-bottom: 2px; }
h2 { font-size: 18px; border-bottom: 2px solid #1f77b4; padding-bottom: 3px; margin-top: 28px; }
h3 { font-size: 14px; margin: 16px 0 4px; }
.subtitle { color: #555; font-size: 12px; }
table { border-collapse: collapse; font-size: 11px; margin: 6px 0 10px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; }
th { background: #eef2f8; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.flagged td { background: #fff2cc; }
table.header th { width: 190px; }
ul.notes { font-size: 11px; color: #444; margin: 2px 0 10px; padding-left: 18px; }
table.summary { font-size: 13px; }
table.summary th, table.summary td { padding: 4px 8px; }
ul.verdicts { font-size: 13px; font-weight: bold; margin: 4px 0 10px; padding-left: 18px; }
.chart { width: 100%; min-height: 420px; margin: 8px 0; }
nav ul { font-size: 12px; columns: 2; }
div.links { font-size: 12px; margin-bottom: 6px; }
body[data-print=true] .chart { width: 680px; min-height: 360px; }
@media print {
  body { margin: 0; }
  section.page { break-before: page; }
  section.page:first-of-type { break-before: auto; }
  .chart { break-inside: avoid; }
  table { break-inside: auto; font-size: 8px; }
  th, td { padding: 2px 3px; }
  tr { break-inside: avoid; }
  nav { display: none; }
}
@page { size: A4; margin: 12mm; }
"""

SCRIPT = """
(function () {
  var figures = JSON.parse(document.getElementById("volbench-figures").textContent);
  var print = document.body.dataset.print === "true";
  var config = {displaylogo: false, responsive: !print, staticPlot: print};
  var jobs = Object.keys(figures).map(function (id) {
    var f = figures[id];
    return Plotly.newPlot(id, f.data, f.layout, config);
  });
  Promise.all(jobs).then(function () { document.body.dataset.rendered = "true"; });
})();
"""


NO_ICON = '<link rel="icon" href="data:,">'
"""An empty icon, so a browser asks no server for /favicon.ico."""


def escape(text: str, quote: bool = True) -> str:
    """Text from outside in a page: its control characters shown as escapes
    (:func:`volbench.visible_text.visible`), then HTML's special characters escaped."""
    return html.escape(visible(text), quote)


def _json_script(value: object) -> str:
    """JSON safe inside a <script> element (no closing tag can appear)."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def render_sheet(sheet: Sheet, *, title: bool = True, css: str = "") -> str:
    """A Sheet as an HTML table with its notes (the cells the terminal shows)."""
    parts = [f"<h3>{escape(sheet.title)}</h3>"] if title else []
    head = "".join(f"<th>{escape(c.header)}</th>" for c in sheet.columns)
    rows = []
    for index, cells in enumerate(sheet.cells()):
        tds = "".join(
            f'<td class="num">{escape(text)}</td>' if column.numeric else f"<td>{escape(text)}</td>"
            for column, text in zip(sheet.columns, cells, strict=True)
        )
        flagged = ' class="flagged"' if index in sheet.flagged_rows else ""
        rows.append(f"<tr{flagged}>{tds}</tr>")
    table = f'<table class="{css}">' if css else "<table>"
    parts.append(f"{table}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    parts.append(_notes(sheet.notes))
    return "".join(parts)


def _notes(notes: tuple[str, ...]) -> str:
    if not notes:
        return ""
    return '<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"


def _section(section: Section, number: int) -> str:
    parts = [f'<section class="page" id="section-{number}"><h2>{escape(section.title)}</h2>']
    for index, sheet in enumerate(section.lead):  # what the section says first
        css = "summary" if section.summary and not index else "lead"
        parts.append(render_sheet(sheet, css=css))
    if section.verdicts:
        parts.append(
            '<ul class="verdicts">'
            + "".join(f"<li>{escape(v)}</li>" for v in section.verdicts)
            + "</ul>"
        )
    parts.append(_notes(section.notes))
    if section.header:
        rows = "".join(
            f"<tr><th>{escape(key)}</th><td>{escape(value)}</td></tr>"
            for key, value in section.header
        )
        parts.append(f'<table class="header"><tbody>{rows}</tbody></table>')
    for chart in section.charts:
        height = chart.figure.get("layout", {}).get("height")
        style = f' style="min-height: {int(height)}px"' if height else ""
        parts.append(f'<div class="chart" id="{escape(chart.id)}"{style}></div>')
    for sheet in section.sheets:
        parts.append(render_sheet(sheet))
    parts.append("</section>")
    return "".join(parts)


def render_html(
    document: Document,
    *,
    for_print: bool = False,
    plotly_src: str | None = None,
    links: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The whole report as one self-contained HTML page. ``plotly_src``: plotly.js from
    that relative address instead of inlined (pages of a published site share one
    copy); ``links``: (text, relative address) shown above the title."""
    ids = [c.id for c in document.charts()]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate chart ids in {ids}")
    figures = {c.id: plain_figure(c.figure) for c in document.charts()}
    toc = "".join(
        f'<li><a href="#section-{i}">{escape(s.title)}</a></li>'
        for i, s in enumerate(document.sections)
    )
    body = "".join(_section(s, i) for i, s in enumerate(document.sections))
    plotly = (
        f'<script src="{escape(plotly_src)}"></script>'
        if plotly_src
        else f'<script type="text/javascript">{_plotly_js()}</script>'
    )
    top = (
        '<div class="links">'
        + " · ".join(f'<a href="{escape(href)}">{escape(text)}</a>' for text, href in links)
        + "</div>"
        if links
        else ""
    )
    page = (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">{NO_ICON}'
        f"<title>{escape(document.title)}</title>"
        f"<style>{STYLE}</style>"
        f"{plotly}"
        "</head>"
        f'<body data-print="{"true" if for_print else "false"}">'
        f"{top}"
        f"<h1>{escape(document.title)}</h1>"
        f'<div class="subtitle">{escape(document.subtitle)}</div>'
        f"<nav><ul>{toc}</ul></nav>"
        f"{body}"
        f'<script type="application/json" id="volbench-figures">{_json_script(figures)}</script>'
        f"<script>{SCRIPT}</script>"
        "</body></html>\n"
    )
    return page.encode()


def _plotly_js() -> str:
    """plotly.js itself, to inline. plotly.offline is imported here, when a page needs
    it: every command imports this module (a run's final report), and plotly's import
    took 0.13 s at each start (BENCHMARKS.md, bench/pts_live)."""
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    js: str = get_plotlyjs()
    return js
