"""The limits experiment (plans/limits.py) and its fit (analysis/limiter_model.py) on a
simulated limiter: QEMU's throttle-group knobs drawn at random (seeded, the seed in the
test's id), a device behind them, and noise like a busy machine's. The experiment must
find every cap within 5 %, the I/O unit exactly, and one budget from two."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest

from volbench.analysis.limiter_model import KIB, LimiterModel, Probe, fit
from volbench.plans.limits import Next, next_test, probe_name

NOISE = 0.015
"""Each figure off by up to 1.5 %, as a 2-10 s test on a busy machine."""


@dataclass(frozen=True)
class Limiter:
    """Caps as QEMU's throttle group takes them (None: not set); rates per second."""

    read_iops: float | None = None
    write_iops: float | None = None
    total_iops: float | None = None
    read_bps: float | None = None
    write_bps: float | None = None
    total_bps: float | None = None
    iops_size: int | None = None
    rounded: bool = False  # count units rounded up (AWS), not in proportion (QEMU)
    device_lat_s: float = 100e-6
    device_iops: float = 40_000.0
    device_s_per_byte: float = 0.0

    def device(self, bs: int, qd: int) -> float:
        """A device kept busy: it nears its peak gradually with queue depth (peak x qd /
        (qd + k), QD 1 at 1 / latency) and spends time per byte as well as per I/O."""
        peak = 1 / (1 / self.device_iops + bs * self.device_s_per_byte)
        k = max(0.0, peak * self.device_lat_s - 1)
        return peak * qd / (qd + k)

    def units(self, bs: int) -> float:
        if not self.iops_size or bs <= self.iops_size:
            return 1.0
        ratio = bs / self.iops_size
        return float(math.ceil(ratio)) if self.rounded else ratio

    def rate(self, direction: str, bs: int, qd: int) -> float:
        """Total IOPS of a test (a 50/50 mix: both directions together)."""
        shares = {"read": (1.0, 0.0), "burst": (1.0, 0.0), "write": (0.0, 1.0), "mix": (0.5, 0.5)}
        share = shares[direction]
        units = self.units(bs)
        limits = [self.device(bs, qd)]
        for cap, part in (
            (self.read_iops, share[0]),
            (self.write_iops, share[1]),
            (self.total_iops, 1.0),
        ):
            if cap and part:
                limits.append(cap / (part * units))
        for cap, part in (
            (self.read_bps, share[0]),
            (self.write_bps, share[1]),
            (self.total_bps, 1.0),
        ):
            if cap and part:
                limits.append(cap / (part * bs))
        return min(limits)


def _measure(limiter: Limiter, test: Next, draw: random.Random) -> Probe:
    rate = limiter.rate(test.direction, test.bs_bytes, test.iodepth)
    rate *= 1 + draw.uniform(-NOISE, NOISE)
    lat = test.iodepth / rate * 1e9 * (1 + draw.uniform(-NOISE, NOISE))  # Little's law
    read = {"read": rate, "burst": rate, "write": 0.0, "mix": rate / 2}[test.direction]
    name = probe_name(test.direction, test.bs_bytes, test.iodepth)
    return Probe(name, test.direction, test.bs_bytes, test.iodepth, read, rate - read, lat)


def experiment(limiter: Limiter, seed: int) -> tuple[LimiterModel, list[Probe]]:
    draw = random.Random(seed)
    done: list[Probe] = []
    while (test := next_test(done)) is not None:
        assert len(done) < 40, done
        done.append(_measure(limiter, test, draw))
    return fit(done), done


def _close(found: float | None, wanted: float) -> bool:
    return found is not None and abs(found - wanted) <= 0.05 * wanted


def _random_limiter(seed: int) -> Limiter:
    """One of the throttle group's shapes, rates a lab guest holds (300-3,000 IOPS);
    a bytes cap at least twice the IOPS cap x 16 KiB, so the IOPS cap binds at 4 KiB
    and the bytes cap two ladder sizes on."""
    draw = random.Random(seed)
    shape = draw.choice(["total", "separate", "total+bps", "separate+bps", "unit"])
    iops = [float(draw.randrange(300, 3000, 50)) for _ in range(2)]
    bps = [i * draw.choice([32, 48, 96]) * KIB for i in iops]
    if shape == "total":
        return Limiter(total_iops=iops[0])
    if shape == "separate":
        return Limiter(read_iops=iops[0], write_iops=iops[1])
    if shape == "total+bps":
        return Limiter(total_iops=iops[0], total_bps=bps[0])
    if shape == "separate+bps":
        return Limiter(read_iops=iops[0], write_iops=iops[1], read_bps=bps[0], write_bps=bps[1])
    return Limiter(total_iops=iops[0], iops_size=draw.choice([4, 8, 16, 32]) * KIB)


@pytest.mark.parametrize("seed", range(40))
def test_random_limiters_are_found(seed: int) -> None:
    limiter = _random_limiter(seed)
    model, done = experiment(limiter, seed)
    read_cap = limiter.read_iops or limiter.total_iops
    write_cap = limiter.write_iops or limiter.total_iops
    assert model.read.iops_cap and _close(model.read.iops_cap.value, read_cap or 0), model
    assert model.write.iops_cap and _close(model.write.iops_cap.value, write_cap or 0), model
    assert model.shared_iops is (limiter.total_iops is not None), (limiter, model)
    if limiter.iops_size and limiter.iops_size > 4 * KIB:
        assert model.read.unit is not None and model.read.unit.bytes == limiter.iops_size, model
    read_bps, write_bps = limiter.read_bps, limiter.write_bps
    pairs = (
        (read_bps or limiter.total_bps, model.read.bytes_cap),
        (write_bps or limiter.total_bps, model.write.bytes_cap),
    )
    for cap, found in pairs:
        if cap:
            assert found is not None and _close(found.value, cap), (limiter, model)
    if limiter.read_bps and limiter.write_bps:
        assert model.shared_bytes is False, model
    if limiter.total_bps:
        assert model.shared_bytes is True, model
    assert len(done) <= 24  # the default budget's tests


