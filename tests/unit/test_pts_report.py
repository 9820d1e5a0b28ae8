"""PTS report pages on a recorded PTS run: every chart and table value is a stored one.

The run is stored by the real PTS driver from recorded fio outputs (all eight
tests, reduced: see tests/fixtures/fio/README.md "pts/"), replayed by job name.
Expected values are recomputed here from the stored result rows (and json+ bins
read with ``json.loads``), divided by the unit constant the chart shows.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import TargetError
from volbench.fio.job_text import held_description
from volbench.fio.runner import RawRun, ReplayRunner
from volbench.model import RunRecord, RunStatus, TargetInfo
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.pts import driver, state
from volbench.plans.pts.options import PtsSetup, build
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.report.axis import duration_text
from volbench.report.chart import Chart, traces_values
from volbench.report.document import Section
from volbench.report.export import export
from volbench.report.pts.header import header_notes
from volbench.report.pts.report import pts_sections
from volbench.report.pts.steady import cell_label, variable_label
from volbench.report.pts.throughput import LEGACY_THROUGHPUT, THROUGHPUT_METHOD
from volbench.report.sheet import Sheet, fmt_count, fmt_latency, fmt_rate
from volbench.store.repository import Store
from volbench.targets.identity import identify
from volbench.units import format_seconds
from volbench.views import report_for

RECORDING = FIO_FIXTURES / "pts" / "recording.tar.xz"
MiB = 1 << 20
OPTIONS = {
    "tests": (
        "iops",
        "throughput-1024k",
        "throughput-128k",
        "latency",
        "wsat",
        "hir",
        "xsr",
        "ecw",
        "dirth",
    ),
    "profile": "enterprise",
    "threads": 1,
    "iodepth": 4,
    "cell_seconds": 1.0,
    "max_rounds": 5,
    "wsat_max_rounds": 3,
    "block_sizes": (65536, 4096),
    "mixes": (100, 0),
    "hir_cycles": 2,
    "xsr_cells": 3,
    "toio_grid": (2, 1),
}
"""The options the fixture was recorded with (its command in the fixtures README), but
for Throughput: it was recorded as one test (see :func:`split_throughput`). Latency
is reduced by ``--block-sizes`` and ``--mixes`` to 4 KiB x (100/0, 0/100)."""


def split_throughput(folder: Path) -> None:
    """The recording's Throughput outputs also as those of the two Throughput tests.

    It was recorded when one test ran both block sizes in each round, after one
    purge and WIPC; each block size is a test of its own now (SNIA SSS PTS-E 1.1).
    Every output of that test is kept (a run of the old test replays from it) and
    also written once per block size: the WIPC passes, or that block size's cells,
    named as that test's. fio's figures are unchanged."""
    for path in sorted(folder.glob("*-throughput.*.json")):
        document = json.loads(path.read_text())
        for test, bs in (("throughput-1024k", "1m"), ("throughput-128k", "128k")):
            jobs = [
                {**job, "jobname": job["jobname"].replace("throughput.", f"{test}.", 1)}
                for job in document["jobs"]
                if ".wipc." in job["jobname"] or job["jobname"].endswith(f".{bs}")
            ]
            (folder / f"{path.stem}-{test}.json").write_text(json.dumps({**document, "jobs": jobs}))


def _replayed(tmp: Path, **options: Any) -> RunRecord:
    """A PTS run of the recording, replayed through the driver with these options."""
    if not (tmp / "rec").exists():
        with tarfile.open(RECORDING) as tar:
            tar.extractall(tmp / "rec", filter="data")
        split_throughput(tmp / "rec")
    target = TargetInfo("/dev/replayed", "block", 64 * MiB)
    with Store.open(str(tmp / "store.db")) as store:
        session = Session(store, ReplayRunner(tmp / "rec"), NullReporter(), tmp / "runs")
        purging = PurgeSettings(replay=True)
        outcome = driver.begin(session, build(**{**OPTIONS, **options}), target, {}, None, purging)  # type: ignore[arg-type]
        assert outcome.status is RunStatus.COMPLETED
        return store.get_run(outcome.run_id)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunRecord:
    return _replayed(tmp_path_factory.mktemp("pts"))


@pytest.fixture(scope="module")
def sections(run: RunRecord) -> dict[str, Section]:
    return {s.title.split("PTS ", 1)[1].split(":")[0]: s for s in pts_sections(run)}


def _charts(section: Section) -> dict[str, Chart]:
    return {c.id.split("-pts-", 1)[1]: c for c in section.charts}


PtsRound = dict[str, int]
"""A PTS round: each cell's job name -> the store round (fio process) that ran it."""


