"""The index page of a published site: the runs as a table a person filters (a menu
per label key, plan and status) and sorts (a click on a column's head), each with its
headline figures, its verdict against the vendor's promise, its report and its
bundle; then the comparison pages.

The page is plain HTML with its rows written out (it reads without scripts); a short
inline script filters and sorts them. Nothing is loaded from anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from volbench import __version__
from volbench.report.html import NO_ICON, escape
from volbench.report.run_list import tests_text
from volbench.report.sheet import fmt_duration
from volbench.report.summary import Summary

GENERATOR = '<meta name="generator" content="volbench publish">'
"""Marks an index page volbench wrote (publishing again replaces such a page only)."""

FIRST_KEYS = ("vendor", "product", "size_gib", "size", "plan")
"""Label keys shown first (the ones the 2016 Aliyun/Tencent post's comparisons group by),
then the others in alphabetical order."""


@dataclass(frozen=True)
class IndexEntry:
    """A run on the index: its summary, its report page and its bundle (None: none)."""

    summary: Summary
    page: str
    bundle: str | None


@dataclass(frozen=True)
class Comparison:
    """A comparison page: runs of ``plan`` grouped by the labels ``by``."""

    by: tuple[str, ...]
    plan: str
    page: str
    groups: tuple[str, ...]
    left_out: tuple[int, ...] = ()


STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin-bottom: 2px; }
h2 { font-size: 18px; border-bottom: 2px solid #1f77b4; padding-bottom: 3px; margin-top: 24px; }
.subtitle { color: #555; font-size: 12px; }
#filters { font-size: 13px; margin: 8px 0; display: flex; flex-wrap: wrap; gap: 6px 16px; }
#filters select { font-size: 13px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 10px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; }
th { background: #eef2f8; text-align: left; cursor: pointer; white-space: nowrap; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.verdict.below { background: #fff2cc; }
ul { font-size: 13px; }
"""

SCRIPT = """
(function () {
  var table = document.getElementById("runs");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var selects = Array.prototype.slice.call(document.querySelectorAll("#filters select"));
  var shown = document.getElementById("shown");
  function filter() {
    var count = 0;
    rows.forEach(function (row) {
      var values = JSON.parse(row.dataset.values);
      var keep = selects.every(function (s) {
        return s.value === "" || values[s.dataset.key] === s.value;
      });
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " runs shown";
  }
  selects.forEach(function (s) { s.addEventListener("change", filter); });
  Array.prototype.slice.call(table.tHead.rows[0].cells).forEach(function (th, index) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.slice.call(table.tHead.rows[0].cells).forEach(function (other) {
        other.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var numeric = th.dataset.type === "number";
      rows.sort(function (a, b) {
        var x = a.cells[index].dataset.sort, y = b.cells[index].dataset.sort;
        var order;
        if (numeric) {
          order = (x === "" ? Infinity : Number(x)) - (y === "" ? Infinity : Number(y));
        } else {
          order = x.localeCompare(y, undefined, {numeric: true});
        }
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  filter();
  document.body.dataset.rendered = "true";
})();
"""


def label_keys(entries: Sequence[IndexEntry]) -> list[str]:
    """Every label key of the runs, the usual ones first."""
    keys = {k for e in entries for k in e.summary.run.labels}
    return [k for k in FIRST_KEYS if k in keys] + sorted(keys - set(FIRST_KEYS))


def _kind(entries: Sequence[IndexEntry], key: str) -> str:
    """``number`` for a label whose values are all numbers (sizes sort 50 < 100)."""
    values = [e.summary.run.labels[key] for e in entries if key in e.summary.run.labels]
    try:
        [float(v) for v in values]
    except ValueError:
        return ""
    return "number"


def _cell(text: str, sort: str | float | None = None, *, css: str = "", html: str = "") -> str:
    key = "" if sort is None else str(sort)
    cls = f' class="{css}"' if css else ""
    return f'<td{cls} data-sort="{escape(key)}">{html or escape(text)}</td>'


def _row(entry: IndexEntry, keys: Sequence[str]) -> str:
    run = entry.summary.run
    values = {"plan": run.plan, "status": run.status.value, **run.labels}
    cells = [
        _cell(str(run.id), run.id, css="num", html=f'<a href="{escape(entry.page)}">{run.id}</a>'),
        _cell(run.plan, run.plan),
        _cell(run.status.value, run.status.value),
        _cell(run.started_at.replace("T", " ")[:16], run.started_at),
        _cell(
            fmt_duration(entry.summary.duration_s) if entry.summary.duration_s else "-",
            entry.summary.duration_s,
            css="num",
        ),
    ]
    cells += [_cell(run.labels.get(k, ""), run.labels.get(k, "")) for k in keys]
    tests = ", ".join(entry.summary.tests)
    short = tests_text(entry.summary.tests)
    cells.append(_cell(short, tests, html=f'<span title="{escape(tests)}">{escape(short)}</span>'))
    figures = entry.summary.figures
    cells.append(_cell("", " ".join(figures), html="<br>".join(escape(f) for f in figures)))
    verdict = entry.summary.verdict or ""
    promise = entry.summary.promise
    below = promise is not None and bool(promise.flagged_rows)
    cells.append(_cell(verdict, verdict, css="verdict below" if below else "verdict"))
    links = [f'<a href="{escape(entry.page)}">report</a>']
    if entry.bundle:
        links.append(f'<a href="{escape(entry.bundle)}" download>bundle</a>')
    cells.append(_cell("", "", html=" · ".join(links)))
    data = escape(json.dumps(values, sort_keys=True), quote=True)
    return f'<tr data-values="{data}">{"".join(cells)}</tr>'


def _filters(entries: Sequence[IndexEntry], keys: Sequence[str]) -> str:
    menus = []
    for key in ["plan", "status", *keys]:
        values = sorted(
            {
                e.summary.run.plan
                if key == "plan"
                else e.summary.run.status.value
                if key == "status"
                else e.summary.run.labels.get(key, "")
                for e in entries
            }
            - {""}
        )
        options = '<option value="">all</option>' + "".join(
            f'<option value="{escape(v)}">{escape(v)}</option>' for v in values
        )
        menus.append(
            f'<label>{escape(key)} <select data-key="{escape(key)}">{options}</select></label>'
        )
    return f'<div id="filters">{"".join(menus)}<span id="shown"></span></div>'


def _comparisons(found: Sequence[Comparison]) -> str:
    if not found:
        return ""
    items = []
    for c in found:
        text = f"{c.plan} runs by {', '.join(c.by)}: {', '.join(c.groups)}"
        if c.left_out:
            text += f" (without the label: run {', '.join(str(i) for i in c.left_out)})"
        items.append(f'<li><a href="{escape(c.page)}">{escape(text)}</a></li>')
    return f'<h2>Comparisons</h2><ul id="comparisons">{"".join(items)}</ul>'


def index_page(entries: Sequence[IndexEntry], found: Sequence[Comparison], now: str) -> bytes:
    """The index of the site's runs and comparisons."""
    keys = label_keys(entries)
    heads = [
        ("Run", "number"),
        ("Plan", ""),
        ("Status", ""),
        ("Started (UTC)", ""),
        ("Took", "number"),
        *((k, _kind(entries, k)) for k in keys),
        ("Tests", ""),
        ("Headline figures", ""),
        ("Against the promise", ""),
        ("Files", ""),
    ]
    head = "".join(
        f'<th data-type="{kind}">{escape(text)}</th>' if kind else f"<th>{escape(text)}</th>"
        for text, kind in heads
    )
    rows = "".join(_row(e, keys) for e in entries)
    count = f"{len(entries)} run{'s' * (len(entries) != 1)}"
    page = (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">{GENERATOR}{NO_ICON}'
        f"<title>volbench: {count}</title><style>{STYLE}</style></head><body>"
        "<h1>volbench results</h1>"
        f'<div class="subtitle">{count} · generated {escape(now)} by volbench {__version__}'
        " · each run's report, its figures and its bundle</div>"
        f"{_comparisons(found)}"
        "<h2>Runs</h2>"
        f"{_filters(entries, keys)}"
        f'<table id="runs"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        f"<script>{SCRIPT}</script>"
        "</body></html>\n"
    )
    return page.encode()
