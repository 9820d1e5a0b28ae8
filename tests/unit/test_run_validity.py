"""The validity of every test of a stored run (analysis/run_validity.py) and where it
shows: the device's counters read over the test's own seconds (its ramp, fio's start
and another round's I/O left out), the checks each run on what a test has and saying
what they could not check (an imported output), and the views: show's tables and
JSON, check's "not judged", explain's evidence."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from recorded import fixture_text

from validity_facts import MiB, row, workload
from volbench.analysis.device_window import FioRate, device_count
from volbench.analysis.host_series import sample_series
from volbench.analysis.run_validity import CHECKS, facts_of_tests, front_cache, validity_of
from volbench.analysis.test_windows import CLOSE_S, ROUNDED_S, Window, timed_window
from volbench.analysis.validity import MarkKind
from volbench.analysis.validity_facts import Known
from volbench.analysis.written_ranges import RunWrites
from volbench.fio.job_times import JobTimes, job_times
from volbench.model import (
    HostInfo,
    HostSample,
    LogSeries,
    RoundTimes,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    TargetInfo,
)
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.validity_sheets import evidence_sheet
from volbench.specs import catalogue
from volbench.views import report_for

END_S = 1_795_900_000.0
"""When each made-up round's fio wrote its output (Unix s)."""
IOPS = 2000.0
RUNTIME_S = 10.0
RAMP_S = 2.0


def fio_output(tests: dict[str, float], end_s: float = END_S, cpu: float = 10.0) -> str:
    """A local fio output ending at ``end_s`` whose tests ran ``elapsed`` s each."""
    jobs = [
        {"jobname": name, "elapsed": elapsed, "usr_cpu": cpu / 2, "sys_cpu": cpu / 2}
        for name, elapsed in tests.items()
    ]
    return json.dumps({"fio version": "fio-3.33", "timestamp_ms": int(end_s * 1000), "jobs": jobs})


def samples(
    read_bytes_per_s: float,
    *,
    before: float = 0.0,
    from_s: float = END_S - RUNTIME_S - RAMP_S - 1,
    to_s: float = END_S + 1,
) -> list[HostSample]:
    """The device each second from ``from_s`` to ``to_s``: reading ``read_bytes_per_s``
    while fio's test runs, ``before`` until its timed part began."""
    start = END_S - RUNTIME_S
    return [
        HostSample(
            time_s=t,
            cpu_busy_pct=(20.0, 20.0),
            iops=(before if t <= start else read_bytes_per_s) / 4096,
            read_bytes_per_s=before if t <= start else read_bytes_per_s,
            write_bytes_per_s=0.0,
            fio_cpu_cores=0.2,
            fio_wait_threads=0.0,
        )
        for t in (from_s + i for i in range(int(to_s - from_s) + 1))
    ]


def logged(test: str, values: list[float], round_no: int = 0) -> LogSeries:
    points = tuple((1000 * (i + 1), v) for i, v in enumerate(values))
    return LogSeries(round_no, test, "iops", 0, None, "read", points)


def run_of(
    results: list[StoredResult],
    host: list[HostSample],
    *,
    plan: str = "sweep",
    raw: str | None = None,
    logs: tuple[LogSeries, ...] = (),
    options: dict[str, object] | None = None,
) -> RunRecord:
    rounds = sorted({r.round for r in results})
    outputs = [
        fio_output({r.test: RUNTIME_S + RAMP_S + 1 for r in results if r.round == n})
        for n in rounds
    ]
    return RunRecord(
        id=7,
        plan=plan,
        status=RunStatus.COMPLETED,
        started_at="2026-11-28T00:00:00+00:00",
        ended_at="2026-11-28T00:01:00+00:00",
        target=TargetInfo("/dev/loop9", "block", 256 * MiB),
        host=HostInfo("here", 2, "cpu", 24 << 30, "6.1", "fio-3.33"),
        labels={},
        settings=RunSettings(options=options or {}),
        results=tuple(results),
        raw_outputs=tuple(outputs) if raw is None else (raw,),
        rounds=tuple(RoundTimes(n, None, None, "2026-11-28T00:01:00+00:00") for n in rounds),
        series=(*sample_series(0, "t", host), *logs),
        uuid="u-7",
    )


def reads(test: str = "t", iops: float = IOPS, round_no: int = 0, **given: object) -> StoredResult:
    work = workload(ramp_time_s=RAMP_S, **given)
    return row("read", iops, work, RUNTIME_S, test=test, round_no=round_no)


