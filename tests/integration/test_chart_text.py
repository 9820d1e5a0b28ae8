"""Names from a user's files reach the charts as plain text: a job named like an
HTML link is shown as those characters in headless Chromium, never as a live link
(plotly reads a subset of HTML in names, labels and titles)."""

from __future__ import annotations

from pathlib import Path

from browser import needs_chromium, rendered

from volbench.report.chart import Series, bar_chart, line_chart
from volbench.report.document import Document, Section
from volbench.report.html import render_html

HOSTILE = '<a href="https://example.com/x">click</a> & <b>bold</b>'


@needs_chromium
def test_a_hostile_job_name_is_text_in_the_rendered_charts(tmp_path: Path) -> None:
    series = [Series(HOSTILE, [HOSTILE, "plain"], [10.0, 20.0]), Series("b", ["x", "y"], [1, 2])]
    bars = bar_chart("bars", "IOPS", series)
    lines = line_chart("lines", "Latency", [Series(HOSTILE, [1, 2], [1.0, 2.0])])
    page = tmp_path / "page.html"
    page.write_bytes(render_html(Document("t", "s", (Section("one", charts=(bars, lines)),))))
    with rendered(page) as opened:
        charts = opened.page.locator("div.chart")
        assert charts.count() == 2
        assert opened.page.locator("div.chart svg a").count() == 0  # no live link
        assert opened.page.locator("div.chart svg b").count() == 0
        legend = opened.page.locator("div.chart .legendtext").first.text_content()
        assert legend == HOSTILE  # the characters themselves
        ticks = opened.page.locator("div.chart .xtick text").all_text_contents()
        assert HOSTILE in ticks
        assert opened.errors == []
