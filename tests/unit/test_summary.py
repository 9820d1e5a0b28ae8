"""What a report says first (the summary), what ``volbench runs`` lists, and the axes
that make charts readable: on recorded fio outputs, figures checked against fio's
own JSON read with ``json.loads``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.model import RunRecord
from volbench.plans.imported.importing import import_file
from volbench.report.axis import duration_text, latency_unit, log_axis, tick_text
from volbench.report.chart import PALETTE, Series, bar_chart, line_chart
from volbench.report.run_list import runs_sheet
from volbench.report.run_sheets import run_sheet, shown_percentile
from volbench.report.sheet import fmt_count, fmt_latency
from volbench.store.repository import Store
from volbench.views import report_document, summary_for

QUICK = FIO_FIXTURES / "quick" / "round-000.json"


def _imported(tmp_path: Path, labels: dict[str, str]) -> RunRecord:
    with Store.open(str(tmp_path / "store.db")) as store:
        return store.get_run(import_file(store, QUICK, labels))


def test_the_summary_has_a_row_per_test_and_the_headline_figures(tmp_path: Path) -> None:
    run = _imported(tmp_path, {})
    summary = summary_for(run)
    fio = raw_document("quick/round-000.json")
    iops = {j["jobname"]: j["read"]["iops"] + j["write"]["iops"] for j in fio["jobs"]}
    assert [r["test"] for r in summary.table.rows] == [j["jobname"] for j in fio["jobs"]]
    top = max(iops, key=lambda t: iops[t])
    assert summary.figures[0] == f"{fmt_count(iops[top])} IOPS ({top})"
    qd1 = [j for j in fio["jobs"] if j["job options"].get("iodepth") == "1"]
    best = min(qd1, key=lambda j: j["read"]["lat_ns"]["mean"] or j["write"]["lat_ns"]["mean"])
    assert summary.figures[-1].endswith(f"at QD 1 ({best['jobname']})")
    assert summary.promise is None and summary.verdict is None  # no product label
    assert summary.tests == tuple(j["jobname"] for j in fio["jobs"])


def test_a_product_label_puts_the_promise_in_the_summary(tmp_path: Path) -> None:
    run = _imported(tmp_path, {"product": "aws-gp3", "size_gib": "50"})
    summary = summary_for(run)
    assert summary.promise is not None and summary.verdict is not None
    assert summary.verdict.startswith("vs AWS EBS General Purpose SSD (gp3) at 50 GiB: ")
    checked = len(summary.promise.rows)
    assert f"{checked} figure(s) checked" in summary.verdict
    column = [c.header for c in summary.table.columns]
    assert column[-1] == "Promised: verdict"
    row = next(r for r in summary.table.rows if r["test"] == "randread-4k-iops")
    assert row["promise"].startswith("3,000 IOPS: ")  # gp3's baseline at 50 GiB
    # the report leads with that table and the verdict line, the check in full below
    document = report_document([run])
    first = document.sections[0]
    assert first.lead[0].title == f"Run {run.id} at a glance"
    assert first.verdicts[0] == summary.verdict
    assert summary.promise.title in [s.title for s in first.sheets]


def test_a_product_the_catalogue_lacks_is_said_not_hidden(tmp_path: Path) -> None:
    run = _imported(tmp_path, {"product": "no-such-disk", "size_gib": "50"})
    summary = summary_for(run)
    assert summary.promise is None
    assert summary.verdict is not None and "not checked against no-such-disk" in summary.verdict


def test_percentiles_are_shown_at_most_at_the_maximum(tmp_path: Path) -> None:
    run = _imported(tmp_path, {})
    result = run.results[0]
    above = dataclasses.replace(result, lat_p999_ns=result.lat_max_ns * 1.002)
    sheet = run_sheet(dataclasses.replace(run, results=(above, *run.results[1:])))
    row = sheet.rows[0]
    assert row["lat_p999_ns"] == above.lat_p999_ns  # the stored figure, as fio gave it
    assert shown_percentile(row, "lat_p999_ns") == result.lat_max_ns
    cells = dict(zip([c.header for c in sheet.columns], sheet.cells()[0], strict=True))
    assert cells["p99.9"] == cells["Max"] == fmt_latency(result.lat_max_ns)


def test_runs_lists_tests_duration_and_a_headline(tmp_path: Path) -> None:
    run = _imported(tmp_path, {})
    brief = summary_for(run, check=False).brief()
    sheet = runs_sheet([run], {run.id: brief})
    headers = [c.header for c in sheet.columns]
    assert headers[:7] == ["Run", "Plan", "Status", "Started", "Took", "Tests", "Headline"]
    cells = dict(zip(headers, sheet.cells()[0], strict=True))
    assert cells["Tests"].startswith("randwrite-4k-iops, randread-4k-iops +4 more")
    assert cells["Headline"] == brief.figures[0]
    row = sheet.document["runs"][0]
    assert row["tests"] == list(brief.tests) and row["headline"] == list(brief.figures)
    assert "Took" not in [c.header for c in runs_sheet([run]).columns]  # without briefs


@pytest.mark.parametrize(
    ("values", "unit"),
    [([50_000.0, 900_000.0], "µs"), ([5e5, 3.2e6], "ms"), ([1e6, 2.5e9], "s"), ([], "µs")],
)
def test_latency_is_shown_in_the_unit_that_fits(values: list[float], unit: str) -> None:
    assert latency_unit(values)[0] == unit


def test_log_axes_have_clean_labelled_ticks() -> None:
    wide = log_axis([60.0, 2_000_000.0], "µs")  # 60 µs .. 2 s: decades only
    assert wide["ticktext"] == ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
    narrow = log_axis([120.0, 900.0], "IOPS")  # under two decades: 1-2-5, each in full
    assert narrow["ticktext"] == ["100", "200", "500", "1k"]
    depths = log_axis([1, 2, 4, 8, 16, 32, 64], at_values=True)
    assert depths["tickvals"] == [1, 2, 4, 8, 16, 32, 64]
    assert wide["minor"] == {"showgrid": False, "ticks": ""}
    assert tick_text(0.5, "ms") == "500 µs" and duration_text(1_550_000) == "1.55 ms"


def test_bars_are_labelled_and_qd1_gets_a_log_axis() -> None:
    chart = bar_chart(
        "b", "IOPS", [Series("read", ["qd1", "qd64"], [2_100.0, 98_000.0])], unit="IOPS"
    )
    (trace,) = chart.figure["data"]
    assert trace["text"] == ["2,100", "98,000"]
    assert chart.figure["layout"]["yaxis"]["type"] == "log"
    close = bar_chart("c", "IOPS", [Series("read", ["a", "b"], [40_000.0, 41_000.0])])
    assert close.figure["layout"]["yaxis"]["type"] == "linear"


def test_fourteen_series_have_fourteen_colours() -> None:
    series = [Series(f"s{i}", [1, 2], [i, i + 1]) for i in range(14)]
    chart = line_chart("l", "lines", series)
    colours = [t["line"]["color"] for t in chart.figure["data"]]
    assert len(set(colours)) == 14 and len(PALETTE) >= 14
    more = line_chart("m", "lines", [Series(f"s{i}", [1], [i]) for i in range(20)])
    styles = {(t["line"]["color"], t["line"]["dash"]) for t in more.figure["data"]}
    assert len(styles) == 20