def _cell(run: RunRecord, pts_round: PtsRound, name: str, figure: str = "iops") -> float:
    """A cell's figure in one round from the stored rows: IOPS and bytes/s summed
    over directions, mean latency weighted by IOPS."""
    rows = [r for r in run.results if r.round == pts_round[name] and r.test == name]
    assert rows, (pts_round, name)
    if figure == "lat":
        return sum(r.iops * (r.lat_mean_ns or 0) for r in rows) / sum(r.iops for r in rows)
    return sum(r.iops if figure == "iops" else r.bw_bytes_per_s for r in rows)


def _rounds(run: RunRecord, test: str, phase: str) -> list[PtsRound]:
    """The PTS rounds of ``test``'s ``phase``, in order (each cell ran as a fio
    process of its own: a store round each)."""
    setup = run.setup(PtsSetup)
    rounds = state.stored_rounds(run.results, setup.options, setup.active_bytes)
    return [
        {f"{test}.{phase}.{name}": cell.round_no for name, cell in r.cells.items()}
        for r in rounds
        if (r.test, r.phase) == (test, phase)
    ]


def _window(run: RunRecord, test: str) -> list[PtsRound]:
    """The last five steady-state rounds (the fixture's tests stop at steady state or
    at the round limit, so the reported window is the last five either way)."""
    return _rounds(run, test, "ss")[-5:]


def _close(actual: Any, expected: Any) -> bool:
    if actual is None or expected is None:
        return actual is expected
    return math.isclose(float(actual), float(expected), rel_tol=1e-9, abs_tol=1e-12)


def _all_close(actual: list[Any], expected: list[Any]) -> bool:
    return len(actual) == len(expected) and all(map(_close, actual, expected))


def _cell_values(chart: Chart) -> dict[tuple[str, str], float]:
    """A heatmap's values by (row, column) label (rows ``R/W 100/0`` read as
    ``100/0``), from the values it holds for hovering, each also written in its cell."""
    (trace,) = chart.figure["data"]
    found = {}
    for r, row in enumerate(trace["y"]):
        for c, column in enumerate(trace["x"]):
            if trace["customdata"][r][c] is not None:
                found[(row.removeprefix("R/W "), column)] = trace["customdata"][r][c]
                assert trace["text"][r][c]  # the value is written in its cell
    return found


def _first_table(section: Section) -> Sheet:
    """A test page's results table (shown first, above its charts)."""
    return (*section.lead, *section.sheets)[0]


def test_every_test_has_its_page_with_the_pts_header(sections: dict[str, Section]) -> None:
    assert list(sections) == [
        "IOPS",
        "Throughput SEQ 1024 KiB",
        "Throughput SEQ 128 KiB",
        "Latency",
        "WSAT",
        "HIR",
        "XSR",
        "ECW",
        "DIRTH",
        "steady state",
    ]
    for name in ("IOPS", "Latency", "DIRTH"):
        fields = dict(sections[name].header)
        assert fields["Purge"] == "none (replayed fio outputs)"
        assert fields["Preconditioning"].startswith("WIPC")
        assert fields["Active range"] == "100% (64 MiB)"
        assert fields["Data pattern"] == "random (refill_buffers)"
        assert "Write cache" in fields and "Steady state" in fields
        assert fields["TC x QD"] == ("1 x 1" if name == "Latency" else "1 x 4")


def test_iops_charts_and_table_equal_the_stored_results(
    run: RunRecord, sections: dict[str, Section]
) -> None:
    window = _window(run, "iops")
    expected = {
        (mix, bs): sum(_cell(run, n, f"iops.ss.{mix}-{100 - mix}.{bs}") for n in window) / 5
        for mix in (100, 0)
        for bs in ("64k", "4k")
    }
    charts = _charts(sections["IOPS"])
    lines = traces_values(charts["iops-2d"])
    for mix in (100, 0):
        assert _all_close(
            lines[f"R/W {mix}/{100 - mix}"], [expected[mix, "64k"], expected[mix, "4k"]]
        )
    assert charts["iops-2d"].figure["data"][0]["x"] == [64.0, 4.0]  # KiB
    assert charts["iops-2d"].figure["layout"]["xaxis"]["ticktext"] == ["4 KiB", "64 KiB"]
    bars = _cell_values(charts["iops-matrix"])
    label = {"64k": "64 KiB", "4k": "4 KiB"}
    assert bars.keys() == {(f"{m}/{100 - m}", label[bs]) for m, bs in expected}
    for (mix, bs), value in expected.items():
        assert _close(bars[f"{mix}/{100 - mix}", label[bs]], value)
    table = _first_table(sections["IOPS"])
    assert table.cells() == [
        [label[bs], fmt_count(expected[100, bs]), fmt_count(expected[0, bs])]
        for bs in ("64k", "4k")
    ]
    # convergence: every block size at the tracked mix (0/100), every round
    ss = _rounds(run, "iops", "ss")
    convergence = traces_values(charts["iops-convergence"])
    for bs in ("64k", "4k"):
        assert _all_close(
            convergence[f"0-100.{bs}"], [_cell(run, n, f"iops.ss.0-100.{bs}") for n in ss]
        )


