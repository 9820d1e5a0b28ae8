"""The ``Valid?`` column on the plans' own sheets: an IOMeter-style run's specs, a surface
scan's zones, a QoS verification's tenants and a limits card's fitted figures each say
whether the figure they show is the volume's, from the tests it rests on, as every other
table does (report/validity_sheets.py: ``with_marks``, one piece of code for all). The
marks are the validity service's own (analysis/run_validity.py): a buffered test is
marked "cache" (fio's ``direct=0``: the page cache answers), the same test direct is
not; and a command's :class:`Verdicts` works each run out once, none outlives it."""

from __future__ import annotations

import dataclasses

from test_limits_charts import CAPPED
from test_limits_charts import _run as limits_run
from test_qos_sheets import QOS_VERIFY, Rates, Tenant, VerifySetup, make_plan, plan_document

from validity_facts import MiB, row, workload
from volbench.analysis.qos_results import VerifyOptions
from volbench.analysis.validity import Validity
from volbench.model import (
    RW,
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.plans import hdtune, iometer
from volbench.records import json_object
from volbench.report.sheet import Sheet
from volbench.report.validity_sheets import MARK_NOTE, Verdicts, _notes, with_marks
from volbench.views import report_for, summary_for

TARGET = TargetInfo("/dev/loop9", "block", 256 * MiB)


def _run(plan: str, results: list[StoredResult], settings: RunSettings | None = None) -> RunRecord:
    return RunRecord(
        id=11,
        plan=plan,
        status=RunStatus.COMPLETED,
        started_at="2026-11-28T00:00:00+00:00",
        ended_at="2026-11-28T00:01:00+00:00",
        target=TARGET,
        host=HostInfo.from_record({}),
        labels={},
        settings=settings or RunSettings(),
        results=tuple(results),
        uuid="u-11",
    )


def _marks(sheet: Sheet) -> list[object]:
    """Each row's ``Valid?`` cell (None: the sheet has no such column)."""
    assert sheet.columns[-1].header == "Valid?", [c.header for c in sheet.columns]
    return [r["validity"] for r in sheet.rows]


def _plan_sheet(run: RunRecord) -> Sheet:
    sheets, _ = report_for(run)
    return sheets[0]


def _test(name: str, round_no: int, direct: bool, **given: object) -> StoredResult:
    return row(
        "read", 2000.0, workload(name=name, direct=direct, **given), test=name, round_no=round_no
    )


def test_an_iometer_spec_at_a_worker_count_carries_its_tests_mark() -> None:
    tests = [
        _test("4k-random-read.w1", 0, True, numjobs=1),
        _test("4k-random-read.w2", 1, False, numjobs=2),  # buffered: a cache answered
    ]
    sheet = _plan_sheet(_run(iometer.NAME, tests))
    assert sheet.title.startswith("volbench iometer")
    assert _marks(sheet) == ["valid", "cache"]
    assert sheet.flagged_rows == frozenset({1}) and MARK_NOTE in sheet.notes
    direct = [dataclasses.replace(t, workload=tests[0].workload) for t in tests]
    assert "Valid?" not in [c.header for c in _plan_sheet(_run(iometer.NAME, direct)).columns]


def test_a_scan_zone_carries_its_tests_mark() -> None:
    tests = [
        _test(f"zone-{n}", n, n != 2, rw="read", bs_bytes=1 << 20, offset_bytes=n * 64 * MiB)
        for n in range(4)
    ]
    sheet = _plan_sheet(_run(hdtune.SCAN, tests))
    assert sheet.title.startswith("volbench scan")
    assert _marks(sheet) == ["valid", "valid", "cache", "valid"]
    assert sheet.flagged_rows == frozenset({2})


def test_a_qos_tenant_carries_its_tests_mark() -> None:
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("a", 40), Tenant("b", 80)])
    options = VerifyOptions(rw=RW.RANDREAD, bs_bytes=4096, tolerance_pct=10.0)
    settings = RunSettings(options=json_object(VerifySetup(plan_document(plan), options)))
    tests = [_test("a", 0, True), _test("b", 0, False)]
    run = _run(QOS_VERIFY, tests, settings)
    sheet = _plan_sheet(run)
    assert [r["tenant"] for r in sheet.rows] == ["a", "b"]
    assert _marks(sheet) == ["valid", "cache"]
    assert 1 in sheet.flagged_rows
    read = dataclasses.replace(run, raw_outputs=("",))  # as the store reads it for a view
    headline = summary_for(read, check=False).table  # the report's first table too
    assert _marks(headline) == ["valid", "cache"]