def test_a_unit_counted_rounded_up_is_told_from_a_proportional_one() -> None:
    aws = experiment(Limiter(total_iops=1000, iops_size=256 * KIB, rounded=True), 1)[0]
    qemu = experiment(Limiter(total_iops=1000, iops_size=256 * KIB), 1)[0]
    assert aws.read.unit is not None and aws.read.unit.bytes == 256 * KIB
    assert aws.read.unit.rounded is True and aws.read.bytes_cap is None
    assert qemu.read.unit is not None and qemu.read.unit.bytes == 256 * KIB
    assert qemu.read.unit.rounded is False


def test_no_limiter_gives_the_device_ceiling() -> None:
    model, done = experiment(Limiter(device_lat_s=200e-6, device_iops=1e9), 3)
    assert model.read.iops_cap is None and model.read.ceiling is not None
    assert model.read.ceiling.value > 200_000  # QD 256 / 200 µs: still rising
    assert model.shared_iops is None
    assert {p.outstanding for p in done if p.direction == "read"} >= {1, 4, 16, 64, 256}


def test_qd1_at_the_cap_is_the_limiters_pacing() -> None:
    model = experiment(Limiter(read_iops=1000, write_iops=1000), 2)[0]
    assert model.read.paced_at_qd1 and model.write.paced_at_qd1
    assert model.read.latency_floor is not None
    assert _close(model.read.latency_floor.value, 1e6)  # 1 ms: 1 / 1,000 IOPS
    assert model.shared_iops is False


def test_a_saturated_device_is_not_taken_for_a_cap() -> None:
    """A scratch file measured here: 13,600 IOPS at QD 1, 87,000 flat from QD 64 (a
    plateau with Little's law, as a cap gives), fewer at 16 KiB with MB/s rising to
    1.7 GB/s: the device's own ceiling, no IOPS cap."""
    device = Limiter(device_lat_s=73e-6, device_iops=90_000, device_s_per_byte=5.9e-10)
    model, _ = experiment(device, 4)
    assert model.read.iops_cap is None and model.write.iops_cap is None, model
    assert model.read.ceiling is not None and model.read.ceiling.value > 65_000  # 74,000 at 4k


def test_the_budget_bounds_the_plan() -> None:
    """Tests that would not fit the budget are not run; the dry run's bound is the
    budget's."""
    from volbench.model import DirectionResult, TestResult
    from volbench.plans.limits import LimitsOptions, plan

    options = LimitsOptions(budget_s=60.0, runtime_s=2.0, ramp_time_s=1.0)
    spec = plan(options)
    assert options.burst_s == 12.0  # four tests of 3 s, at least 12 s, at most 60 / 4
    assert spec.budget == (1 + (60 - 12) // 3, 60.0)
    limiter, draw, tests = Limiter(total_iops=1000), random.Random(5), []
    spent = 0.0
    while spec.next_round is not None and (chosen := spec.next_round(tests)):
        (workload,) = chosen
        spent += workload.duration_s
        probe = _measure(limiter, _next_of(workload.name), draw)
        direction = DirectionResult("read", 0, 1000.0, probe.iops, 0.0, 1, None,
                                    lat_mean_ns=probe.lat_mean_ns)  # fmt: skip
        tests.append(TestResult(workload.name, {"read": direction}, 0.0, 0.0, 1000.0, 1))
    assert spent <= 60.0 and len(tests) >= 10


def _next_of(name: str) -> Next:
    from volbench.plans.limits import parse_name

    parsed = parse_name(name)
    assert parsed is not None
    return parsed


def test_a_budget_too_short_is_refused_in_one_line() -> None:
    from volbench.errors import UsageError
    from volbench.plans.limits import LimitsOptions, plan

    with pytest.raises(UsageError, match="larger --budget"):
        plan(LimitsOptions(budget_s=10.0, runtime_s=2.0, ramp_time_s=1.0))


def test_a_plateau_that_larger_requests_pass_is_not_a_cap() -> None:
    """A scratch file on a busy host measured here: writes flat at ~34,000 IOPS from QD 4
    to 16 (CPU-bound), then 38,900 IOPS at 16 KiB: no cap counts I/Os there."""
    done = [
        Probe("write-4k-qd1", "write", 4 * KIB, 1, 0.0, 15_943, 60e3),
        Probe("write-4k-qd4", "write", 4 * KIB, 4, 0.0, 33_125, 120e3),
        Probe("write-4k-qd16", "write", 4 * KIB, 16, 0.0, 34_836, 460e3),
        Probe("write-16k-qd16", "write", 16 * KIB, 16, 0.0, 38_885, 410e3),
        Probe("write-32k-qd16", "write", 32 * KIB, 16, 0.0, 10_722, 1.5e6),
        Probe("write-64k-qd16", "write", 64 * KIB, 16, 0.0, 6_176, 2.6e6),
    ]
    model = fit(done)
    assert model.write.iops_cap is None
    assert model.write.ceiling is not None and _close(model.write.ceiling.value, 34_000)
