"""``volbench run limits``: the experiment that finds what limits a volume.

A careful engineer does not infer a volume's limiter from the points a plan happened to
run; she measures where the candidate limiters differ
(:mod:`volbench.analysis.limiter_model` reads the answer). The tests, each a fio process
of its own, chosen one at a time from what the earlier ones measured:

0. a burst probe: 4 KiB random reads at QD 32 from the rested volume, long enough to
   see a bucket empty (the first seconds at a ceiling, then the baseline: the series
   fio logs each second, :mod:`volbench.analysis.burst_series`); the tests after it
   run on the emptied bucket, and a test that burst again counts at its baseline;
1. the latency floor: 4 KiB random reads, then writes, at QD 1;
2. a queue-depth ladder at 4 KiB per direction (QD 4, 16, 64, 256) until IOPS stop
   rising: a cap keeps them flat while latency grows by 1/cap per queued I/O;
3. a request-size ladder at that deep queue per direction (16 KiB, 64 KiB, 256 KiB,
   1 MiB), to tell an IOPS cap from a bytes cap and find an I/O unit; 384 KiB too
   when 256 KiB still ran at the IOPS cap (between 256 KiB units: rounded up or not);
   it stops once two sizes past the IOPS cap agree in MB/s, and measures the size
   between the last at the IOPS cap and the first past it (a bytes cap is read there);
4. a 50/50 mix at the deep queue, at 4 KiB (one IOPS budget or two) and, where both
   directions met a bytes cap, at the first size both ran at it (one MB/s budget or two).

The budget (``--budget``) bounds the plan: each test takes ``runtime + ramp``; a test
that would not fit is not run, and the model says what stayed open.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.limiter_model import KIB, SAME, Probe, deepest, fit
from volbench.errors import UsageError
from volbench.model import RW, TestResult, Workload
from volbench.plans.execution import PlanSpec
from volbench.records import json_object

NAME = "limits"
LADDER = (4, 16, 64, 256)
"""Queue depths of the 4 KiB ladder after QD 1."""
SIZES = (16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB)
"""The request-size ladder at the deep queue (after 4 KiB)."""
BETWEEN = 384 * KIB
"""A size between 256 KiB units (the AWS EBS unit): rounded up it counts 2, else 1.5."""
DIRECTIONS = {"read": RW.RANDREAD, "write": RW.RANDWRITE, "mix": RW.RANDRW, "burst": RW.RANDREAD}
BURST_QD = 32
"""The burst probe's queue: deep enough for any ceiling a guest or a cloud volume bursts to."""


@dataclass(frozen=True)
class LimitsOptions:
    """The experiment's settings: its time budget and each test's time (s), the
    target's size to use (bytes, None: all) and the fio engine (None: the usual)."""

    budget_s: float = 600.0
    runtime_s: float = 10.0
    ramp_time_s: float = 1.0
    size_bytes: int | None = None
    ioengine: str | None = None

    @property
    def test_s(self) -> float:
        return self.runtime_s + self.ramp_time_s

    @property
    def burst_s(self) -> float:
        """The burst probe's runtime: four tests' time, at least 12 s, at most a quarter
        of the budget (s). A bucket that outlasts it is seen as a ceiling held to its end."""
        return min(max(4 * self.test_s, 12.0), self.budget_s / 4)


def per_test_runtime(budget_s: float) -> float:
    """Each test's runtime for a budget: about 24 tests fit (the ladders of a volume
    that levels early take fewer), 2 to 10 s each (s)."""
    return float(min(10.0, max(2.0, round(budget_s / 24 - 1.0))))


@dataclass(frozen=True)
class Next:
    """The next test: what it measures (direction, request size in bytes, queue depth)."""

    direction: str
    bs_bytes: int
    iodepth: int


def probe_name(direction: str, bs_bytes: int, outstanding: int) -> str:
    """``read-4k-qd16``: the test's name says what it measures."""
    return f"{direction}-{bs_bytes // KIB}k-qd{outstanding}"


_NAME = re.compile(r"^(read|write|mix|burst)-(\d{1,7})k-qd(\d{1,5})\Z")


def parse_name(name: str) -> Next | None:
    """What a test of the experiment measured, from its name (None: not one of them)."""
    match = _NAME.match(name)
    if not match:
        return None
    return Next(match.group(1), int(match.group(2)) * KIB, int(match.group(3)))


def probes(tests: Sequence[TestResult]) -> list[Probe]:
    """The experiment's tests as :class:`Probe` records (other tests are left out)."""
    found = []
    for test in tests:
        parsed = parse_name(test.name)
        if parsed is None or test.iops <= 0:
            continue
        timed = [d for d in test.directions.values() if d.iops > 0 and d.lat_mean_ns]
        lat = sum(d.iops * (d.lat_mean_ns or 0.0) for d in timed)
        read, write = test.directions.get("read"), test.directions.get("write")
        found.append(
            Probe(
                test.name,
                parsed.direction,
                parsed.bs_bytes,
                parsed.iodepth,
                read.iops if read else 0.0,
                write.iops if write else 0.0,
                lat / sum(d.iops for d in timed) if timed else 0.0,
            )
        )
    return found


def _flat(one: Probe, other: Probe) -> bool:
    return abs(one.iops - other.iops) <= SAME * max(one.iops, other.iops)