def test_window_plots_equal_the_tracked_values(
    run: RunRecord, sections: dict[str, Section]
) -> None:
    chart = _charts(sections["IOPS"])["iops-window0"]  # tracking variable 0-100.4k iops
    values = [_cell(run, n, "iops.ss.0-100.4k") for n in _window(run, "iops")]
    traces = chart.figure["data"]
    measured = next(t for t in traces if t["name"] == "measured")
    assert _all_close(measured["y"], values)
    average = sum(values) / 5
    assert _close(next(t for t in traces if t["name"].startswith("average"))["y"][0], average)
    bands = {t["name"]: t["y"] for t in traces if t.get("fill") == "toself"}
    assert _close(bands["±20% of average"][0], 0.8 * average)
    assert _close(bands["±10% of average"][2], 1.1 * average)
    fit = next(t for t in traces if t["name"].startswith("fit"))
    xs = list(range(5))  # least squares over the window, x = round index
    slope = sum((x - 2) * (v - average) for x, v in zip(xs, values, strict=True)) / 10
    assert _close(fit["y"][-1] - fit["y"][0], 4 * slope)
    steady = sections["steady state"].sheets[0]
    row = next(r for r in steady.rows if r["test"] == "iops" and r["variable"] == "0-100.4k iops")
    assert _close(row["average"], average) and _all_close(row["values"], values)


def test_throughput_and_latency_equal_the_stored_results(
    run: RunRecord, sections: dict[str, Section]
) -> None:
    for test, bs, label in (
        ("throughput-1024k", "1m", "1024 KiB"),
        ("throughput-128k", "128k", "128 KiB"),
    ):
        window = _window(run, test)
        cells = (f"0-100.{bs}", f"100-0.{bs}")
        expected = [
            sum(_cell(run, n, f"{test}.ss.{c}", "bw") for n in window) / 5 / 1e6 for c in cells
        ]
        section = sections[f"Throughput SEQ {label}"]
        bars = traces_values(_charts(section)[f"{test}-bars"])
        assert _all_close(bars["MB/s"], expected)
        table = _first_table(section)
        assert table.cells() == [
            [f"SEQ {label} write", fmt_rate(expected[0])],
            [f"SEQ {label} read", fmt_rate(expected[1])],
        ]
        assert THROUGHPUT_METHOD in table.notes and "SNIA SSS PTS-E 1.1" in THROUGHPUT_METHOD
        assert dict(section.header)["Rounds"] == "5 (at most 5)"
    # each test purged and preconditioned on its own: two WIPCs, rounds of its block size only
    wipc = {r.test.split(".")[0] for r in run.results if ".wipc." in r.test}
    assert {"throughput-1024k", "throughput-128k"} <= wipc
    assert {r.test for r in run.results if r.test.startswith("throughput-128k.ss.")} == {
        "throughput-128k.ss.0-100.128k",
        "throughput-128k.ss.100-0.128k",
    }

    # Latency, reduced by --block-sizes 4k,64k and --mixes 100/0,0/100: 4 KiB x 2 mixes.
    window = _window(run, "latency")
    charts = _charts(sections["Latency"])
    means, maxima = (
        _cell_values(charts["latency-lat_mean_ns"]),
        _cell_values(charts["latency-lat_max_ns"]),
    )
    table = _first_table(sections["Latency"]).cells()
    assert [row[0] for row in table] == ["RND 4 KiB R/W 100/0", "RND 4 KiB R/W 0/100"]
    for index, mix in enumerate((100, 0)):
        name = f"latency.ss.{mix}-{100 - mix}.4k"
        mean = sum(_cell(run, n, name, "lat") for n in window) / 5
        rows = [r for r in run.results if r.test == name and r.round in {n[name] for n in window}]
        top = max(r.lat_max_ns or 0 for r in rows)
        assert _close(means[f"{mix}/{100 - mix}", "4 KiB"], mean / 1e3)
        assert _close(maxima[f"{mix}/{100 - mix}", "4 KiB"], top / 1e3)
        assert table[index][1:3] == [fmt_latency(mean), fmt_latency(top)]
    assert "reduced latency block sizes" in run.settings.non_compliant_reasons


