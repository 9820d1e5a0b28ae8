"""The charts of a ``volbench run limits`` run (report/limits_charts.py): a run stored
from the simulated limiter of test_limiter_model.py, its limits card, and the charts
drawn from the card's one fit: each probe a point, each fitted cap a level line named
with the card's own figure."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from test_export import result
from test_limiter_model import Limiter, experiment

from volbench.analysis.limiter_model import KIB, MBPS_TEST, Probe, fit, settled, size_ladder
from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
)
from volbench.plans import limits
from volbench.records import RecordError, json_object
from volbench.report.chart import Chart
from volbench.report.html import render_html
from volbench.report.limits_card import card_fit, limits_card, stored_probes
from volbench.report.limits_charts import limits_charts
from volbench.report.sheet import Sheet
from volbench.testbed import TargetInfo
from volbench.views import report_document, view

CAPPED = Limiter(
    read_iops=3000, write_iops=2000, read_bps=3000 * 48 * KIB, write_bps=2000 * 48 * KIB
)
"""Separate read and write IOPS and MB/s caps (MB/s caps of 48 KiB per capped I/O: no
power of two, so no I/O unit); the device behind them is far faster."""

TITLES = [
    "IOPS vs queue depth (4 KiB)",
    "Mean latency vs queue depth (4 KiB)",
    "MB/s vs request size (deep queue)",
    "IOPS vs request size (deep queue)",
]


def _rows(round_no: int, probe: Probe) -> list[StoredResult]:
    """The stored result rows of one test of the experiment (a row per direction)."""
    rw = limits.DIRECTIONS[probe.direction].value
    bw = probe.bytes_per_s
    workload = StoredWorkload(rw=rw, bs_bytes=probe.bs_bytes, iodepth=probe.outstanding, numjobs=1)
    return [
        result(
            iops,
            probe.lat_mean_ns,
            round=round_no,
            test=probe.name,
            direction=direction,
            workload=workload,
            bw_bytes_per_s=bw * iops / probe.iops,
            io_bytes=int(bw * iops / probe.iops * 10),
            runtime_ms=10_000,
            usr_cpu_pct=1.0,
            sys_cpu_pct=2.0,
        )
        for direction, iops in (("read", probe.read_iops), ("write", probe.write_iops))
        if iops > 0
    ]


def _run(limiter: Limiter, seed: int = 1) -> tuple[RunRecord, list[Probe]]:
    """A limits run as the store gives it back: the experiment on ``limiter``, each
    test a round of its own."""
    _, done = experiment(limiter, seed)
    results = tuple(row for i, probe in enumerate(done) for row in _rows(i, probe))
    return limits_record(results), done


def limits_record(results: tuple[StoredResult, ...], **more: Any) -> RunRecord:
    """A completed limits run of ``results`` (its plan's usual options), as the store
    gives it back; ``more``: its other fields (outputs, rounds, series)."""
    return RunRecord(
        id=9,
        plan=limits.NAME,
        status=RunStatus.COMPLETED,
        started_at="2026-11-26T00:00:00+00:00",
        ended_at="2026-11-26T00:05:00+00:00",
        target=TargetInfo("/dev/vdb", "block", 1 << 30),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(options={limits.NAME: json_object(limits.LimitsOptions())}),
        results=results,
        **more,
    )


def _charts(card: Sheet) -> dict[str, Chart]:
    return {chart.title: chart for chart in limits_charts(card)}


def _trace(chart: Chart, name: str) -> dict[str, Any]:
    return next(t for t in chart.figure["data"] if t["name"] == name)


def _levels(chart: Chart) -> dict[str, float]:
    """Each level line's name and its height (the shape's y, in the chart's units)."""
    layout = chart.figure["layout"]
    lines = [s for s in layout.get("shapes", []) if s["y0"] == s["y1"]]
    names = [a for a in layout.get("annotations", []) if a["xref"] == "paper"]
    assert len(lines) == len(names)
    return {a["text"]: s["y0"] for a, s in zip(names, lines, strict=True)}


def _figure(card: Sheet, name: str) -> str:
    """The card's figure ``name`` as the card shows it (``3,012 IOPS``)."""
    return str(next(r["value"] for r in card.rows if r["figure"] == name))


def _ladder(done: list[Probe], direction: str) -> list[Probe]:
    return sorted(
        (p for p in done if p.direction == direction and p.bs_bytes == 4 * KIB),
        key=lambda p: p.outstanding,
    )


def _sizes(done: list[Probe], direction: str) -> list[Probe]:
    return size_ladder(settled(done), direction)


def test_the_card_keeps_its_probes_and_model_for_the_charts() -> None:
    run, _ = _run(CAPPED)
    card = limits_card(run)
    probes = stored_probes(run, {})
    assert card_fit(card) == (probes, fit(probes))
    # the document as JSON (``volbench report --format json``) reads back the same
    stored = Sheet(card.title, card.columns, card.rows, json.loads(json.dumps(card.document)))
    assert card_fit(stored) == (probes, fit(probes))
    with pytest.raises(RecordError, match="the limits card's probes"):
        card_fit(Sheet(card.title, card.columns, card.rows, {"run": run.id}))


def test_iops_against_queue_depth_with_each_iops_cap_drawn() -> None:
    run, done = _run(CAPPED)
    card = limits_card(run)
    charts = _charts(card)
    assert list(charts) == TITLES
    chart = charts["IOPS vs queue depth (4 KiB)"]
    assert chart.id == "run9-limits-qd-iops"
    assert [t["name"] for t in chart.figure["data"]] == ["read", "write"]
    for direction in ("read", "write"):
        ladder = _ladder(done, direction)
        trace = _trace(chart, direction)
        assert trace["x"] == [p.outstanding for p in ladder] and trace["x"][0] == 1
        assert trace["y"] == pytest.approx([p.iops for p in ladder])
    model = fit(done)
    assert model.read.iops_cap is not None and model.write.iops_cap is not None
    read = f"read IOPS cap {_figure(card, 'read IOPS cap').removesuffix(' IOPS')}"
    write = f"write IOPS cap {_figure(card, 'write IOPS cap').removesuffix(' IOPS')}"
    levels = _levels(chart)
    assert levels == {read: model.read.iops_cap.value, write: model.write.iops_cap.value}
    assert levels[read] == pytest.approx(3000, rel=0.05)
    assert levels[write] == pytest.approx(2000, rel=0.05)
    layout = chart.figure["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["xaxis"]["ticktext"][0] == "1"
    assert layout["yaxis"]["rangemode"] == "tozero"
    # each level in its series' colour, the read one named at the left, the write at the right
    notes = {a["text"]: a for a in layout["annotations"]}
    assert notes[read]["x"] == 0 and notes[write]["x"] == 1
    assert notes[read]["font"]["color"] == _trace(chart, "read")["line"]["color"]
    assert notes[write]["font"]["color"] == _trace(chart, "write")["line"]["color"]


def test_latency_against_queue_depth_grows_by_one_over_the_cap() -> None:
    run, done = _run(CAPPED)
    card = limits_card(run)
    chart = _charts(card)["Mean latency vs queue depth (4 KiB)"]
    model = fit(done)
    assert model.read.iops_cap is not None and model.write.iops_cap is not None
    caps = {"read": model.read.iops_cap.value, "write": model.write.iops_cap.value}
    assert chart.figure["layout"]["meta"]["unit"] == "ms"  # QD 16 at 2,000 IOPS: 8 ms
    names = [t["name"] for t in chart.figure["data"]]
    assert names == [
        "read",
        "write",
        f"read: QD / {caps['read']:,.0f} IOPS",
        f"write: QD / {caps['write']:,.0f} IOPS",
    ]
    for direction, cap in caps.items():
        ladder = _ladder(done, direction)
        measured = _trace(chart, direction)
        assert measured["y"] == pytest.approx([p.lat_mean_ns / 1e6 for p in ladder])
        fitted = _trace(chart, f"{direction}: QD / {cap:,.0f} IOPS")
        assert fitted["x"] == [p.outstanding for p in ladder]
        assert fitted["y"] == pytest.approx([p.outstanding / cap * 1e3 for p in ladder])
        assert fitted["line"]["dash"] == "dash" and fitted["mode"] == "lines"
        # the limiter's latency: the measured points lie on QD / cap (Little's law)
        assert measured["y"] == pytest.approx(fitted["y"], rel=0.05)


def test_mb_per_s_and_iops_against_request_size_with_the_caps_drawn() -> None:
    run, done = _run(CAPPED)
    card = limits_card(run)
    charts = _charts(card)
    model = fit(done)
    mbps, iops = charts["MB/s vs request size (deep queue)"], charts[TITLES[3]]
    assert (mbps.id, iops.id) == ("run9-limits-size-mbps", "run9-limits-size-iops")
    for direction in ("read", "write"):
        sizes = _sizes(done, direction)
        name = f"{direction} at QD {sizes[0].outstanding}"
        assert [p.bs_bytes for p in sizes][:3] == [4 * KIB, 16 * KIB, 32 * KIB]
        assert _trace(mbps, name)["x"] == [p.bs_bytes / KIB for p in sizes]
        assert _trace(mbps, name)["y"] == pytest.approx([p.bytes_per_s / 1e6 for p in sizes])
        assert _trace(iops, name)["y"] == pytest.approx([p.iops for p in sizes])
        (tested,) = [p for p in done if p.direction == MBPS_TEST[direction]]
        point = _trace(mbps, f"{direction} MB/s test at QD {tested.outstanding}")
        assert (point["x"], point["y"]) == ([tested.bs_bytes / KIB], [tested.bytes_per_s / 1e6])
    assert model.read.bytes_cap is not None and model.write.bytes_cap is not None
    read = f"read MB/s cap {_figure(card, 'read MB/s cap').removesuffix(' MB/s')}"
    write = f"write MB/s cap {_figure(card, 'write MB/s cap').removesuffix(' MB/s')}"
    levels = _levels(mbps)
    assert levels == {
        read: model.read.bytes_cap.value / 1e6,
        write: model.write.bytes_cap.value / 1e6,
    }
    assert levels[read] == pytest.approx(3000 * 48 * KIB / 1e6, rel=0.05)
    assert levels[write] == pytest.approx(2000 * 48 * KIB / 1e6, rel=0.05)
    assert model.read.iops_cap is not None and model.write.iops_cap is not None
    assert _levels(iops) == {
        f"read IOPS cap {model.read.iops_cap.value:,.0f}": model.read.iops_cap.value,
        f"write IOPS cap {model.write.iops_cap.value:,.0f}": model.write.iops_cap.value,
    }
    for chart in (mbps, iops):  # sizes in KiB on a log axis, ticked at the sizes measured
        axis = chart.figure["layout"]["xaxis"]
        assert axis["type"] == "log" and axis["ticktext"][:3] == ["4", "16", "32"]
        assert chart.figure["layout"]["yaxis"]["type"] == "log"


def test_a_whole_mib_is_ticked_in_full() -> None:
    run, done = _run(Limiter(read_iops=1000, write_iops=800))  # no MB/s cap: 1 MiB measured
    charts = _charts(limits_card(run))
    ticks = charts["MB/s vs request size (deep queue)"].figure["layout"]["xaxis"]["ticktext"]
    assert ticks[-1] == "1,024" and 1024 * KIB in {p.bs_bytes for p in done}


def test_no_cap_is_drawn_where_the_card_found_none() -> None:
    run, done = _run(Limiter(device_lat_s=200e-6, device_iops=1e9), seed=3)
    card = limits_card(run)
    model = fit(done)
    assert model.read.iops_cap is None and model.read.bytes_cap is None
    assert model.write.iops_cap is None and model.write.bytes_cap is None
    charts = _charts(card)
    assert all(not _levels(chart) for chart in charts.values())
    latency = charts["Mean latency vs queue depth (4 KiB)"]
    assert [t["name"] for t in latency.figure["data"]] == ["read", "write"]
    assert [t["name"] for t in charts["IOPS vs queue depth (4 KiB)"].figure["data"]] == [
        "read",
        "write",
    ]


def test_a_run_without_its_ladders_has_no_charts() -> None:
    run, _ = _run(CAPPED)
    burst = tuple(r for r in run.results if r.test.startswith("burst-"))
    assert burst and limits_charts(limits_card(dataclasses.replace(run, results=burst))) == []


def test_the_html_report_of_a_limits_run_shows_the_charts() -> None:
    run, _ = _run(CAPPED)
    assert view(run.plan).charts is limits_charts
    document = report_document([run])
    ids = [c.id for c in document.charts()]
    ours = [
        "run9-limits-qd-iops",
        "run9-limits-qd-latency",
        "run9-limits-size-mbps",
        "run9-limits-size-iops",
    ]
    assert ids[:4] == ours  # the plan's own charts first, then the fio run's
    page = render_html(document).decode()
    divs = re.findall(r'<div class="chart" id="([^"]+)"[^>]*>', page)
    assert divs[:4] == ours
    figures = json.loads(
        page.split('id="volbench-figures">')[1].split("</script>")[0].replace("<\\/", "</")
    )
    assert [figures[i]["layout"]["title"]["text"] for i in ours] == TITLES
    cap = fit(stored_probes(run, {})).read.iops_cap
    assert cap is not None
    notes = figures["run9-limits-qd-iops"]["layout"]["annotations"]
    assert f"read IOPS cap {cap.value:,.0f}" in [n["text"] for n in notes]
    assert "what limits this volume" in page  # the card beside them