def test_a_test_alone_on_its_device_is_valid() -> None:
    run = run_of([reads()], samples(IOPS * 4096))
    ((key, found),) = validity_of(run).items()
    assert key == (0, "t") and found.valid
    (facts,) = facts_of_tests(run)
    device = facts.device
    assert device is not None and device.device_read_bytes == pytest.approx(device.fio_read_bytes)
    assert device.seconds == 8.0  # the whole samples inside the 10 s less its margins


def test_another_process_during_the_test_is_marked_and_before_it_is_not() -> None:
    shared = run_of([reads()], samples(3 * IOPS * 4096))
    (mark,) = validity_of(shared)[(0, "t")].marks
    assert mark.kind is MarkKind.SHARED and mark.figures["seconds"] == 8.0
    # another process's reads during fio's ramp and start are outside the seconds fio counted
    ramp = run_of([reads()], samples(IOPS * 4096, before=50 * IOPS * 4096))
    assert validity_of(ramp)[(0, "t")].valid


def test_a_cache_in_front_of_the_device() -> None:
    cached = run_of([reads()], samples(0.01 * IOPS * 4096))
    (mark,) = validity_of(cached)[(0, "t")].marks
    assert mark.kind is MarkKind.CACHE and mark.figures["device_share"] == pytest.approx(0.01)


def test_each_test_of_a_round_is_read_over_its_own_seconds() -> None:
    # two tests one after the other in one fio process: the first ended 12 s before the
    # second (their elapsed), each read at its own rate
    first, second = reads("a", 1000.0), reads("b", 4000.0)
    raw = fio_output({"a": 12.0, "b": 24.0})
    host = [
        dataclasses.replace(
            s, read_bytes_per_s=(1000.0 if s.time_s <= END_S - 12 else 4000.0) * 4096
        )
        for s in samples(0.0, from_s=END_S - 25, to_s=END_S + 1)
    ]
    found = validity_of(run_of([first, second], host, raw=raw))
    assert found[(0, "a")].valid and found[(0, "b")].valid
    facts = {f.test: f for f in facts_of_tests(run_of([first, second], host, raw=raw))}
    assert facts["a"].device is not None and facts["a"].device.tests == ("a",)


def test_tests_run_together_share_the_device() -> None:
    together = [reads("a", 1000.0), reads("b", 3000.0)]
    host = samples(4000.0 * 4096)
    raw = fio_output({"a": 13.0, "b": 13.0})
    for found in validity_of(run_of(together, host, raw=raw)).values():
        assert found.valid, found.marks  # fio's side adds both tests' I/O


def test_an_imported_output_says_what_it_could_not_check() -> None:
    imported = run_of([reads()], [], plan="import")
    found = validity_of(imported)[(0, "t")]
    assert found.valid
    assert "the device's reads: no device samples: an output imported from fio" in (found.unchecked)
    assert "a mixed average: no per-second log: an output imported from fio" in found.unchecked
    assert any("the host's CPU: not sampled" in u for u in found.unchecked)
    buffered = run_of([reads(direct=False)], [], plan="import")
    assert validity_of(buffered)[(0, "t")].kinds == (MarkKind.CACHE,)  # its job options say


def test_the_per_second_log_shows_a_step() -> None:
    logs = (logged("t", [1000.0] * 6 + [3000.0] * 6),)
    (mark,) = validity_of(run_of([reads()], samples(IOPS * 4096), logs=logs))[(0, "t")].marks
    assert mark.kind is MarkKind.MIXED and [p.value for p in mark.parts] == [1000.0, 3000.0]


def test_windows_from_each_time_fio_gives() -> None:
    alone = timed_window("t", 10.0, 2.0, JobTimes(timestamp_ms=END_S * 1000), True)
    assert alone == Window(END_S - 10, END_S, CLOSE_S, "fio's end of the round (timestamp_ms)")
    started = JobTimes(start_ms={"t": (END_S - 20) * 1000}, timestamp_ms=END_S * 1000)
    assert timed_window("t", 10.0, 2.0, started, True) == Window(
        END_S - 18, END_S - 8, CLOSE_S, "fio's job_start"
    )
    client = JobTimes(elapsed_s={"t": 13.0}, timestamp_ms=END_S * 1000, client=True)
    placed = timed_window("t", 10.0, 2.0, client, True)
    assert placed is not None and placed.end_s == END_S + 13 and placed.margin_s > ROUNDED_S
    stored = timed_window("t", 10.0, 0.0, JobTimes(), True, "2026-11-28T00:00:10+00:00")
    assert stored is not None and stored.margin_s == ROUNDED_S
    assert timed_window("t", 10.0, 0.0, JobTimes(), False) is None