def test_a_limits_card_figure_carries_the_marks_of_the_tests_it_rests_on() -> None:
    run = _run_limits()
    card = _plan_sheet(run)
    assert card.title == "what limits this volume"
    assert "Valid?" not in [c.header for c in card.columns]  # every test direct: all valid
    first = card.row_tests[0][0]  # the tests the first figure rests on
    buffered = tuple(
        dataclasses.replace(r, workload=dataclasses.replace(r.workload, direct=False))
        if r.test == first and r.direction == "read"
        else r
        for r in run.results
    )
    marked = _plan_sheet(dataclasses.replace(run, results=buffered))
    cells = _marks(marked)
    resting = [i for i, tests in enumerate(marked.row_tests) if first in tests]
    assert resting and all(cells[i] == "cache" for i in resting)
    assert all(cells[i] == "valid" for i in range(len(cells)) if i not in resting)
    assert marked.flagged_rows == frozenset(resting)


def _run_limits() -> RunRecord:
    """A limits run (tests/unit/test_limits_charts.py's), every test direct."""
    run, _ = limits_run(CAPPED)
    direct = tuple(
        dataclasses.replace(r, workload=dataclasses.replace(r.workload, direct=True))
        for r in run.results
    )
    return dataclasses.replace(run, results=direct)


def test_a_sheet_that_names_its_rows_tests_is_marked_without_a_test_column() -> None:
    from volbench.analysis.validity import Mark, MarkKind, Validity

    sheet = Sheet("s", (), ({"x": 1}, {"x": 2}), {}, row_tests=(("a",), ("a", "b")))
    mark = Mark(MarkKind.MIXED, "a burst averaged in", (), "run it longer")
    found = {(0, "a"): Validity(0, "a"), (1, "b"): Validity(1, "b", (mark,))}
    shown = with_marks(sheet, found)
    assert [r["validity"] for r in shown.rows] == ["valid", "mixed"]
    assert shown.flagged_rows == frozenset({1})


def test_a_commands_verdicts_work_each_run_out_once_and_none_outlives_it() -> None:
    run = _run(iometer.NAME, [_test("4k-random-read.w1", 0, False, numjobs=1)])
    verdicts = Verdicts()
    assert verdicts.of(run) is verdicts.of(run)  # one command: worked out once
    assert Verdicts().of(run) is not verdicts.of(run)  # another command: its own
    assert not verdicts.of(run)[(0, "4k-random-read.w1")].valid
    never = StoredWorkload(rw="randread", bs_bytes=4096, direct=True, size_bytes=64 * MiB)
    read = row("read", 2000.0, never, test="r")
    plain = dataclasses.replace(_run("sweep", [read]), id=12, uuid="u-12")
    assert verdicts.of(plain)[(0, "r")].valid  # no volume history given: not judged
    verdicts.give_volume(plain, ())  # a volume nothing wrote before
    assert [m.kind.value for m in verdicts.of(plain)[(0, "r")].marks] == ["unwritten"]


def test_what_was_not_checked_is_a_line_a_check_after_a_run_and_whole_in_explain() -> None:
    """Each test's reason holds its own figures (its timed part's seconds), so 22 short
    tests gave 22 lines of one reason: after a run, one line a check, its first reason
    and how many more ``explain`` holds; ``explain`` has each."""

    def short(seconds: float) -> str:
        return f"the host's CPU: no whole second of its {seconds:.1f} s timed part"

    found = {
        (n, f"t{n}"): Validity(n, f"t{n}", (), (short(1 + n / 10), "a mixed average: 1 s of log"))
        for n in range(5)
    }
    run = _run("quick", [])
    brief = _notes(run, found)
    assert brief == [
        "0 of 5 test(s) marked: their figures are not the volume's",
        f"not checked: {short(1.0)} (t0, t1, t2 and 2 more; 4 more reason(s) in volbench"
        " explain 11)",
        "not checked: a mixed average: 1 s of log (t0, t1, t2 and 2 more)",
        "the evidence of each mark: volbench explain 11",
    ]
    whole = _notes(run, found, brief=False)
    assert [n for n in whole if n.startswith("not checked: the host's CPU")] == [
        f"not checked: {short(1 + n / 10)} (t{n})" for n in range(5)
    ]