def test_wsat_hir_xsr_equal_the_stored_results(
    run: RunRecord, sections: dict[str, Section]
) -> None:
    samples = _rounds(run, "wsat", "run")
    iops = [_cell(run, n, "wsat.run.0-100.4k") for n in samples]
    written = [
        sum(r.io_bytes for r in run.results if r.test == "wsat.run.0-100.4k" and r.round <= n[k])
        / 1e9
        for n in samples
        for k in n
    ]
    charts = _charts(sections["WSAT"])
    for key in ("wsat-time", "wsat-gb", "wsat-gb-log"):
        assert _all_close(traces_values(charts[key])["IOPS"], iops)
    assert _all_close(charts["wsat-gb"].figure["data"][0]["x"], written)

    idle = _rounds(run, "hir", "idle")
    hir = traces_values(_charts(sections["HIR"])["hir-waits"])
    waits = (5, 10, 15, 25, 50)
    assert _all_close(
        hir["incl. idle"],
        [_cell(run, n, f"hir.idle.w{w}-cycles") for n, w in zip(idle, waits, strict=True)],
    )
    assert _all_close(
        hir["continuous after"],
        [_cell(run, n, f"hir.idle.w{w}-cont") for n, w in zip(idle, waits, strict=True)],
    )
    steady = sum(_cell(run, n, "hir.ss.0-100.4k") for n in _window(run, "hir")) / 5
    assert _all_close(hir["steady state"], [steady] * 5)

    groups = _rounds(run, "xsr", "group")
    charts = _charts(sections["XSR"])
    bw, lat = traces_values(charts["xsr-bw"]), traces_values(charts["xsr-lat"])
    size = _latency_size(charts["xsr-lat"])
    for n, label in zip(groups, ("g1-seq1m", "g2-rnd8k", "g3-seq1m"), strict=True):
        names = [f"xsr.group.{label}.c{c:03d}" for c in (1, 2, 3)]
        assert _all_close(bw[label], [_cell(run, n, name, "bw") / 1e6 for name in names])
        assert _all_close(lat[label], [_cell(run, n, name, "lat") / size for name in names])


def _latency_size(chart: Chart) -> float:
    """ns per unit of the latency a chart plots (the unit chosen for its values)."""
    return {"µs": 1e3, "ms": 1e6, "s": 1e9}[chart.figure["layout"]["meta"]["unit"]]


def test_demand_intensity_and_histograms_equal_the_stored_results(
    run: RunRecord, sections: dict[str, Section]
) -> None:
    for test, title in (("ecw", "ECW"), ("dirth", "DIRTH")):
        (sweep,) = _rounds(run, test, "sweep")
        charts = _charts(sections[title])
        variation = traces_values(charts[f"{test}-variation"])
        intensity = traces_values(charts[f"{test}-intensity"])
        size = _latency_size(charts[f"{test}-intensity"])
        for tc in (1, 2):
            names = [f"{test}.sweep.tc{tc}-qd{qd}" for qd in (1, 2)]
            assert _all_close(variation[f"TC {tc}"], [_cell(run, sweep, n) for n in names])
            assert _all_close(
                intensity[f"TC {tc}"], [_cell(run, sweep, n, "lat") / size for n in names]
            )
        convergence = traces_values(charts[f"{test}-convergence"])
        ss = _rounds(run, test, "ss")
        assert _all_close(convergence["tc2-qd2"], [_cell(run, n, f"{test}.ss.tc2-qd2") for n in ss])

    (sweep,) = _rounds(run, "dirth", "sweep")
    histograms = _charts(sections["DIRTH"])["dirth-histograms"].figure["data"]
    assert histograms
    for trace in histograms:
        cell = trace["name"].split("(")[1].rstrip(")")
        document = json.loads(run.raw_outputs[sweep[f"dirth.sweep.{cell}"]])
        bins = [
            job[d]["lat_ns"]["bins"]
            for job in document["jobs"]
            if job["jobname"] == f"dirth.sweep.{cell}"
            for d in ("read", "write")
            if job[d]["lat_ns"].get("bins")
        ]
        # the share of the point's I/Os in each power-of-two bucket (upper edge >= 1 µs)
        total = sum(sum(b.values()) for b in bins)
        buckets: dict[int, int] = {}
        for found in bins:
            for value, count in found.items():
                edge = 1 << max(int(value).bit_length(), 10)
                buckets[edge] = buckets.get(edge, 0) + count
        shares = dict(zip(trace["x"], trace["y"], strict=True))
        assert sum(shares.values()) == pytest.approx(100)
        for edge, count in buckets.items():
            assert shares[f"≤ {duration_text(edge)}"] == pytest.approx(100 * count / total)