def _ladder_next(done: Sequence[Probe], direction: str) -> Next | None:
    """The next depth of ``direction``'s 4 KiB ladder; None once IOPS stopped rising
    over three depths or more (or the ladder's end)."""
    ladder = sorted(
        (p for p in done if p.direction == direction and p.bs_bytes == 4 * KIB),
        key=lambda p: p.outstanding,
    )
    depths = [p.outstanding for p in ladder]
    if 1 not in depths:
        return Next(direction, 4 * KIB, 1)
    if len(ladder) >= 3 and _flat(ladder[-1], ladder[-2]):
        return None
    for depth in LADDER:
        if depth not in depths:
            return Next(direction, 4 * KIB, depth)
    return None


def _sizes_next(done: Sequence[Probe], direction: str) -> Next | None:
    """The next size of ``direction``'s ladder at its deep queue."""
    deep = deepest(done, direction)
    if deep is None:
        return None
    sizes = sorted(
        (p for p in done if p.direction == direction and p.outstanding == deep),
        key=lambda p: p.bs_bytes,
    )
    base = sizes[0].iops
    beyond = [p for p in sizes[1:] if p.iops < (1 - SAME) * base]
    measured = {p.bs_bytes for p in sizes}
    knee = _knee(sizes, beyond)
    if knee is not None and knee not in measured:
        return Next(direction, knee, deep)
    at_256k = next((p for p in sizes if p.bs_bytes == 256 * KIB), None)
    if BETWEEN not in measured and at_256k is not None and at_256k.iops >= (1 - SAME) * base:
        return Next(direction, BETWEEN, deep)  # whole 256 KiB units, or in proportion
    if len(beyond) >= 2:
        last, before = beyond[-1], beyond[-2]
        mean = (last.bytes_per_s + before.bytes_per_s) / 2
        if abs(last.bytes_per_s - before.bytes_per_s) <= SAME * mean:
            return None  # a bytes level two sizes agree on
    for size in SIZES:
        if size not in measured:
            return Next(direction, size, deep)
    return None


def _knee(sizes: Sequence[Probe], beyond: Sequence[Probe]) -> int | None:
    """The size halfway (in powers of two) between the last at the IOPS cap and the first
    past it, when they lie more than a doubling apart: a bytes cap is read off the first
    size past the cap, and the nearer that is to the knee the less a limiter's bucket
    holds its larger requests back."""
    if not beyond:
        return None
    first = beyond[0]
    at_cap = [p for p in sizes if p.bs_bytes < first.bs_bytes]
    if not at_cap or first.bs_bytes <= 2 * at_cap[-1].bs_bytes:
        return None
    return first.bs_bytes // 2


def _mix_next(done: Sequence[Probe]) -> Next | None:
    depths = [d for d in (deepest(done, "read"), deepest(done, "write")) if d is not None]
    if not depths:
        return None
    deep = max(depths)
    mixed = {p.bs_bytes for p in done if p.direction == "mix"}
    if 4 * KIB not in mixed:
        return Next("mix", 4 * KIB, deep)
    large = _common_large_size(done)
    if large is not None and large not in mixed:
        return Next("mix", large, deep)
    return None


def _common_large_size(done: Sequence[Probe]) -> int | None:
    """The smallest size both directions ran at their bytes caps (the first past the
    IOPS cap: QEMU falls below its cap at larger requests)."""
    model = fit(done)
    if model.read.bytes_cap is None or model.write.bytes_cap is None:
        return None
    sizes = [
        {p.bs_bytes for p in done if p.name in figure.tests}
        for figure in (model.read.bytes_cap, model.write.bytes_cap)
    ]
    common = sizes[0] & sizes[1]
    return min(common) if common else None


def next_test(done: Sequence[Probe]) -> Next | None:
    """The experiment's next test from what ``done`` measured (None: it is over)."""
    if not done:
        return Next("burst", 4 * KIB, BURST_QD)
    return (
        _ladder_next(done, "read")
        or _ladder_next(done, "write")
        or _sizes_next(done, "read")
        or _sizes_next(done, "write")
        or _mix_next(done)
    )


def workload(options: LimitsOptions, test: Next) -> Workload:
    burst = test.direction == "burst"  # from the first second: the ceiling is there
    return Workload(
        probe_name(test.direction, test.bs_bytes, test.iodepth),
        DIRECTIONS[test.direction],
        bs_bytes=test.bs_bytes,
        rwmixread_pct=50 if test.direction == "mix" else None,
        iodepth=test.iodepth,
        ioengine=options.ioengine,
        size_bytes=options.size_bytes,
        runtime_s=options.burst_s if burst else options.runtime_s,
        ramp_time_s=0.0 if burst else options.ramp_time_s,
    )


def plan(options: LimitsOptions) -> PlanSpec:
    """The experiment as an adaptive plan: each next test chosen from the results, until
    the answer is clear or the budget would be spent."""
    least = options.burst_s + 3 * options.test_s  # the burst probe and a ladder's start
    if least > options.budget_s:
        raise UsageError(
            f"a budget of {options.budget_s:g} s is shorter than the experiment's first"
            f" tests ({least:g} s): give a larger --budget, or a shorter --runtime"
        )

    def next_round(tests: Sequence[TestResult]) -> tuple[Workload, ...] | None:
        done = probes(tests)
        ours = [w for t in tests if (w := parse_name(t.name)) is not None]
        spent = sum(options.burst_s if w.direction == "burst" else options.test_s for w in ours)
        test = next_test(done)
        if test is None:
            return None
        chosen = workload(options, test)
        if spent + chosen.duration_s > options.budget_s:
            return None
        return (chosen,)

    most = 1 + int((options.budget_s - options.burst_s) // options.test_s)
    return PlanSpec(
        NAME,
        rounds=(),
        options={NAME: json_object(options)},
        next_round=next_round,
        budget=(most, options.budget_s),
    )
