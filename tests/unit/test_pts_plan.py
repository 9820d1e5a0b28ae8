"""PTS options, catalog and the resumable state machine, on synthetic stored results."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from volbench.errors import UsageError
from volbench.model import StoredResult, StoredWorkload, TargetInfo
from volbench.plans.pts import catalog, driver, state
from volbench.plans.pts.estimate import estimate, estimate_note, format_duration, remaining
from volbench.plans.pts.iops import Matrix
from volbench.plans.pts.options import (
    PtsOptions,
    build,
    parse_block_sizes,
    parse_mixes,
    parse_tests,
)
from volbench.plans.pts.wsat import WsatOptions
from volbench.records import json_object, structure

MiB = 1 << 20
ACTIVE = 64 * MiB


def _stored(options: PtsOptions) -> PtsOptions:
    """``options`` through the JSON a run stores and back."""
    return structure(json.loads(json.dumps(json_object(options))), PtsOptions, "pts")


def _row(round_no: int, test: str, iops: float, io_bytes: int = 0) -> StoredResult:
    return StoredResult(
        round=round_no,
        test=test,
        direction="write",
        workload=StoredWorkload(),
        iops=iops,
        bw_bytes_per_s=iops * 4096,
        io_bytes=io_bytes,
        runtime_ms=1000.0,
        lat_kind="lat",
        lat_mean_ns=100_000.0,
        lat_min_ns=None,
        lat_max_ns=None,
        lat_stddev_ns=None,
        lat_p50_ns=None,
        lat_p90_ns=None,
        lat_p99_ns=None,
        lat_p999_ns=None,
        lat_p9999_ns=None,
        usr_cpu_pct=0.0,
        sys_cpu_pct=0.0,
        jobs=1,
    )


def _commit(results: list[StoredResult], step: catalog.Round, iops: float = 1000.0) -> None:
    """Store every cell of ``step`` as a store round of its own, as the engine runs them
    (WIPC cells write the whole range)."""
    for w in step.workloads:
        round_no = len({r.round for r in results})
        results.append(_row(round_no, w.name, iops, ACTIVE if step.phase == "wipc" else 4096))


def test_parse_tests_all_unknown_and_empty() -> None:
    assert parse_tests(["all"]) == (
        "iops",
        "throughput-1024k",
        "throughput-128k",
        "latency",
        "wsat",
        "hir",
        "xsr",
        "ecw",
        "dirth",
    )
    assert parse_tests(["dirth,iops", "iops"]) == ("iops", "dirth")
    assert parse_tests(["throughput"]) == ("throughput-1024k", "throughput-128k")
    assert parse_tests(["throughput-128k,iops"]) == ("iops", "throughput-128k")
    with pytest.raises(UsageError, match="unknown PTS test 'iosp': use iops, throughput, lat"):
        parse_tests(["iosp"])
    with pytest.raises(UsageError, match="name at least one"):
        parse_tests([","])


def test_profile_defaults_and_conflicts() -> None:
    enterprise = build(("iops",), "enterprise")
    assert (enterprise.threads, enterprise.iodepth, enterprise.active_range_pct) == (4, 32, 100)
    client = build(("iops",), "client")
    assert (client.threads, client.iodepth, client.active_range_pct) == (2, 16, 75)
    assert build(("iops",), "client", threads=8).threads == 8
    with pytest.raises(UsageError, match="conflicts with the enterprise profile"):
        build(("iops",), "enterprise", active_range_pct=75)
    quick_look = build(("iops",), "enterprise", max_rounds=3)  # allowed, non-compliant
    assert quick_look.non_compliant_reasons == (
        "at most 3 rounds: steady state cannot be evaluated (needs a 5-round window)",
    )


def test_reduced_matrix_is_non_compliant_and_options_round_trip() -> None:
    options = build(
        ("iops",),
        "enterprise",
        block_sizes=parse_block_sizes("64k,4k"),
        mixes=parse_mixes("0/100,100/0"),
        cell_seconds=2.0,
    )
    assert options.of(Matrix).block_sizes == (65536, 4096) and options.of(Matrix).mixes == (100, 0)
    assert len(options.non_compliant_reasons) == 3
    assert _stored(options) == options
    assert PtsOptions(tests=("iops",)).non_compliant_reasons == ()
    with pytest.raises(UsageError):
        parse_block_sizes("3k")
    with pytest.raises(UsageError):
        parse_mixes("60/40")


def test_iops_round_is_the_matrix_outer_loop_mix() -> None:
    cells = catalog.iops_cells(PtsOptions(tests=("iops",)), ACTIVE)
    assert len(cells) == 56
    assert cells[0].name == "iops.ss.100-0.1m" and cells[-1].name == "iops.ss.0-100.512"
    assert all(c.numjobs == 4 and c.iodepth == 32 and c.size_bytes == ACTIVE for c in cells)


def test_state_machine_purge_wipc_rounds_until_steady_then_sweep() -> None:
    options = build(("iops", "dirth"), "enterprise", cell_seconds=1.0, block_sizes=(4096,))
    results: list[StoredResult] = []
    first = state.next_round(options, ACTIVE, results)
    assert first is not None and first.phase == "wipc" and first.purge
    assert sum(1 for w in first.workloads if w.bs_bytes == 131072) == 2  # 2 x active range
    _commit(results, first)
    for index in range(5):
        step = state.next_round(options, ACTIVE, results)
        assert step is not None and (step.test, step.phase, step.index) == ("iops", "ss", index)
        assert not step.purge
        _commit(results, step)
    step = state.next_round(options, ACTIVE, results)
    assert step is not None and (step.test, step.phase, step.purge) == ("dirth", "wipc", True)
    _commit(results, step)
    for _ in range(5):
        step = state.next_round(options, ACTIVE, results)
        assert step is not None and step.phase == "ss"
        _commit(results, step)
    step = state.next_round(options, ACTIVE, results)
    assert step is not None and step.phase == "sweep" and len(step.workloads) == 49
    _commit(results, step)
    assert state.next_round(options, ACTIVE, results) is None


def test_not_steady_stops_at_max_rounds() -> None:
    options = build(("iops",), "enterprise", block_sizes=(4096,), max_rounds=7)
    results: list[StoredResult] = []
    rounds = 0
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        _commit(results, step, iops=1000.0 * 1.5**rounds)  # never steady
        rounds += 1
    assert rounds == 1 + 7
    verdict = state.verdict("iops", state.stored_rounds(results, options, ACTIVE))
    assert not verdict.steady and verdict.window_rounds == (2, 3, 4, 5, 6)


def test_a_round_cut_off_goes_on_and_wsat_stops_at_four_times_capacity() -> None:
    options = build(("iops",), "enterprise", block_sizes=(4096, 8192), purge=False)
    results: list[StoredResult] = []
    step = state.next_round(options, ACTIVE, results)
    assert step is not None and step.phase == "wipc" and not step.purge
    _commit(results, step)
    step = state.next_round(options, ACTIVE, results)
    assert step is not None
    results.append(_row(1, step.workloads[0].name, 10.0))  # killed after the first cell
    again = state.next_round(options, ACTIVE, results)
    assert again is not None and (again.phase, again.index) == ("ss", 0)
    assert again.workloads == step.workloads[1:]  # the round goes on, nothing runs twice
    _commit(results, again)
    rounds = state.stored_rounds(results, options, ACTIVE)
    assert [(r.phase, r.index) for r in rounds] == [("wipc", 0), ("ss", 0)]
    assert rounds[1].cells[step.workloads[0].name.split(".", 2)[2]].iops == 10.0

    wsat = PtsOptions(tests=("wsat",))
    results = []
    samples = 0
    while (step := state.next_round(wsat, ACTIVE, results)) is not None:
        results.append(_row(samples, step.workloads[0].name, 1.0, io_bytes=ACTIVE // 2))
        samples += 1
    assert samples == 8  # 8 x half the range = 4 x the range


def test_hir_runs_five_wait_states_after_steady_state() -> None:
    options = build(("hir",), "enterprise", cell_seconds=6.0, hir_cycles=10)
    results: list[StoredResult] = []
    phases = []
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        phases.append(step.phase)
        _commit(results, step)
    assert phases == ["wipc"] + ["ss"] * 5 + ["idle"] * 5
    cycles, continuous = catalog.hir_cells(options, ACTIVE, 4)  # 50 s wait, scaled by 6/60
    assert cycles.thinktime_s == pytest.approx(5.0) and cycles.thinktime_iotime_s == 0.5
    assert cycles.runtime_s == pytest.approx(10 * 5.5) and continuous.runtime_s == 180


def test_xsr_runs_three_access_groups_after_a_purge() -> None:
    options = build(("xsr",), "enterprise", xsr_cells=4)
    results: list[StoredResult] = []
    steps = []
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        steps.append(step)
        _commit(results, step)
    assert [(s.phase, s.index, s.purge) for s in steps] == [
        ("group", 0, True),
        ("group", 1, False),
        ("group", 2, False),
    ]
    shapes = [(s.workloads[0].rw.value, s.workloads[0].bs_bytes, len(s.workloads)) for s in steps]
    assert shapes == [("write", 1048576, 4), ("randwrite", 8192, 4), ("write", 1048576, 4)]


def test_estimate_brackets_five_to_max_rounds() -> None:
    options = build(("iops",), "enterprise", block_sizes=(4096,), mixes=(100, 0), cell_seconds=10)
    guess = estimate(options, ACTIVE, seq_write_bytes_per_s=128 * MiB)
    wipc_s = 2 * ACTIVE / (128 * MiB)
    assert guess.low_s == pytest.approx(wipc_s + 5 * 20)
    assert guess.high_s == pytest.approx(wipc_s + 25 * 20)
    assert format_duration(3725) == "1h 2m" and format_duration(42) == "42s"
    fewer = build(
        ("iops",), "enterprise", block_sizes=(4096,), mixes=(100, 0), cell_seconds=10, max_rounds=2
    )  # below a window: every round runs, low and high alike (not "5 to 2")
    guess = estimate(fewer, ACTIVE, seq_write_bytes_per_s=128 * MiB)
    assert guess.low_s == pytest.approx(wipc_s + 2 * 20) == pytest.approx(guess.high_s)


def test_remaining_time_shrinks_as_rounds_commit_and_is_zero_when_done() -> None:
    options = build(("iops",), "enterprise", block_sizes=(4096,), mixes=(100, 0), cell_seconds=10)
    speed = 128.0 * MiB
    results: list[StoredResult] = []
    before = remaining(options, ACTIVE, state.stored_rounds(results, options, ACTIVE), speed)
    assert before == pytest.approx((1 + 5 * 20, 1 + 25 * 20))
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        _commit(results, step)
        low, high = remaining(options, ACTIVE, state.stored_rounds(results, options, ACTIVE), speed)
        assert low <= before[0] and high <= before[1]
    assert remaining(options, ACTIVE, state.stored_rounds(results, options, ACTIVE), speed) == (
        0.0,
        0.0,
    )


def test_4k_logical_blocks_leave_out_half_kib_cells_before_anything_runs() -> None:
    zram = TargetInfo("/dev/zram0", "block", 64 * MiB, logical_block_bytes=4096)
    options = driver.fit_target(build(("iops", "latency", "ecw"), "enterprise"), zram, None)
    assert options.of(Matrix).block_sizes == (1048576, 131072, 65536, 32768, 16384, 8192, 4096)
    iops, latency = (catalog.ss_cells(options, ACTIVE, t) for t in ("iops", "latency"))
    assert len(iops) == 7 * 7 and len(latency) == 3 * 2
    assert all(w.bs_bytes % 4096 == 0 for w in (*iops, *latency))
    ecw = catalog.grid_sweep_cells(options, ACTIVE, "ecw")[0].bssplit
    assert ecw[0] == (4096, 77) and sum(p for _, p in ecw) == 100
    assert driver.non_compliant_reasons(options, zram) == [
        "0.5 KiB cells left out (IOPS, latency); ECW 0.5-3.5 KiB I/Os rounded up to 4 KiB: "
        "/dev/zram0 has 4 KiB logical blocks"
    ]
    assert _stored(options) == options  # resume plans the same cells
    # The estimate and the state machine count the 49-cell IOPS round.
    one = replace(options, tests=("iops",), cell_seconds=1.0)
    assert estimate(one, ACTIVE, 128 * MiB).low_s == pytest.approx(1 + 5 * 49)  # WIPC 1 s
    results: list[StoredResult] = []
    while (step := state.next_round(one, ACTIVE, results)) is not None:
        _commit(results, step)
    rounds = state.stored_rounds(results, one, ACTIVE)
    assert [r.phase for r in rounds] == ["wipc"] + ["ss"] * 5  # WIPC + 5 steady rounds
    # Asked for explicitly, a size the target cannot do is refused in one line.
    asked = build(("iops",), "enterprise", block_sizes=parse_block_sizes("0.5k,4k"))
    with pytest.raises(UsageError, match=r"--block-sizes 512: /dev/zram0 has 4 KiB logical"):
        driver.fit_target(asked, zram, None)
    default = driver.fit_target(
        build(("iops",), "enterprise"), replace(zram, logical_block_bytes=512), None
    )
    assert default.of(Matrix).block_sizes[-1] == 512
    assert driver.non_compliant_reasons(default, zram) == []


def test_rounds_numbered_without_gaps_after_cuts_and_never_beyond_the_limit() -> None:
    """Cut off at random cells again and again, a run's rounds are numbered 0, 1, 2 ...
    per phase, each cell is stored once, and steady state is judged on at most
    ``max_rounds`` rounds whose labels are the rounds averaged."""
    rng = random.Random(20261124)
    options = build(("iops",), "enterprise", block_sizes=(4096, 8192), purge=False, max_rounds=8)
    results: list[StoredResult] = []
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        cut = rng.randrange(len(step.workloads) + 1)  # cells committed before the kill
        iops = 1000.0 + rng.uniform(-300, 300)  # never steady: every round runs
        for w in step.workloads[: cut if cut else None]:
            round_no = len({r.round for r in results})
            results.append(_row(round_no, w.name, iops, ACTIVE if step.phase == "wipc" else 4096))
    rounds = state.stored_rounds(results, options, ACTIVE)
    ss = [r for r in rounds if r.phase == "ss"]
    assert [r.index for r in ss] == list(range(8))  # no gap, none beyond the limit
    names = [(r.round, r.test) for r in results]
    assert len(names) == len(set(names))
    cells = sum(len(r.cells) for r in rounds)
    assert cells == len(results)  # every stored cell is in exactly one round
    verdict = state.verdict("iops", rounds)
    assert not verdict.steady and verdict.window_rounds == (3, 4, 5, 6, 7)


def test_a_round_run_again_whole_by_an_older_version_counts_once() -> None:
    """Runs of older versions stored a cut-off round's finished cells, then ran the round
    again whole (in one store round each): the partial one is not a round."""
    options = build(("iops",), "enterprise", block_sizes=(4096, 8192), purge=False)
    results: list[StoredResult] = []
    step = state.next_round(options, ACTIVE, results)
    assert step is not None
    results += [_row(0, w.name, 1.0, ACTIVE) for w in step.workloads]
    step = state.next_round(options, ACTIVE, results)
    assert step is not None
    results += [_row(1, w.name, 5.0) for w in step.workloads[:3]]  # cut off
    results += [_row(2, w.name, 7.0) for w in step.workloads]  # again, whole
    rounds = state.stored_rounds(results, options, ACTIVE)
    assert [(r.phase, r.index, r.round_no) for r in rounds] == [("wipc", 0, 0), ("ss", 0, 2)]


def _wsat_row(round_no: int, io_bytes: int, seconds: float) -> StoredResult:
    row = _row(round_no, "wsat.run.0-100.4k", io_bytes / 4096 / seconds, io_bytes)
    return replace(row, runtime_ms=seconds * 1000)


def test_wsat_last_sample_is_cut_short_to_end_at_four_times_the_range() -> None:
    """A full 60 s sample writes 120 MiB; 4 x the 64 MiB range is 256 MiB. The third
    sample runs for the 16 MiB left at the second one's rate, + 2%: 8.16 s, not 60 s
    (which wrote up to a whole sample past the target)."""
    options = PtsOptions(tests=("wsat",))
    results: list[StoredResult] = []
    runtimes = []
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        (cell,) = step.workloads
        assert cell.name == "wsat.run.0-100.4k" and cell.time_based
        runtimes.append(cell.runtime_s or 0.0)
        results.append(_wsat_row(len(runtimes) - 1, round(2 * MiB * runtimes[-1]), runtimes[-1]))
    assert runtimes == [60.0, 60.0, pytest.approx(8.16)]
    written = sum(r.io_bytes for r in results)
    assert 0 <= written - 4 * ACTIVE <= 0.02 * 16 * MiB + 4096

    # The write rate halves during the short sample: one more short sample, at that rate.
    results = [*results[:2], _wsat_row(2, round(1 * MiB * 8.16), 8.16)]
    step = state.next_round(options, ACTIVE, results)
    assert step is not None and step.index == 3
    left = 4 * ACTIVE - sum(r.io_bytes for r in results)
    assert step.workloads[0].runtime_s == pytest.approx(left / MiB * 1.02, abs=1e-3)
    # A sample limit below the target ends WSAT there (the report says it fell short).
    capped = replace(options, own=(WsatOptions(max_rounds=2),))
    assert state.next_round(capped, ACTIVE, results[:2]) is None


def test_throughput_runs_each_block_size_as_a_test_of_its_own() -> None:
    """SNIA SSS PTS-E 1.1 (and PTS 2.0.2): SEQ 1024 KiB, then SEQ 128 KiB, each with its
    own purge, WIPC and rounds of 100% write and 100% read to steady state."""
    options = PtsOptions(tests=parse_tests(["throughput"]), cell_seconds=1.0)
    results: list[StoredResult] = []
    steps = []
    while (step := state.next_round(options, ACTIVE, results)) is not None:
        steps.append(step)
        _commit(results, step)
    per_test = [("wipc", True)] + [("ss", False)] * 5
    assert [(s.test, s.phase, s.purge) for s in steps] == [
        *(("throughput-1024k", *p) for p in per_test),
        *(("throughput-128k", *p) for p in per_test),
    ]
    shapes = [[(w.name, w.rw.value, w.bs_bytes, w.iodepth) for w in s.workloads] for s in steps]
    assert shapes[1] == [
        ("throughput-1024k.ss.0-100.1m", "write", 1048576, 128),
        ("throughput-1024k.ss.100-0.1m", "read", 1048576, 128),
    ]
    assert shapes[7] == [
        ("throughput-128k.ss.0-100.128k", "write", 131072, 128),
        ("throughput-128k.ss.100-0.128k", "read", 131072, 128),
    ]
    assert catalog.tracked_cells("throughput-128k", ("0-100.128k", "100-0.128k")) == (
        ("0-100.128k", "bw"),
        ("100-0.128k", "bw"),
    )
    # Two purges and two WIPCs in the estimate; four 1 s cells per pair of rounds.
    guess = estimate(options, ACTIVE, seq_write_bytes_per_s=128 * MiB)
    assert guess.low_s == pytest.approx(2 * (1 + 5 * 2))
    # A run stored before the split: one test, both block sizes in each round.
    legacy = PtsOptions(tests=("throughput",))
    assert [w.name for w in catalog.ss_cells(legacy, ACTIVE, "throughput")] == [
        "throughput.ss.0-100.1m",
        "throughput.ss.100-0.1m",
        "throughput.ss.0-100.128k",
        "throughput.ss.100-0.128k",
    ]


def test_block_sizes_and_mixes_reduce_the_latency_matrix_like_the_iops_one() -> None:
    options = build(
        ("iops", "latency"),
        "enterprise",
        block_sizes=parse_block_sizes("4k,64k"),
        mixes=parse_mixes("100/0,0/100"),
    )
    cells = catalog.latency_cells(options, ACTIVE)
    assert [w.name for w in cells] == ["latency.ss.100-0.4k", "latency.ss.0-100.4k"]
    assert all(w.iodepth == 1 and w.numjobs == 1 for w in cells)  # TC1/QD1 as ever
    assert {"reduced latency block sizes", "reduced latency R/W mixes"} <= set(
        options.non_compliant_reasons
    )
    full = build(("latency",), "enterprise")
    assert len(catalog.latency_cells(full, ACTIVE)) == 9 and full.non_compliant_reasons == ()
    with pytest.raises(UsageError, match="--block-sizes 64k leaves the latency test no cell"):
        build(("latency",), "enterprise", block_sizes=parse_block_sizes("64k"))
    with pytest.raises(UsageError, match="--mixes 95/5 leaves the latency test no cell"):
        build(("iops", "latency"), "enterprise", mixes=parse_mixes("95/5"))
    assert build(("iops",), "enterprise", block_sizes=parse_block_sizes("64k"))  # IOPS alone


def test_wsat_estimate_and_header_texts_are_of_samples_not_rounds() -> None:
    wsat = build(("wsat",), "enterprise", wsat_max_rounds=31)
    guess = estimate(wsat, ACTIVE, seq_write_bytes_per_s=2 * MiB)  # 256 MiB at 2 MiB/s
    assert (guess.low_s, guess.high_s) == (128, 31 * 60)
    assert estimate_note(wsat, ACTIVE, 2 * MiB) == (
        "estimate: 2m 8s (WSAT: 4 x active range at the sequential write speed) to 31m 0s "
        "(WSAT: 31 samples); sequential write 2 MB/s, active range 64 MiB"
    )
    mixed = estimate_note(build(("iops", "wsat"), "enterprise", wsat_max_rounds=31), ACTIVE, 1e9)
    assert "(steady state in 5 rounds, WSAT: 4 x active range" in mixed
    assert "(every test to its round limit of 25, WSAT: 31 samples)" in mixed
    assert catalog.preconditioning(wsat) == "none (wsat)"
    assert catalog.preconditioning(build(("iops",), "enterprise")) == (
        "WIPC: 2 x active range, 128 KiB sequential writes"
    )
    assert catalog.preconditioning(build(("iops", "wsat", "xsr"), "enterprise")) == (
        "WIPC: 2 x active range, 128 KiB sequential writes (iops); none (wsat, xsr)"
    )
    assert build(("wsat",), "enterprise", max_rounds=3).non_compliant_reasons == ()


@pytest.mark.parametrize(
    ("size", "label"),
    [(512, "512 B"), (4096, "4 KiB"), (65536, "64 KiB"), (1048576, "1024 KiB"), (1536, "1536 B")],
)
def test_block_sizes_read_in_bytes_or_kib(size: int, label: str) -> None:
    assert catalog.block_size_label(size) == label