class _CtrlCOnProbe(ReplayRunner):
    """The user presses Ctrl-C during the sequential-write probe: fio gets the SIGINT
    and ends with what it measured (here: nothing), as the subprocess runner reports."""

    def run(self, job_text: str, workdir: Path, *args: Any, **kwargs: Any) -> RawRun:
        assert "seq-write-probe" in job_text
        return RawRun("", 130, "", True, ("fio",))


def test_ctrl_c_during_the_probe_stops_the_run_before_it_is_recorded(tmp_path: Path) -> None:
    with tarfile.open(RECORDING) as tar:
        tar.extractall(tmp_path / "rec", filter="data")
    target = TargetInfo("/dev/replayed", "block", 64 * MiB)
    with Store.open(str(tmp_path / "store.db")) as store:
        runner = _CtrlCOnProbe(tmp_path / "rec")
        session = Session(store, runner, NullReporter(), tmp_path / "runs")
        purging = PurgeSettings(replay=True)
        with pytest.raises(KeyboardInterrupt):
            driver.begin(session, build(**OPTIONS), target, {}, None, purging)  # type: ignore[arg-type]
        assert store.list_runs() == []


class _Probed(ReplayRunner):
    """Counts the fio runs it is asked for (none may come before a refusal)."""

    runs = 0

    def run(self, job_text: str, workdir: Path, *args: Any, **kwargs: Any) -> RawRun:
        self.runs += 1
        return super().run(job_text, workdir, *args, **kwargs)


def test_the_probe_is_checked_as_every_round_is(tmp_path: Path) -> None:
    """The speed probe writes: a target file replaced since it was checked is refused
    before fio starts, as a round's would be (and nothing is recorded); the file as
    checked is written through the descriptor that holds it."""
    with tarfile.open(RECORDING) as tar:
        tar.extractall(tmp_path / "rec", filter="data")
    path = tmp_path / "target.img"
    path.write_bytes(b"\0" * 4096)
    target = TargetInfo(str(path), "file", 64 * MiB, identity=identify(str(path)))
    with Store.open(str(tmp_path / "store.db")) as store:
        runner = _Probed(tmp_path / "rec")
        session = Session(store, runner, NullReporter(), tmp_path / "runs")
        speed = driver.measure_seq_write(
            session, target, 64 * MiB, "psync", tmp_path / "p"
        ).bytes_per_s
        assert speed > 0 and runner.runs == 1
        assert (
            f"description={held_description(str(path))}" in (tmp_path / "p" / "job.fio").read_text()
        )
        other = tmp_path / "other.img"
        other.write_bytes(b"\0" * 4096)
        other.rename(path)  # another file by the same name
        with pytest.raises(TargetError, match="no longer"):
            driver.measure_seq_write(session, target, 64 * MiB, "psync", tmp_path / "p")
        assert runner.runs == 1 and store.list_runs() == []


@pytest.mark.parametrize(
    ("profile", "kind", "cache", "reason"),
    [
        (
            "enterprise",
            "block",
            "write back",
            "write cache write back (the enterprise profile requires it disabled)",
        ),
        ("enterprise", "block", "write through", None),
        (
            "client",
            "block",
            "write through",
            "write cache write through (the client profile requires it enabled)",
        ),
        ("client", "block", "write back", None),
        ("enterprise", "block", None, None),
        ("enterprise", "file", "write back", None),  # the file's device, not the target
    ],
)
def test_write_cache_against_the_profile_is_a_non_compliant_reason(
    run: RunRecord, profile: str, kind: str, cache: str | None, reason: str | None
) -> None:
    options = build(**{**OPTIONS, "profile": profile})  # type: ignore[arg-type]
    target = TargetInfo("/dev/x", kind, 64 * MiB, write_cache=cache)
    settings = driver.settings_for(options, target, 64 * MiB, "psync", "none")
    written = settings.options_as(PtsSetup).write_cache
    assert written == (cache if kind == "block" and cache else "unknown")
    assert (
        (reason in settings.non_compliant_reasons)
        if reason
        else not any("write cache" in r for r in settings.non_compliant_reasons)
    )
    stored = dataclasses.replace(run, settings=settings)
    header = " ".join(header_notes(stored))
    assert f"write cache {written} ·" in header
    if reason:
        assert reason in header.split("NON-COMPLIANT with PTS: ")[1]
        assert reason in " ".join(report_for(stored)[1]["header"])


