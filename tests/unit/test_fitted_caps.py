"""Verdicts that use a volume's fitted limiter (analysis/fitted_caps.py): the three lab
volumes that a quick plan alone judged "not determined" or "queue" (separate read and
write budgets with MB/s caps; a 4 KiB I/O unit under 1,000 IOPS; a burst on a shared
budget), a device with no limiter, random draws of limits, and the store lookup of a
run's volume (volbench/volume_limits.py)."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import pytest
from test_limiter_model import Limiter, _ram_loop_reads, _random_limiter, experiment
from test_limits_charts import _run

from products import split_product
from volbench.analysis.burst_series import Burst
from volbench.analysis.fitted_caps import fitted_caps, volume_key
from volbench.analysis.limit_evidence import Context, Limit, MeasuredTest
from volbench.analysis.limit_verdict import verdict
from volbench.analysis.limiter_model import KIB, fit
from volbench.model import RunRecord
from volbench.plans import quick
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.limits_card import limits_card
from volbench.specs import catalogue
from volbench.store.repository import Store
from volbench.testbed import PlaceRecord, TargetIdentity
from volbench.timeline import RoundTimes
from volbench.volume_limits import caps_of, volume_caps

MB = 1e6
SOURCE = "limits run 12"


def _test(
    name: str,
    rw: str,
    bs_kib: int,
    qd: int,
    iops: float,
    lat_ms: float | None = None,
    cpu: float = 5.0,
) -> MeasuredTest:
    """A quick-plan test as fio measured it (latency by Little's law unless given)."""
    lat = (lat_ms * 1e6) if lat_ms is not None else qd / iops * 1e9
    read, write = (iops, 0.0) if rw == "read" else (0.0, iops)
    return MeasuredTest(
        name,
        iops,
        iops * bs_kib * KIB,
        lat,
        qd,
        1,
        (cpu,),
        True,
        read,
        write,
        bs_bytes=bs_kib * KIB,
    )


def _verdict(test: MeasuredTest, caps: Context) -> tuple[Limit, str]:
    found = verdict(test, caps)
    return found.limit, " | ".join(found.evidence)


def test_separate_budgets_with_mb_s_caps_name_each_cap() -> None:
    """Read 3,000 IOPS and 24 MB/s, write 1,500 IOPS and 12 MB/s: the 16 KiB tests at the
    MB/s caps name them; the 4 KiB tests at the IOPS caps name those; a 4 KiB read a busy
    machine kept at 2,155 says the read cap did not bind."""
    model, _ = experiment(
        Limiter(read_iops=3000, write_iops=1500, read_bps=24e6, write_bps=12e6), 3
    )
    ctx = Context(caps=fitted_caps(model, None, SOURCE))
    limit, why = _verdict(_test("randread-16k", "read", 16, 32, 1420), ctx)
    assert limit is Limit.RATE_LIMITER
    assert "of the read MB/s cap (limits run 12" in why and "was not reached" not in why
    limit, why = _verdict(_test("randwrite-16k", "write", 16, 32, 739), ctx)
    assert limit is Limit.RATE_LIMITER
    assert "of the write MB/s cap (limits run 12" in why
    limit, why = _verdict(_test("randwrite-4k", "write", 4, 32, 1418), ctx)
    assert limit is Limit.RATE_LIMITER
    assert re.search(r"of the write IOPS cap \(limits run 12\), 1,(4[6-9]|5[0-4])\d IOPS", why), why
    held = verdict(_test("randread-4k", "read", 4, 32, 2155, cpu=97.0), ctx)
    assert held.limit is Limit.HOST_CPU
    assert any(
        re.fullmatch(
            r"2,155 IOPS is 7\d% of the read IOPS cap \(limits run 12\), 2,9\d\d IOPS:"
            r" the limiter did not bind, host CPU held it",
            line,
        )
        for line in held.evidence
    ), held.evidence


def test_a_4k_unit_under_1000_iops_names_the_unit_and_paces_qd1() -> None:
    """16 KiB requests count as 4: 252 IOPS at 16 KiB meet the cap in 4 KiB units; QD 1
    at 954 IOPS and 0.99 ms is the limiter's pacing, not "queue"."""
    model, _ = experiment(Limiter(total_iops=1000, iops_size=4 * KIB), 5)
    assert model.read.unit is not None and model.read.unit.bytes == 4 * KIB
    ctx = Context(caps=fitted_caps(model, None, SOURCE))
    limit, why = _verdict(_test("randread-16k", "read", 16, 32, 252), ctx)
    assert limit is Limit.RATE_LIMITER
    assert re.search(r"(9[7-9]\d|1,0[0-2]\d) IOPS in 4 KiB units", why), why
    for name, rw, iops, lat in (
        ("randread-4k-qd1", "read", 954, 0.99),
        ("randwrite-4k-qd1", "write", 922, 1.04),
    ):
        limit, why = _verdict(_test(name, rw, 4, 1, iops, lat), ctx)
        assert limit is Limit.RATE_LIMITER, why
        assert re.search(rf"IOPS cap \({SOURCE}\), (9\d\d|1,0\d\d) IOPS", why), why


def test_a_burst_on_a_shared_budget_names_the_baseline_for_writes_too() -> None:
    """600 IOPS baseline shared, bursting to 3,000: the 16 KiB write at 635 IOPS and the
    QD 1 write at the baseline (639 IOPS, 1.47 ms) meet the budget; a short test at the
    ceiling meets the burst's."""
    model, _ = experiment(Limiter(total_iops=600, total_bps=30e6), 7)
    burst = Burst(3000.0, 600.0, 29_935.0, 12.5, 0.0, 12.5)
    caps = fitted_caps(model, burst, SOURCE)
    assert model.shared_iops is True
    ctx = Context(caps=caps)
    for test in (
        _test("randwrite-16k", "write", 16, 32, 635),
        _test("randwrite-4k-qd1", "write", 4, 1, 639, 1.47),
    ):
        limit, why = _verdict(test, ctx)
        assert limit is Limit.RATE_LIMITER, (test.name, why)
        assert "(limits run 12)" in why
    limit, why = _verdict(_test("randread-4k", "read", 4, 32, 2950), ctx)
    assert limit is Limit.RATE_LIMITER
    assert "the burst ceiling (limits run 12, while credits last), 3,000 IOPS" in why


def test_a_device_without_a_limiter_is_at_its_own_ceiling() -> None:
    device = Limiter(device_lat_s=73e-6, device_iops=90_000, device_s_per_byte=5.9e-10)
    model, _ = experiment(device, 2)
    caps = fitted_caps(model, None, SOURCE)
    assert caps and all(c.kind == "ceiling" for c in caps), caps
    top = model.read.ceiling
    assert top is not None
    limit, why = _verdict(
        _test("randread-4k", "read", 4, 256, top.value * 0.97), Context(caps=caps)
    )
    assert limit is Limit.DEVICE
    assert "the device's own read ceiling (limits run 12: no limiter found)" in why
    run, _ = _run(device, 2)
    notes = " ".join(limits_card(run).notes)
    assert "no limiter found; the device's own ceiling is read" in notes


def test_a_larger_request_at_the_devices_own_rate_for_its_size_is_the_device() -> None:
    """No limiter: a 16 KiB test at the device's own 16 KiB rate (the size ladder's) is
    "device"; under it while every CPU was busy, "host CPU" naming that rate; a QD 1 test
    is never judged by a rate measured at the deep queue (it is "queue")."""
    from volbench.timeline import HostSample

    device = Limiter(device_lat_s=73e-6, device_iops=90_000, device_s_per_byte=5.9e-10)
    model, probes = experiment(device, 2)
    caps = fitted_caps(model, None, SOURCE, probes=probes)
    (at_16k,) = [c for c in caps if c.bs_bytes == 16 * KIB and c.direction == "read"]
    assert at_16k.iops is not None and at_16k.kind == "ceiling"
    deep = at_16k.least_outstanding
    limit, why = _verdict(
        _test("randread-16k", "read", 16, deep, at_16k.iops * 0.98), Context(caps=caps)
    )
    assert limit is Limit.DEVICE and "the device's own read rate at 16 KiB" in why, why
    busy = tuple(
        HostSample(float(t), (95.0, 93.0), fio_cpu_cores=0.2, fio_wait_threads=0.01)
        for t in range(5)
    )
    limit, why = _verdict(
        _test("randread-16k", "read", 16, deep, at_16k.iops * 0.4), Context(caps=caps, host=busy)
    )
    assert limit is Limit.HOST_CPU and "the host's CPUs held it" in why, why
    limit, why = _verdict(
        _test("randread-4k-qd1", "read", 4, 1, 9_000), Context(caps=caps, host=busy)
    )
    assert limit is Limit.QUEUE, why


def test_a_test_on_the_ladders_plateau_is_judged_by_the_devices_rate_at_its_size() -> None:
    """A loop device over an image in RAM, no limiter (fio short of CPU through its 4 KiB
    plateau, from QD 64): the size ladder ran one rung deeper, at QD 256. The quick
    plan's 16 KiB reads at QD 64 are on the plateau, so the device's 16 KiB rate judges
    them: under it while every CPU was busy, "host CPU" (the device's work is the CPUs':
    BENCHMARKS.md's loop device, 208,991 IOPS, fio's job at 69 % of a core, the device
    96 % busy, was "not determined"); at it, "device". QD 16, short of the plateau: the
    rate says nothing of it."""
    from volbench.timeline import HostSample

    probes = _ram_loop_reads(True)
    caps = fitted_caps(fit(probes), None, SOURCE, probes=probes)
    (at_16k,) = [c for c in caps if c.bs_bytes == 16 * KIB]
    assert at_16k.least_outstanding == 64 and at_16k.iops == 262_000.0, at_16k
    busy = tuple(
        HostSample(float(t), (99.0, 98.0), fio_cpu_cores=0.69, fio_wait_threads=0.1)
        for t in range(5)
    )
    limit, why = _verdict(
        _test("randread-16k", "read", 16, 64, 208_991, cpu=69.0), Context(caps=caps, host=busy)
    )
    assert limit is Limit.HOST_CPU and "the device's own read rate at 16 KiB" in why, why
    limit, why = _verdict(_test("randread-16k", "read", 16, 64, 255_000), Context(caps=caps))
    assert limit is Limit.DEVICE and "the device's own read rate at 16 KiB" in why, why
    limit, why = _verdict(
        _test("randread-16k", "read", 16, 16, 150_000), Context(caps=caps, host=busy)
    )
    assert "the device's own" not in why, why
    # CPUs 83 % busy, not all (the bench's loop device: 174,984 IOPS, 81 % of its 16 KiB
    # rate): that rate was the CPUs' (fio short of CPU in the limits run), so they held
    # this test too; the same rate measured with CPU to spare says nothing of it
    some = tuple(
        HostSample(float(t), (84.0, 82.0), fio_cpu_cores=0.67, fio_wait_threads=0.1)
        for t in range(5)
    )
    slow = _test("randread-16k", "read", 16, 64, 174_984, cpu=67.0)
    limit, why = _verdict(slow, Context(caps=caps, host=some))
    assert limit is Limit.HOST_CPU and "itself the host's CPUs' rate" in why, why
    spare = tuple(dataclasses.replace(c, cpu_bound=False) for c in caps)
    limit, why = _verdict(slow, Context(caps=spare, host=some))
    assert limit is not Limit.HOST_CPU, why


@pytest.mark.parametrize("seed", range(12))
def test_quick_tests_at_a_drawn_limit_name_the_limiter(seed: int) -> None:
    """Limits drawn at random: every quick-plan test the limiter holds (its rate within
    2 % of the limit at that workload) is "rate limiter", naming a cap of the model."""
    limiter = _random_limiter(seed)
    model, _ = experiment(limiter, seed)
    ctx = Context(caps=fitted_caps(model, None, SOURCE))
    draw = random.Random(seed)
    for work in quick.workloads(quick.QuickOptions()):
        if work.rw.value not in ("randread", "randwrite", "read", "write"):
            continue
        direction = "read" if "read" in work.rw.value else "write"
        rate = limiter.rate(direction, work.bs_bytes, work.iodepth * work.numjobs)
        own = limiter.device(work.bs_bytes, work.iodepth * work.numjobs)
        if rate >= 0.98 * own:
            continue  # the device, not the limiter, sets this one
        rate *= 1 + draw.uniform(-0.03, 0.03)
        test = _test(work.name, direction, work.bs_bytes // KIB, work.iodepth, rate)
        test = dataclasses.replace(test, numjobs=work.numjobs)
        limit, why = _verdict(test, ctx)
        assert limit is Limit.RATE_LIMITER, (seed, limiter, work.name, why)
        assert f"({SOURCE}" in why


def _stored(store: Store, run: RunRecord, uuid: str) -> int:
    """``run`` stored (as a bundle imports it), a round for each of its tests."""
    count = max((r.round for r in run.results), default=-1) + 1
    at = "2026-11-26T00:00:00+00:00"
    rounds = tuple(RoundTimes(n, at, at, at) for n in range(count))
    whole = dataclasses.replace(run, uuid=uuid, rounds=rounds, raw_outputs=("{}",) * count)
    ((placed, _),) = store.import_runs([whole])
    return placed


def test_a_runs_volume_finds_the_newest_limits_run_of_the_same_volume(tmp_path: Path) -> None:
    identity = TargetIdentity("/dev/loop7", "block", "7:7", 1 << 30, source="loop:/img@0")
    limited, _ = _run(Limiter(read_iops=3000, write_iops=1500), 3)
    target = dataclasses.replace(limited.target, identity=identity)
    limited = dataclasses.replace(limited, target=target)
    other = dataclasses.replace(
        limited,
        target=dataclasses.replace(
            target, identity=dataclasses.replace(identity, source="loop:/other@0")
        ),
    )
    quick_run = dataclasses.replace(limited, plan=quick.NAME, results=())
    with Store.open(str(tmp_path / "v.db")) as store:
        first = _stored(store, limited, "a" * 32)
        _stored(store, other, "b" * 32)
        caps = caps_of(store, store.get_run(_stored(store, quick_run, "c" * 32)))
        assert {c.label for c in caps} >= {
            f"the read IOPS cap (limits run {first})",
            f"the write IOPS cap (limits run {first})",
        }
        newer, _ = _run(Limiter(read_iops=2000, write_iops=1000), 4)
        newest = _stored(store, dataclasses.replace(newer, target=target), "d" * 32)
        caps = caps_of(store, store.get_run(_stored(store, quick_run, "e" * 32)))
        assert all(f"limits run {newest}" in c.label for c in caps)


def test_a_run_is_judged_by_its_volumes_limits_of_its_time(tmp_path: Path) -> None:
    """Limits measured at 10:00 (3,000 IOPS) and at 14:00 (after a change, 1,000): a run
    at 12:00 is judged by the first, one at 16:00 by the second, one at 08:00 (before any)
    by the first; each limits run by itself."""
    identity = TargetIdentity("/dev/loop7", "block", "7:7", 1 << 30, source="loop:/img@0")

    def at(run: RunRecord, hour: int) -> RunRecord:
        target = dataclasses.replace(run.target, identity=identity)
        day = "2026-11-26T"
        started, ended = f"{day}{hour:02}:00:00+00:00", f"{day}{hour:02}:05:00+00:00"
        return dataclasses.replace(run, target=target, started_at=started, ended_at=ended)

    morning, _ = _run(Limiter(total_iops=3000), 3)
    afternoon, _ = _run(Limiter(total_iops=1000), 4)
    quick_run = dataclasses.replace(morning, plan=quick.NAME, results=())
    with Store.open(str(tmp_path / "v.db")) as store:
        ids = {
            "early": _stored(store, at(quick_run, 8), "a" * 32),
            "first": _stored(store, at(morning, 10), "b" * 32),
            "noon": _stored(store, at(quick_run, 12), "c" * 32),
            "second": _stored(store, at(afternoon, 14), "d" * 32),
            "late": _stored(store, at(quick_run, 16), "e" * 32),
        }
        runs = [store.get_run(i) for i in ids.values()]
        caps = volume_caps(store, runs)
    judged = {
        name: {re.sub(r".*\(limits run (\d+)\).*", r"\1", c.label) for c in caps[i]}
        for name, i in ids.items()
    }
    first, second = str(ids["first"]), str(ids["second"])
    assert judged == {
        "early": {first},
        "first": {first},
        "noon": {first},
        "second": {second},
        "late": {second},
    }


def test_the_volume_key_of_a_place_and_of_a_target() -> None:
    run, _ = _run(Limiter(total_iops=1000), 1)
    assert volume_key(run) is None  # no identity: an imported run
    one = PlaceRecord("lab://g:/dev/vda", "lab://g", "/dev/vda")
    placed = dataclasses.replace(run, settings=dataclasses.replace(run.settings, places=(one,)))
    assert volume_key(placed) == "lab://g:/dev/vda"
    other = PlaceRecord("lab://h:/dev/vda", "lab://h", "/dev/vda")
    two = dataclasses.replace(run, settings=dataclasses.replace(run.settings, places=(one, other)))
    assert volume_key(two) is None


SPLIT = split_product(3000, 1500, 100)
"""A product with separate read and write IOPS promises (the lab's `lab up --product`)."""


def test_check_of_a_limits_run_puts_each_fitted_figure_beside_the_promise(tmp_path: Path) -> None:
    """The volume set up as the product meets it figure by figure, and the card names
    it among the matching products; the write budget halved is "below", naming it."""
    (tmp_path / "split.yaml").write_text(SPLIT, encoding="utf-8")
    cat = catalogue.load((str(tmp_path / "split.yaml"),))
    kept, _ = _run(Limiter(read_iops=3000, write_iops=1500, read_bps=100e6, write_bps=100e6), 3)
    sheet = check_sheet(kept, cat, CheckRequest("lab-split", 1))
    rows = {r.metric: r for r in sheet.rows}
    assert set(rows) >= {"read IOPS cap", "write IOPS cap", "read MB/s cap", "write MB/s cap"}
    assert all(r.verdict == "meets" for r in sheet.rows), sheet.rows
    assert not sheet.flagged_rows
    assert "volume has one IOPS budget" not in " ".join(sheet.notes)
    with catalogue.using((str(tmp_path / "split.yaml"),)):
        notes = " ".join(limits_card(dataclasses.replace(kept, labels={"size_gib": "1"})).notes)
    assert "matches the promise of lab-split at 1 GiB" in notes
    halved, _ = _run(Limiter(read_iops=3000, write_iops=750, read_bps=100e6, write_bps=100e6), 3)
    sheet = check_sheet(halved, cat, CheckRequest("lab-split", 1))
    below = [sheet.rows[i] for i in sorted(sheet.flagged_rows)]
    assert [(r.metric, r.verdict) for r in below] == [("write IOPS cap", "below")]
    assert below[0].expected == 1500 and abs(below[0].measured - 750) < 0.05 * 750


def test_a_test_fio_held_to_its_own_rate_says_so() -> None:
    """The rest between burst probes (rate_iops=1): fio's own rate option held it, not a
    queue of one."""
    from volbench.analysis.run_limits import FactsOfTest, run_verdicts

    rest = _test("rest-4k-qd1", "read", 4, 1, 1.0, 0.2)
    (found,) = run_verdicts([FactsOfTest(0, rest, ("randread", 4096), rate=(1.0, None))])
    assert found.verdict.limit is Limit.RATE_LIMITER
    assert "fio's own rate option (rate_iops, rate)'s cap of 1 IOPS" in found.verdict.evidence[0]


def test_a_test_with_no_io_beside_deeper_ones_is_a_stall_not_a_crash() -> None:
    """0 IOPS (a hostile or broken output) beside deeper tests that did I/O: the stall
    rule, and no rule after it divides by the zero."""
    dead = dataclasses.replace(_test("read-4k-qd1", "read", 4, 1, 1.0, 0.2), iops=0.0)
    deeper = _test("read-4k-qd16", "read", 4, 16, 900)
    found = verdict(dead, Context(neighbours=(deeper,)))
    assert found.limit is Limit.STALL