def test_job_times_read_from_fio_json() -> None:
    text = "note: fio says\n" + fio_output({"a": 3.0, "b": 7.0}, cpu=30.0)
    times = job_times(text)
    assert times.elapsed_s == {"a": 3.0, "b": 7.0}
    assert times.cpu_pct == {"a": (30.0,), "b": (30.0,)}
    assert times.timestamp_ms == END_S * 1000 and not times.client
    assert job_times("not json") == JobTimes()


def test_job_times_of_an_output_parsed_here_are_not_decoded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parser keeps the times of each output it decodes (a round, as it is
    committed): the run's report then reads them without decoding the output again,
    the same times as decoded anew; an output never parsed is decoded as before."""
    from volbench.fio import job_times as module
    from volbench.fio.parser import parse

    parsed = fixture_text("numjobs4_jsonplus.json")
    other = "note: fio says\n" + fio_output({"a": 3.0, "b": 7.0}, cpu=30.0)
    fresh = job_times(parsed)
    parse(parsed)
    decoded: list[str] = []
    original = module.load

    def load(text: str) -> dict[str, Any]:
        decoded.append(text)
        return original(text)

    monkeypatch.setattr(module, "load", load)
    assert job_times(parsed) == fresh and fresh.elapsed_s
    assert decoded == []
    assert job_times(other).elapsed_s == {"a": 3.0, "b": 7.0}
    assert decoded == [other]


def test_too_few_whole_seconds_are_not_compared() -> None:
    window = Window(END_S - 2.0, END_S, CLOSE_S, "fio's end of the round (timestamp_ms)")
    rate = FioRate("t", window, IOPS * 4096, 0.0, IOPS)
    why = device_count(samples(IOPS * 4096), rate)
    assert isinstance(why, str) and "cover 0.0 s of the test's 2.0 s" in why


def test_a_recorded_cache_mode_is_read_from_the_settings() -> None:
    run = run_of([reads()], samples(IOPS * 4096), options={"cache_mode": "writeback"})
    cache = front_cache(run)
    assert cache is not None and cache.mode == "writeback" and cache.size_bytes is None
    sized = {"cache_mode": {"mode": "writeback", "bytes": 1 << 30, "what": "the host's cache"}}
    found = validity_of(run_of([reads()], samples(IOPS * 4096), options=sized))[(0, "t")]
    assert found.kinds == (MarkKind.CACHE,)  # 64 MiB inside 1 GiB
    assert "the run records the host's cache" in found.marks[0].evidence[0]


def test_the_checks_are_an_explicit_tuple() -> None:
    assert [c.__module__.rsplit(".", 1)[1] for c in CHECKS] == [
        "validity_cache",
        "validity_unwritten",
        "validity_shared",
        "validity_mixed",
        "validity_starved",
    ]


def test_show_marks_the_figure_and_carries_each_mark_in_json() -> None:
    run = run_of([reads(), reads("u", round_no=1, direct=False)], samples(IOPS * 4096))
    sheets, document = report_for(run)
    results = sheets[0]
    assert results.columns[-1].header == "Valid?"
    marked = [r["validity"] for r in results.rows]
    assert marked == ["valid", "cache"] and results.flagged_rows == frozenset({1})
    titles = [s.title for s in sheets]
    assert "volbench run 7: figures that are not the volume's" in titles
    tests = {t["test"]: t for t in document["validity"]}  # type: ignore[union-attr]
    assert tests["t"]["valid"] and not tests["u"]["valid"]
    (mark,) = tests["u"]["marks"]
    assert mark["kind"] == "cache" and mark["figures"]["working_set_bytes"] == 64 * MiB
    lines = evidence_sheet(run).rows
    assert [line["evidence"] for line in lines][-1].startswith("what to do: run it with direct")


def test_check_does_not_judge_a_marked_figure() -> None:
    deep = {"iodepth": 32}
    run = run_of(
        [reads(**deep), reads("u", 400_000.0, 1, direct=False, **deep)], samples(IOPS * 4096)
    )
    request = CheckRequest("aws-io1", 100, provisioned={"provisioned_iops": IOPS})
    sheet = check_sheet(run, catalogue.load(()), request)
    verdicts = {v["test"]: v for v in sheet.document["verdicts"]}  # type: ignore[union-attr]
    assert verdicts["t"]["verdict"] == "meets"
    assert verdicts["u"]["verdict"] == "not judged"
    assert verdicts["u"]["reason"].startswith("not the volume's figure: cache: buffered I/O")
    assert "(above by its figure)" in verdicts["u"]["reason"]
    assert sheet.document["passed"] is True
    below = CheckRequest("aws-io1", 200, provisioned={"provisioned_iops": 4 * IOPS})
    assert check_sheet(run, catalogue.load(()), below).document["passed"] is False
    only_cached = run_of([reads("u", 400_000.0, direct=False, **deep)], samples(0.0))
    judged_none = check_sheet(only_cached, catalogue.load(()), request)
    assert judged_none.document["passed"] is True  # nothing judged: nothing failed
    assert any(n.endswith("no figure was judged") for n in judged_none.notes)


def test_reads_over_blocks_never_written_when_the_view_gives_the_volumes_runs() -> None:
    run = run_of([reads()], samples(IOPS * 4096))
    own = RunWrites(run.id, run.target.capacity_bytes, run.aggregate)
    assert validity_of(run)[(0, "t")].valid  # the view gave no history: not run
    known = Known(volume=(own,), volume_known=True)
    (mark,) = validity_of(run, known)[(0, "t")].marks
    assert mark.kind is MarkKind.UNWRITTEN and mark.figures["unwritten_share"] == 1.0
    filled = RunWrites(run.id - 1, run.target.capacity_bytes, (), laid_out=True)
    assert validity_of(run, Known(volume=(filled, own), volume_known=True))[(0, "t")].valid
    unnamed = validity_of(run, Known(volume=None, volume_known=True))[(0, "t")]
    assert unnamed.valid and any("cannot name this volume" in u for u in unnamed.unchecked)


def busy(seconds: float, from_s: float, waiting: float, running: float) -> list[HostSample]:
    """Every CPU busy each second for ``seconds`` from ``from_s``, fio's threads
    ``waiting`` for a CPU and ``running`` cores, the device reading 3,271 512 B blocks a
    second."""
    found = samples(3271.0 * 512, from_s=from_s, to_s=from_s + seconds)
    return [
        dataclasses.replace(
            s, cpu_busy_pct=(100.0, 100.0), fio_wait_threads=waiting, fio_cpu_cores=running
        )
        for s in found
    ]


def test_a_one_second_cell_on_a_busy_host_is_not_judged_by_its_start_and_exit() -> None:
    # bench/validity.py (BENCHMARKS.md): a PTS IOPS cell of 1 s, 4 jobs at QD 32 on a
    # loop device capped at 3,000 IOPS, at a load average of 16 on 2 CPUs: 3,271 IOPS
    # (the cap's, and more), yet marked starved from the two samples straddling its
    # ends, fio's threads' start and exit (5.11 threads waiting, 0.30 cores running)
    cell = row("read", 3271.0, workload(numjobs=4, iodepth=32, bs_bytes=512), 1.0)
    raw = fio_output({"t": 2.0})  # fio's end of the round: the cell ended at END_S
    straddling = busy(2.0, END_S - 1.4, waiting=5.11, running=0.30)  # ends at END_S + 0.6
    found = validity_of(run_of([cell], straddling, raw=raw))[(0, "t")]
    assert found.valid, found.marks
    assert any(
        u.startswith("the host's CPU: the once-a-second samples hold no whole second of its")
        for u in found.unchecked
    ), found.unchecked
    # the same waits over whole seconds of a 10 s test are the CPU's: marked
    long = row("read", 3271.0, workload(numjobs=4, iodepth=32, bs_bytes=512), RUNTIME_S)
    held = busy(RUNTIME_S + 2, END_S - RUNTIME_S - 1, waiting=5.11, running=0.30)
    (mark,) = validity_of(run_of([long], held, raw=fio_output({"t": RUNTIME_S})))[(0, "t")].marks
    assert mark.kind is MarkKind.STARVED and mark.figures["fio_wait_threads"] == 5.11