def test_fewer_rounds_than_a_window_report_steady_state_not_evaluated(tmp_path: Path) -> None:
    with tarfile.open(RECORDING) as tar:
        tar.extractall(tmp_path / "rec", filter="data")
    target = TargetInfo("/dev/replayed", "block", 64 * MiB)
    options = build(**{**OPTIONS, "tests": ("iops", "hir"), "max_rounds": 2})  # type: ignore[arg-type]
    with Store.open(str(tmp_path / "store.db")) as store:
        session = Session(store, ReplayRunner(tmp_path / "rec"), NullReporter(), tmp_path / "runs")
        purging = PurgeSettings(replay=True)
        outcome = driver.begin(session, options, target, {}, None, purging)
        assert outcome.status is RunStatus.COMPLETED
        stored = store.get_run(outcome.run_id)
    assert stored.non_compliant
    reason = "at most 2 rounds: steady state cannot be evaluated (needs a 5-round window)"
    assert reason in stored.settings.non_compliant_reasons
    sheets, document = report_for(stored)
    by_title = {s.title.split(" (")[0].split(":")[0]: s for s in sheets}
    assert reason in " ".join(document["header"])
    for title in ("IOPS", "HIR"):
        assert "steady state not evaluated: 2 rounds (needs a 5-round window)" in " ".join(
            by_title[title].notes
        ), title
    ss_rows = by_title["Steady state"].rows
    assert {r["test"] for r in ss_rows} == {"iops", "hir"}
    for row in ss_rows:
        assert len(row["values"]) == 2 and row["steady"].startswith("not evaluated")
    assert document["steady_state"]["iops"] == {"steady": False, "rounds": 2, "evaluated": False}
    iops_rows = [r for r in stored.results if r.test.startswith("iops.ss.")]
    assert [len(r) for r in _rounds(stored, "iops", "ss")] == [4, 4]  # after WIPC
    by_bs = {row["block_size"]: row for row in by_title["IOPS"].rows}
    cell = [r.iops for r in iops_rows if r.test == "iops.ss.100-0.4k"]
    assert math.isclose(by_bs["4k"]["iops_100"], sum(cell) / 2)


