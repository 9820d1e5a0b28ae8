"""Limit verdicts of stored runs: each test with its neighbours, direct twin, stalls and
the host samples stored with its round; show's summary, explain's sheet, check's
limits; an imported run (fio's figures alone) too."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES, fixture_text

from volbench.analysis.aggregate import group_tests
from volbench.analysis.host_series import RoundHost, fact_series, sample_series
from volbench.analysis.limit_evidence import KnownCap, Limit, MeasuredTest
from volbench.analysis.run_limits import FactsOfTest, recorded_caps, run_verdicts
from volbench.fio.job_cpu import job_cpu
from volbench.fio.job_times import job_times
from volbench.fio.parser import parse
from volbench.model import (
    RW,
    HostSample,
    PlaceRecord,
    RunSettings,
    Stall,
    StoredWorkload,
    TargetInfo,
    Workload,
)
from volbench.plans.imported.importing import import_file
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.export import export
from volbench.report.limit_sheets import explain_sheet, facts_of, limits_sheet
from volbench.specs import catalogue
from volbench.store.repository import Store
from volbench.views import report_for, summary_for


def point(
    name: str, iops: float, qd: int, jobs: int = 1, family: str = "randread-4k", direct: bool = True
) -> FactsOfTest:
    lat = qd * jobs / iops * 1e9
    measured = MeasuredTest(name, iops, iops * 4096, lat, qd, jobs, (20.0,) * jobs, direct)
    return FactsOfTest(0, measured, (family, direct))


def test_neighbours_are_the_same_family_at_other_depths() -> None:
    sweep = [point(f"qd{qd}", min(qd * 300.0, 1000.0), qd) for qd in (1, 2, 4, 8, 16)]
    other = point("write", 5000.0, 4, family="randwrite-4k")
    again = point("qd16-again", 990.0, 16)  # the same point measured again: not a neighbour
    found = run_verdicts([*sweep, other, again])
    by_name = {v.facts.measured.name: v for v in found}
    assert {n.iodepth for n in by_name["qd16"].context.neighbours} == {1, 2, 4, 8}
    assert by_name["qd16"].verdict.limit is Limit.RATE_LIMITER
    assert "limited to ~1,000 IOPS" in by_name["qd16"].verdict.evidence[0]
    assert by_name["write"].context.neighbours == ()


def test_a_buffered_test_meets_its_direct_twin() -> None:
    direct = point("randread", 480.0, 1)
    cached = point("buffered.randread", 12_500.0, 1, direct=False)
    found = {v.facts.measured.name: v for v in run_verdicts([direct, cached])}
    assert found["buffered.randread"].context.direct_twin == direct.measured
    assert found["buffered.randread"].verdict.limit is Limit.CACHE


def test_caps_recorded_with_the_round_bind_one_direction() -> None:
    host = RoundHost(facts={"cap_riops": 1000.0, "cap_wbps": 1e6})
    reads = FactsOfTest(0, point("r", 990.0, 16).measured, ("r",), reads=True, host=host)
    assert recorded_caps(reads) == (
        KnownCap("fio's cgroup (read limit on the device)", 1000.0, None),
    )
    mixed = FactsOfTest(0, reads.measured, ("rw",), reads=True, writes=True, host=host)
    assert recorded_caps(mixed) == ()
    (found,) = run_verdicts([reads])
    assert found.verdict.limit is Limit.RATE_LIMITER
    assert found.verdict.evidence[0] == (
        "990 IOPS is 99% of fio's cgroup (read limit on the device)'s cap of 1,000 IOPS"
    )


def test_job_cpu_of_each_job() -> None:
    cpu = job_cpu(fixture_text("numjobs4_jsonplus.json"))
    (values,) = cpu.values()
    assert values == pytest.approx((12.5, 12.7, 13.3, 13.5), abs=0.05)
    assert job_cpu("not fio") == {}


def stored_run(tmp_path: Path) -> tuple[Store, int]:
    """The recorded quick round stored as six rounds (one test each, as the engine does),
    round 1 with samples of a quota that throttled it, round 4 with a stall."""
    store = Store.open(str(tmp_path / "s.db"))
    text = fixture_text("quick/round-000.json")
    tests = group_tests(parse(text))
    target = TargetInfo("/dev/vdz", "block", 1 << 30)
    run_id = store.create_run("quick", target, {"hostname": "h"}, {}, RunSettings())
    document = json.loads(text[text.index("{") :])
    for round_no, test in enumerate(tests):
        one = {**document, "jobs": [j for j in document["jobs"] if j["jobname"] == test.name]}
        deep = test.name.endswith(("iops", "throughput"))
        rw = RW.RANDWRITE if test.name.startswith("randwrite") else RW.RANDREAD
        bs = 16384 if "16k" in test.name else 4096
        work = StoredWorkload.of(Workload(test.name, rw, bs_bytes=bs, iodepth=64 if deep else 1))
        series = []
        if round_no == 1:
            sample = HostSample(
                1000.0, (60.0, 55.0), 40.0, 2, 9000.0, fio_cpu_cores=0.5, fio_wait_threads=0.05
            )
            samples = [dataclasses.replace(sample, time_s=1000.0 + t) for t in range(3)]
            series = sample_series(1, test.name, samples)
            series += fact_series(
                1, test.name, 1000.0, {"cpu_quota": 0.5, "cg_period": 30, "cg_thrott": 28}
            )
        store.add_round(run_id, round_no, json.dumps(one), [test], {test.name: work}, series=series)
    stall = Stall(
        4,
        "randwrite-4k-latency",
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:09+00:00",
        9.0,
        True,
    )
    store.add_stalls(run_id, [stall])
    return store, run_id


def test_a_stored_run_gets_a_verdict_per_test(tmp_path: Path) -> None:
    store, run_id = stored_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    facts = facts_of(run)
    assert [f.round for f in facts] == [0, 1, 2, 3, 4, 5]
    assert facts[1].measured.job_cpu_pct == pytest.approx((3.796034 + 38.640227,))
    assert facts[1].host is not None and facts[0].host is None
    sheet = limits_sheet(run)
    assert sheet is not None
    rows = {r["test"]: r for r in sheet.rows}
    assert rows["randread-4k-iops"]["limit"] == "host CPU"
    assert rows["randread-4k-iops"]["why"] == (
        "the 0.5-core CPU quota of fio's cgroup throttled it in 93% of its scheduling periods"
        " (cpu.stat); fio's processes used 0.50 cores"
    )
    assert rows["randread-4k-iops"]["host"]["cpu_busy_pct"] == pytest.approx(57.5)
    assert rows["randwrite-4k-latency"]["limit"] == "stall"
    assert rows["randread-4k-latency"]["limit"] == "queue"
    assert rows["randwrite-4k-iops"]["host"] == {}  # not sampled
    sheets, document = report_for(run)
    titles = [s.title for s in sheets]  # the limits, then the figures marked not the volume's
    assert titles[-2:] == [
        f"volbench run {run_id}: what limited each test",
        f"volbench run {run_id}: figures that are not the volume's",
    ]
    assert [r["limit"] for r in document["limits"]] == [r["limit"] for r in sheet.rows]
    assert {s["kind"] for s in document["host_series"]} >= {"cpu", "cpu_quota", "fio_cpu"}


def test_explain_names_every_sentence(tmp_path: Path) -> None:
    store, run_id = stored_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    sheet = explain_sheet(run)
    assert len(sheet.rows) > len(sheet.document["tests"]) == 6
    first = next(r for r in sheet.rows if r["test"] == "randread-4k-latency")
    assert first["limit"] == "queue" and first["evidence"].startswith("1 I/O in flight at a time")
    text = export(sheet, "markdown").decode()
    assert "| randwrite-4k-latency |" in text and "0 IOPS for 9 s" in text


def test_an_imported_run_is_explained_from_fio_figures(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / "text_around_json_jsonplus.txt", {}))
    sheet = explain_sheet(run)
    (test,) = sheet.document["tests"]
    assert test["limit"] == "queue"  # psync asked for QD 8: Little's law
    assert test["evidence"][0].startswith("fio kept 1.0 of 8 configured I/Os in flight")
    assert sheet.notes[0].startswith("no host or device samples: an imported fio output holds")


def test_a_run_on_other_hosts_says_why_it_has_no_samples(tmp_path: Path) -> None:
    """fio ran elsewhere: the note says why (not "imported, or from an older volbench")."""
    with Store.open(str(tmp_path / "s.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / "text_around_json_jsonplus.txt", {}))
    places = (PlaceRecord("h1:/dev/vdb", "h1", "/dev/vdb", None),)
    remote = dataclasses.replace(
        run, plan="sweep", settings=dataclasses.replace(run.settings, places=places)
    )
    note = explain_sheet(remote).notes[0]
    assert note.startswith("no host or device samples: h1 runs only fio's server; volbench has no")


def test_check_names_the_volume_cap(tmp_path: Path) -> None:
    store, run_id = stored_run(tmp_path)
    with store:
        run = store.get_run(run_id)
    iops = run.results[0].iops  # randwrite-4k-iops, as if it were the volume's cap
    request = CheckRequest("aws-io1", 1000, provisioned={"provisioned_iops": iops})
    sheet = check_sheet(run, catalogue.load(()), request)
    limits = {r["test"]: r for r in sheet.document["limits"]}
    assert limits["randwrite-4k-iops"]["limit"] == "rate limiter"
    assert (
        "of the AWS" in limits["randwrite-4k-iops"]["why"]
        and "volume's cap" in (limits["randwrite-4k-iops"]["why"])
    )
    assert any(n.startswith("randwrite-4k-iops: limited by rate limiter (") for n in sheet.notes)


def test_the_summary_has_a_line_per_limit(tmp_path: Path) -> None:
    store, run_id = stored_run(tmp_path)
    with store:
        run, listed = store.get_run(run_id), store.get_run(run_id, raw=False)
    lines = summary_for(run, check=False).limits
    assert lines[0] == (
        "limit not determined for randwrite-4k-iops, randwrite-16k-throughput,"
        " randread-16k-throughput: fio's busiest job used 18% of a core"
    )
    assert any(
        line.startswith("limited by host CPU: randread-4k-iops: the 0.5-core") for line in lines
    )
    assert "limited by stall: randwrite-4k-latency: 0 IOPS for 9 s" in "\n".join(lines)
    assert summary_for(listed, check=False).limits == ()  # a list of runs reads no outputs


def _cell(name: str, rw: str, read: float, write: float, mix: int | None = None) -> FactsOfTest:
    """A PTS-like 64 KiB cell at QD 4 x 2 threads, its queue kept full."""
    total = read + write
    measured = MeasuredTest(
        name, total, total * 65536, 8 / total * 1e9, 4, 2, (5.0, 5.0), True, read, write
    )
    family = (rw, 65536, None, mix, True, "libaio", None, None, None)
    pure = ("randread", 65536, None, None, True, "libaio", None, None, None)
    alone = (pure, ("randwrite", *pure[1:])) if rw == "randrw" else None
    return FactsOfTest(0, measured, family, reads=read > 0, writes=write > 0, alone=alone)


def test_a_mix_meets_the_caps_its_read_only_and_write_only_tests_show() -> None:
    """Read cap 5,000, write cap 3,000 (no samples: only the run's own tests tell)."""
    read, write = _cell("r", "randread", 5000, 0), _cell("w", "randwrite", 0, 3000)
    mix = _cell("m", "randrw", 5005, 2695, 65)
    by_name = {v.facts.measured.name: v for v in run_verdicts([read, mix, write])}
    found = by_name["m"]
    assert [c.label for c in found.context.caps] == [
        "the read-only test r, reads alone",
        "the write-only test w, writes alone",
    ]
    assert found.verdict.limit is Limit.RATE_LIMITER
    assert found.verdict.evidence == (
        "the reads of this mix, 5,005 IOPS of 7,700 IOPS, are 100% of their own cap of 5,000 IOPS"
        " (the read-only test r, reads alone): a rate limiter holds the reads",
    )
    # one budget both share: the mix does no more than reads alone, no cap of its own
    shared = _cell("m", "randrw", 650, 350, 65)
    one = {
        v.facts.measured.name: v for v in run_verdicts([_cell("r", "randread", 1000, 0), shared])
    }
    assert one["m"].context.caps == ()
    assert one["m"].verdict.limit is not Limit.RATE_LIMITER


def test_a_mix_meets_the_cgroup_caps_of_each_direction() -> None:
    host = RoundHost(facts={"cap_riops": 5000.0, "cap_wiops": 3000.0})
    mix = dataclasses.replace(_cell("m", "randrw", 4990, 2690, 65), host=host)
    (found,) = run_verdicts([mix])
    assert found.context.caps == (
        KnownCap("fio's cgroup, read limit on the device", 5000.0, None, "read"),
        KnownCap("fio's cgroup, write limit on the device", 3000.0, None, "write"),
    )
    assert found.verdict.limit is Limit.RATE_LIMITER
    assert found.verdict.evidence[0].startswith("the reads of this mix, 4,990 IOPS of 7,680")


def test_the_report_decodes_each_raw_output_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The validity marks and the limits sheet both read each round's job times: the
    report decodes each stored output once (and again for a run read anew)."""
    from volbench.analysis import run_validity

    decoded: list[str] = []

    def counted(text: str) -> run_validity.JobTimes:
        decoded.append(text)
        return job_times(text)

    monkeypatch.setattr(run_validity, "job_times", counted)
    store, run_id = stored_run(tmp_path)
    with store:
        run = store.get_run(run_id)
        again = store.get_run(run_id)
    report_for(run)
    report_for(run)
    assert len(decoded) == len(run.raw_outputs) == 6
    report_for(again)
    assert len(decoded) == 12
