"""``--fill`` (plans/runs/fill.py): the fill of what a plan reads, first; an adaptive plan
chooses its tests without it, started and resumed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.fio.job import workload_options
from volbench.model import (
    RW,
    DirectionResult,
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    TargetInfo,
    Workload,
)
from volbench.model import TestResult as Result  # not "Test*": pytest would collect it
from volbench.plans import quick, sweep
from volbench.plans.dry_run import plan_preview
from volbench.plans.kinds import kind
from volbench.plans.resumers import Tests
from volbench.plans.runs import fill
from volbench.plans.runs.execution import PlanSpec
from volbench.plans.runs.preview import FIO_START_S
from volbench.units import MiB

GIB = 1024 * MiB


def test_the_fill_writes_what_the_plan_reads_once_first() -> None:
    reads = Workload("r", RW.RANDREAD, offset_bytes=MiB, size_bytes=8 * MiB)
    more = Workload("s", RW.READ, offset_bytes=4 * MiB, size_bytes=16 * MiB)
    plan = PlanSpec("p", ((reads, Workload("w", RW.WRITE, size_bytes=64 * MiB), more),))
    filled = fill.with_fill(plan, GIB, None)
    first = filled.rounds[0]
    assert [w.name for w in first] == ["fill"] and filled.rounds[1:] == plan.rounds
    assert (first[0].offset_bytes, first[0].size_bytes) == (MiB, 19 * MiB)  # reads only
    assert filled.options["fill"] == {"offset_bytes": MiB, "size_bytes": 19 * MiB}
    options = dict(workload_options(first[0], "libaio"))
    # once through in order (no runtime, not time-based): Google Cloud's 128K at QD 64
    assert options["rw"] == "write" and options["bs"] == "131072"
    assert options["iodepth"] == "64" and "refill_buffers" in options
    assert "runtime" not in options and "time_based" not in options
    note = fill.note(filled)
    assert note is not None and note.startswith("fill: writes bytes 1.0 MiB to 20 MiB once")
    assert fill.note(plan) is None


def test_a_test_without_a_size_reads_to_the_end_of_the_volume() -> None:
    plan = quick.plan(quick.QuickOptions())  # every test over the whole target
    first = fill.with_fill(plan, GIB, None).rounds[0][0]
    assert (first.offset_bytes, first.size_bytes) == (0, GIB)
    unknown = fill.with_fill(plan, 0, None).rounds[0][0]  # a place not yet reached
    assert (unknown.offset_bytes, unknown.size_bytes) == (0, None)


def test_a_plan_that_reads_nothing_or_has_a_fill_is_refused() -> None:
    writes = PlanSpec("p", ((Workload("w", RW.RANDWRITE),),))
    with pytest.raises(UsageError, match="reads nothing: leave it out"):
        fill.with_fill(writes, GIB, None)
    named = PlanSpec("p", ((Workload("fill", RW.READ),),))
    with pytest.raises(UsageError, match="named 'fill' already"):
        fill.with_fill(named, GIB, None)


def _result(name: str) -> Result:
    read = DirectionResult("read", 4096 * 1000, 1000.0, 1000.0, 4096 * 1000.0, 1000, None)
    return Result(name, {"read": read}, 0.0, 0.0, 1000.0, 1)


def test_an_adaptive_plan_fills_its_active_range_and_never_sees_the_fill() -> None:
    seen: list[str] = []

    def next_round(tests: Sequence[Result]) -> None:
        seen.extend(t.name for t in tests)

    filled = fill.with_fill(PlanSpec("p", (), next_round=next_round), GIB, 256 * MiB)
    first = filled.rounds[0][0]
    assert (first.name, first.offset_bytes, first.size_bytes) == ("fill", 0, 256 * MiB)
    assert filled.next_round is not None
    filled.next_round([_result("fill"), _result("qd1-jobs1")])
    assert seen == ["qd1-jobs1"]


def test_a_resumed_adaptive_run_does_not_see_its_fill_either() -> None:
    options = sweep.SweepOptions(RW.RANDREAD, 4096, (1, 2, 4), (1,), find_max=True)
    filled = fill.with_fill(sweep.find_max_plan(options), GIB, None)
    settings = RunSettings(
        ioengine="libaio",
        planned=tuple(w for r in filled.rounds for w in r),
        adaptive=True,
        options=filled.options,
    )
    run = RunRecord(
        id=3,
        plan=sweep.NAME,
        status=RunStatus.INTERRUPTED,
        started_at="",
        ended_at=None,
        target=TargetInfo("/dev/loop9", "block", GIB),
        host=HostInfo.from_record({}),
        labels={},
        settings=settings,
    )
    resumer = kind(run.plan).resume
    assert isinstance(resumer, Tests)
    resumed = resumer.plan(run)
    assert [w.name for r in resumed.rounds for w in r] == ["fill"]
    assert resumed.next_round is not None
    # the sweep's first point, as if the fill were not there: qd1-jobs1
    chosen = resumed.next_round([_result("fill")])
    assert chosen is not None and [w.name for w in chosen] == ["qd1-jobs1"]


TARGET = TargetInfo("/dev/vdz", "block", GIB)


def test_the_dry_run_shows_the_fill_first_and_the_tests_as_without_it(tmp_path: Path) -> None:
    plan = quick.plan(quick.QuickOptions(runtime_s=10, ramp_time_s=2))
    plain = plan_preview(plan, TARGET, "libaio", tmp_path)
    dry = plan_preview(fill.with_fill(plan, GIB, None), TARGET, "libaio", tmp_path)
    assert (dry.processes, dry.tests) == (7, 7)
    first = dry.job_files[0]
    assert first.label == "fill" and first.seconds == 0.0  # its time is not known before
    for line in ("[fill]", "rw=write", "bs=131072", "iodepth=64", f"size={GIB}"):
        assert line in first.text.splitlines(), line
    assert "runtime=" not in first.text and "time_based" not in first.text
    assert "/round-001/randwrite-4k-iops" in dry.job_files[1].text  # the fill is round 0
    assert dry.low_s == pytest.approx(plain.low_s + FIO_START_S)


def test_a_search_s_dry_run_shows_its_first_test_after_the_fill(tmp_path: Path) -> None:
    options = sweep.SweepOptions(
        RW.RANDREAD, 4096, (1, 4, 16, 64), (1, 2), runtime_s=5, ramp_time_s=0, find_max=True
    )
    plain = plan_preview(sweep.find_max_plan(options), TARGET, "io_uring", tmp_path)
    filled = fill.with_fill(sweep.find_max_plan(options), GIB, None)
    dry = plan_preview(filled, TARGET, "io_uring", tmp_path)
    assert [j.label for j in dry.job_files] == ["fill", plain.job_files[0].label]
    assert dry.processes == plain.processes + 1  # the grid, and the fill
    assert dry.high_s == pytest.approx(plain.high_s + FIO_START_S)
    assert "then more tests chosen from the results (adaptive), 7 at most" in dry.notes