def test_export_has_the_run_record_raw_outputs_and_every_stored_cell(run: RunRecord) -> None:
    sheets, document = report_for(run)
    data = json.loads(export(Sheet("report", (), (), document), "json"))
    assert data["schema"] == "volbench.pts/1" and data["tables"]  # the PTS report's keys
    assert data["id"] == run.id and data["plan"] == "pts" and data["status"] == "completed"
    for key in ("labels", "target", "host", "settings", "error"):
        assert key in data
    assert data["fio_outputs"] == list(run.raw_outputs)
    assert len(data["results"]) == len(run.results)

    (cells,) = [s for s in sheets if s.title == "Every stored cell of every round"]
    assert len(cells.rows) == len(run.results)
    assert {r["phase"] for r in cells.rows} >= {"wipc", "ss", "run", "idle", "group", "sweep"}
    for row in cells.rows:  # fio's own figures, from the stored raw JSON
        name = f"{row['test']}.{row['phase']}.{row['cell']}"
        jobs = json.loads(run.raw_outputs[row["round"]])["jobs"]
        iops = sum(j[row["direction"]]["iops"] for j in jobs if j["jobname"] == name)
        assert math.isclose(row["iops"], iops, rel_tol=1e-9), name
    rounds = {r.round for r in run.results}
    assert {r["round"] for r in cells.rows} == rounds
    # every fio output stored is a cell's but the probe's, stored first without rows
    assert rounds | {driver.PROBE_ROUND} == set(range(len(run.raw_outputs)))
    assert driver.PROBE_ROUND not in rounds
    markdown = export(cells, "markdown").decode()
    assert "Every stored cell of every round" in markdown
    assert len(export(cells, "csv").decode().strip().splitlines()) >= len(run.results) + 1
    assert "Every stored cell of every round" in [t["title"] for t in data["tables"]]


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("0-100.4k iops", "R/W 0/100, 4 KiB, IOPS"),
        ("65-35.64k iops", "R/W 65/35, 64 KiB, IOPS"),
        ("100-0.1m bw", "R/W 100/0, 1024 KiB, bandwidth"),
        ("0-100.512 lat", "R/W 0/100, 512 B, mean response time"),
        ("100-0.4k iops", "R/W 100/0, 4 KiB, IOPS"),
        ("tc2-qd2 iops", "TC 2 x QD 2, IOPS"),
    ],
)
def test_tracking_variables_read_as_mix_block_size_and_figure(name: str, label: str) -> None:
    assert variable_label(name) == label


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5, "5 s"), (1.25, "1.25 s"), (1800, "1,800 s"), (5 / 60, "83 ms"), (0.004, "4 ms")],
)
def test_durations_read_in_s_or_ms(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_steady_state_and_hir_sheets_print_labels_and_durations(run: RunRecord) -> None:
    sheets = {s.title.split(":")[0].split(" (")[0]: s for s in report_for(run)[0]}
    steady = sheets["Steady state"]
    cells = steady.cells()
    column = [c.key for c in steady.columns].index("label")
    shown = {row[column] for row in cells}
    assert "R/W 0/100, 4 KiB, IOPS" in shown and "TC 2 x QD 2, IOPS" in shown
    assert all(r["variable"] and r["label"] == variable_label(r["variable"]) for r in steady.rows)
    hir = sheets["HIR"]
    waits = [row[0] for row in hir.cells()]
    scale = OPTIONS["cell_seconds"] / 60  # type: ignore[operator]
    assert waits == [format_seconds(w * scale) for w in (5, 10, 15, 25, 50)]
    assert waits[0] == "83 ms" and "0.0833" not in " ".join(hir.notes)


def test_latency_runs_the_whole_pts_matrix_when_nothing_reduces_it(tmp_path: Path) -> None:
    run = _replayed(
        tmp_path,
        tests=("latency",),
        block_sizes=(1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512),
        mixes=(100, 95, 65, 50, 35, 5, 0),
    )
    assert not any("latency" in r for r in run.settings.non_compliant_reasons)
    (latency, *_) = report_for(run)[0]
    assert [row[0] for row in latency.cells()] == [
        f"RND {bs} R/W {mix}"
        for mix in ("100/0", "65/35", "0/100")
        for bs in ("512 B", "4 KiB", "8 KiB")
    ]


def test_a_run_of_the_old_single_throughput_test_still_reports(tmp_path: Path) -> None:
    """Runs stored before the block sizes were split: one test, four cells a round."""
    run = _replayed(tmp_path, tests=("throughput",))
    (table, *_) = report_for(run)[0]
    assert table.title == "Throughput" and LEGACY_THROUGHPUT in table.notes
    assert [row[0] for row in table.cells()] == [
        "SEQ 1024 KiB write",
        "SEQ 1024 KiB read",
        "SEQ 128 KiB write",
        "SEQ 128 KiB read",
    ]
    window = _window(run, "throughput")
    expected = sum(_cell(run, n, "throughput.ss.100-0.128k", "bw") for n in window) / 5
    assert _close(table.rows[3]["bw_bytes_per_s"], expected)


def test_a_wsat_run_reports_its_own_preconditioning_limit_and_written_total(
    tmp_path: Path,
) -> None:
    """No WIPC, its sample limit (not the steady-state round limit), no steady-state
    table, and the total written against 4 x the active range (the replayed second
    sample was recorded whole: what it wrote past the target is reported)."""
    run = _replayed(tmp_path, tests=("wsat",), wsat_max_rounds=31)
    header = " ".join(header_notes(run))
    assert "preconditioning: none (wsat)" in header and "WIPC" not in header
    assert "WSAT at most 31 samples" in header and "max rounds" not in header
    assert "SNIA SSS PTS-E 1.1" in header
    sheets, document = report_for(run)
    titles = [s.title for s in sheets]
    assert not any(t.startswith("Steady state") for t in titles)
    assert document["steady_state"] == {}
    wsat = sheets[0]
    written = sum(r.io_bytes for r in run.results if r.test == "wsat.run.0-100.4k")
    over = written - 4 * 64 * MiB
    assert wsat.document["written_bytes"] == written and over > 0
    assert f"the last sample wrote {over / 1e6:,.1f} MB ({over / (4 * 64 * MiB):.2%})" in " ".join(
        wsat.notes
    )
    fields = dict(next(s for s in pts_sections(run) if "WSAT" in s.title).header)
    assert fields["Preconditioning"] == "none (WSAT has no WIPC)"
    assert fields["Samples"] == "2 (at most 31)" and "Rounds" not in fields
    mixed = header_notes(_replayed(tmp_path / "mixed", tests=("iops", "wsat")))
    assert "(iops); none (wsat)" in mixed[1] and "max rounds 5 · WSAT at most 3 samples" in mixed[2]


def test_tables_print_separated_figures_in_units_and_block_sizes_in_bytes_or_kib(
    run: RunRecord,
) -> None:
    sheets = {s.title.split(" (")[0]: s for s in report_for(run)[0]}
    for sheet in sheets.values():
        for row in sheet.cells():
            for text in row:
                assert not re.search(r"\d[eE][+-]\d", text), (sheet.title, text)
    steady = sheets["Steady state"]
    bw = next(r for r in steady.rows if r["variable"] == "0-100.1m bw")
    shown = steady.cells()[steady.rows.index(bw)]
    columns = [c.key for c in steady.columns]
    assert shown[columns.index("unit")] == "MB/s"
    assert shown[columns.index("average_in_unit")] == f"{bw['average'] / 1e6:,.0f}"
    assert bw["average"] > 1e9 and "," in shown[columns.index("average_in_unit")]
    iops = next(r for r in steady.rows if r["variable"] == "0-100.4k iops")
    assert steady.cells()[steady.rows.index(iops)][columns.index("unit")] == "IOPS"
    cells = sheets["Every stored cell of every round"]
    labels = {row[3] for row in cells.cells()}
    assert {"R/W 100/0, 4 KiB", "R/W 0/100, 1024 KiB", "TC 2 x QD 2", "pass 1"} <= labels
    assert not any(re.fullmatch(r"\d+-\d+\.\d+[km]", label) for label in labels)
    assert cell_label("100-0.512") == "R/W 100/0, 512 B"


def test_a_stored_pts_run_replays_from_its_own_outputs(run: RunRecord, tmp_path: Path) -> None:
    """Every fio process of a stored PTS run is in its store, the probe first: its
    outputs alone (as ``volbench export`` or bench/behaviour_snapshot.py keep them) replay
    it with the same results, the same estimate and the same outputs."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    for number, raw in enumerate(run.raw_outputs):
        (folder / f"{number:04d}.json").write_text(raw)
    target = TargetInfo("/dev/replayed", "block", 64 * MiB)
    with Store.open(str(tmp_path / "again.db")) as store:
        session = Session(store, ReplayRunner(folder), NullReporter(), tmp_path / "runs")
        purging = PurgeSettings(replay=True)
        outcome = driver.begin(session, build(**OPTIONS), target, {}, None, purging)  # type: ignore[arg-type]
        again = store.get_run(outcome.run_id)
    assert again.status is RunStatus.COMPLETED
    assert again.raw_outputs == run.raw_outputs
    assert again.settings.options == run.settings.options  # the estimate's speed among them
    assert [r for r in again.results] == [r for r in run.results]


def test_the_estimate_is_read_from_the_stored_probe(run: RunRecord) -> None:
    """The speed the WIPC estimate used is fio's write bandwidth in the probe's output,
    which the run stores (as fio printed it) before its first cell."""
    stored = driver.stored_probe(run)
    assert stored is not None and stored == run.raw_outputs[driver.PROBE_ROUND]
    with tarfile.open(RECORDING) as tar:
        member = tar.extractfile("0000-seq-write-probe.json")
        assert member is not None
        recorded = member.read().decode()
    jobs = json.loads(stored)["jobs"]
    assert [j["jobname"] for j in jobs] == ["seq-write-probe"]
    assert json.loads(stored) == json.loads(recorded)
    bw = sum(j["write"]["bw_bytes"] for j in jobs)
    assert bw > 0
    assert run.setup(PtsSetup).seq_write_bytes_per_s == bw == driver.probe_speed(stored)
    # no PTS cell or round counts it
    assert all(r.round != driver.PROBE_ROUND for r in run.results)
    assert all(
        c.round_no != driver.PROBE_ROUND
        for r in state.stored_rounds(
            run.results, run.setup(PtsSetup).options, run.setup(PtsSetup).active_bytes
        )
        for c in r.cells.values()
    )
