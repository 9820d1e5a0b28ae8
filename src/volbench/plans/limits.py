"""``volbench run limits``: the experiment that finds what limits a volume.

A careful engineer does not infer a volume's limiter from the points a plan happened to
run; she measures where the candidate limiters differ
(:mod:`volbench.analysis.limiter_model` reads the answer). The tests, each a fio process
of its own, chosen one at a time from what the earlier ones measured:

0. a burst probe: 4 KiB random reads at QD 32 from the rested volume, long enough to
   see a bucket empty (the first seconds at a ceiling, then the baseline: the series
   fio logs each second, :mod:`volbench.analysis.burst_series`); the tests after it
   run on the emptied bucket, and a test that burst again counts at its baseline.
   When it emptied a bucket (fio's summary of its rate windows shows two plateaus:
   :func:`~volbench.analysis.burst_series.burst_from_samples`), a rest and a second
   burst probe measure how fast credits come back
   (:mod:`volbench.analysis.burst_refill`): ``rest-4k-qd1`` (4 KiB reads at one I/O a
   second, about half the time a bucket refilling at the baseline takes to fill) and
   ``refill-4k-qd32`` (the burst probe again, long enough to spend what came back).
   They run right after the burst probe, while its bucket is known to be empty: later,
   tests below the baseline (QD 1, large requests under a MB/s cap) have refilled it
   in part, and the second probe would count those credits too. The burst probe takes
   at most a quarter of the budget, the two after it another quarter at most;
1. the latency floor: 4 KiB random reads, then writes, at QD 1 (all the reads' tests
   come first, then, when the reads burst, ``wburst-4k-qd32``, a burst probe of writes:
   a bucket of the writes' own, or none left; then the writes' tests);
2. a queue-depth ladder at 4 KiB per direction (QD 4, 16, 64, 256) until IOPS stop
   rising: a cap keeps them flat while latency grows by 1/cap per queued I/O. A depth
   more than 5 % below a shallower one (or, in the size ladder, a size below a larger
   one), which neither a limiter nor a device does, is measured once more
   (``read-4k-qd16-again``) and counts at its higher figure: a busy machine held it; so
   is the first size past 4 KiB where it ran under both the plateau's IOPS and the
   larger sizes' MB/s (:func:`_between`);
3. a request-size ladder at that deep queue per direction (16 KiB, 64 KiB, 256 KiB,
   1 MiB), to tell an IOPS cap from a bytes cap and find an I/O unit; 384 KiB too
   when 256 KiB still ran at the IOPS cap (between 256 KiB units: rounded up or not);
   it stops once two sizes past the IOPS cap agree in MB/s, and measures the size
   between the last at the IOPS cap and the first past it (a bytes cap is read there).
   Right after the reads' first size past the IOPS cap (a MB/s level), the burst probe
   of MB/s (``bburst-256k-qd4``, :data:`BBURST`): a bucket of bytes beside a MB/s cap
   (QEMU's ``bps-*-max``) is met only by requests that large. When it empties one, the
   reads' larger tests before it are measured again, every larger test after it runs
   after a drain of that bucket (``bdrain-2s-read-64k-qd16``, :func:`bytes_lead_in`),
   and ``wbburst-256k-qd4`` before the writes' tests tells a bucket of their own.
   After the ladder, the MB/s test (``bytes-32k-qd4``, ``wbytes-32k-qd4``:
   :func:`_mbps_next`), from which the fit reads the MB/s cap;
4. a 50/50 mix at the deep queue, at 4 KiB (one IOPS budget or two; none when each
   direction bursts from a bucket of its own: two budgets) and, where both directions
   met a bytes cap, at the first size both ran at it (one MB/s budget or two).

On a volume that bursts, every test of 1 to 4 runs right after a drain in the same fio
process (``drain-3s-read-4k-qd4``: 4 KiB at QD 32 in the test's direction, the burst
probe's workload, :func:`lead_in`). The bucket refills whenever the volume does less
than its baseline: between two fio processes (0.3 s on this machine, two seconds or
more on a lab guest, whose fio starts slowly), and through a test held below the
baseline (QD 1, large requests under a MB/s cap). A test's own 1 s ramp does not
always spend that at a shallow queue, and QEMU's bucket then lifted a 1 s test above
its baseline (979 IOPS at QD 1 under a baseline of 330, BENCHMARKS.md); the drain
spends it at the ceiling, and the test starts on an empty bucket.

The budget (``--budget``) bounds the plan: each test takes ``runtime + ramp``; a test
that would not fit is not run, and the model says what stayed open.

Every test's name says what it measures (:func:`probe_name`, read back by
:func:`parse_name`); the rest and the second burst probe are not probes of the ladders
(:func:`probes` leaves them out, and so does the limits card's fit).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.analysis.burst_refill import probe_seconds, rest_seconds
from volbench.analysis.burst_series import Burst, burst_from_samples, with_spent
from volbench.analysis.limiter_model import (
    KIB,
    MBPS_TEST,
    SAME,
    Probe,
    deep_queue,
    fit,
    queue_ladder,
    settled,
    size_ladder,
)
from volbench.errors import UsageError
from volbench.fio.job import planned_seconds
from volbench.model import RW, TestResult, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object

NAME = "limits"
LADDER = (4, 16, 64, 256)
"""Queue depths of the 4 KiB ladder after QD 1."""
SIZES = (16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB)
"""The request-size ladder at the deep queue (after 4 KiB)."""
BETWEEN = 384 * KIB
"""A size between 256 KiB units (the AWS EBS unit): rounded up it counts 2, else 1.5."""
DIRECTIONS = {
    "read": RW.RANDREAD,
    "write": RW.RANDWRITE,
    "mix": RW.RANDRW,
    "burst": RW.RANDREAD,
    "rest": RW.RANDREAD,
    "refill": RW.RANDREAD,
    "wburst": RW.RANDWRITE,
    "bburst": RW.RANDREAD,
    "wbburst": RW.RANDWRITE,
    "bytes": RW.RANDREAD,
    "wbytes": RW.RANDWRITE,
}
"""What each test does, by the first part of its name: ``rest`` idles (one I/O a second,
:data:`REST_IOPS`), ``refill`` is the burst probe again after it, ``wburst`` the burst
probe of writes, ``bburst`` and ``wbburst`` the burst probes of MB/s (reads', writes'),
``bytes`` and ``wbytes`` the MB/s tests (reads', writes': :func:`_mbps_next`)."""
SIDE = {"bytes": "read", "wbytes": "write"}
"""The direction each MB/s test measures."""
PROBED = ("read", "write", "mix", "burst", *MBPS_TEST.values())
"""The tests that are probes of the ladders and the fit (:func:`probes`)."""
MIN_BURST_S = 20.0
"""The shortest burst probe (s): a bucket of 10 s at a burst five times the baseline
(the lab's rehearsal of a burst on a shared budget: 1,500 from 15,000 credits over 300
IOPS) empties in 12.5 s, and the probe must see a baseline plateau after it."""
BURST_QD = 32
"""The burst probe's queue: deep enough for any ceiling a guest or a cloud volume bursts to."""
DRAIN_GAP_S = 2.0
"""The idle time between two fio processes a drain allows for (s): about three times a
lab guest's (its rounds took 0.7 s more than their fio runtime on average: BENCHMARKS.md,
bench/limits) and six times this machine's (0.3 s). The credits of a longer gap are left
to the test's own ramp; a shorter one's drain runs its last part at the baseline,
which does no harm."""
BYTES_BS = 256 * KIB
"""The MB/s burst probe's request size: large enough that a MB/s cap, not an IOPS cap,
holds it (the draws' MB/s burst ceilings are at most 144 KB an I/O of their IOPS cap),
small enough that fio's half-second windows each count tens of I/Os at a few MB/s."""
BYTES_QD = 4
"""The MB/s burst probe's queue: 1 MiB in flight, a tenth of a second at 10 MB/s."""
MIN_BYTES_BURST_S = 10.0
"""The shortest MB/s burst probe (s): a bucket of 4 s at three times the baseline (the
lab's draws) empties in 6 s, and each plateau must last 3 s
(:data:`~volbench.analysis.burst_series.MIN_PLATEAU_S`)."""
MBPS_QD = 4
"""The MB/s test's queue (the deep queue's, when shallower): a few requests in flight,
so that what is in flight when fio's runtime ends is a few percent of what it did."""
MIN_MBPS_TEST_S = 3.0
"""The MB/s test's shortest runtime (s): 3 s of 256 KiB at 12 MB/s are 137 requests,
and the kernel's io.max throttle lets a 1 s test through up to 6 % over its MB/s cap
(BENCHMARKS.md, bench/limits)."""
DRAIN_SHARE = 0.02
"""The most a ladder test's queue may be of the I/Os it does (:func:`queue_runtime`).
fio counts wrongly what is in flight as its ramp and its runtime end: its IOPS count
the I/Os issued after the ramp, over a runtime that lasts until those in flight
completed, and its bandwidth those that completed after the ramp. Under QEMU's throttle
its IOPS fall short by about the queue over the I/Os done (4 KiB writes at 120 IOPS,
1 s: 117.0 at QD 4, 106.8 at QD 16; 3 s: 118.9, 115.2); under the kernel's io.max its
bandwidth is over by as much (reads at 260 IOPS, QD 16, 1 s: 275 I/Os a second),
BENCHMARKS.md. At 2 % a cap is read within 2 %."""
REST_IOPS = 1
"""The rest's I/O rate (fio ``rate_iops``): a completion every second keeps the stall
watch (5 s without one) quiet, and costs the bucket one I/O a second of its refill."""


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
        """The burst probe's runtime: four tests' time, an eighth of the budget, at least
        :data:`MIN_BURST_S`, at most a quarter of the budget (s). A bucket that outlasts
        it is seen as a ceiling held to its end, and lifts the tests after it."""
        return min(max(4 * self.test_s, self.budget_s / 8, MIN_BURST_S), self.budget_s / 4)

    @property
    def bytes_burst_s(self) -> float:
        """The MB/s burst probe's runtime: half the burst probe's, at least
        :data:`MIN_BYTES_BURST_S` (s). It runs only on a volume whose MB/s levelled."""
        return max(MIN_BYTES_BURST_S, self.burst_s / 2)


def per_test_runtime(budget_s: float) -> float:
    """Each test's runtime for a budget: about 24 tests fit (the ladders of a volume
    that levels early take fewer), 2 to 10 s each (s)."""
    return float(min(10.0, max(2.0, round(budget_s / 24 - 1.0))))


@dataclass(frozen=True)
class Next:
    """The next test: what it measures (direction, request size in bytes, queue depth),
    and its runtime (s) when not the experiment's usual (the rest, the second probe)."""

    direction: str
    bs_bytes: int
    iodepth: int
    runtime_s: float | None = None
    again: bool = False
    """The point measured once more (it fell below its neighbours)."""

    @property
    def name(self) -> str:
        return probe_name(self.direction, self.bs_bytes, self.iodepth, self.again)


def probe_name(direction: str, bs_bytes: int, outstanding: int, again: bool = False) -> str:
    """``read-4k-qd16``: the test's name says what it measures (``read-4k-qd16-again``:
    measured once more)."""
    return f"{direction}-{bs_bytes // KIB}k-qd{outstanding}{AGAIN if again else ''}"


AGAIN = "-again"
_NAME = re.compile(
    r"^(read|write|mix|burst|rest|refill|wburst|bburst|wbburst|bytes|wbytes)"
    r"-(\d{1,7})k-qd(\d{1,5})(-again)?\Z"
)


def parse_name(name: str) -> Next | None:
    """What a test of the experiment measured, from its name (None: not one of them)."""
    match = _NAME.match(name)
    if not match:
        return None
    size, depth = int(match.group(2)) * KIB, int(match.group(3))
    return Next(match.group(1), size, depth, again=match.group(4) is not None)


def probes(tests: Sequence[TestResult]) -> list[Probe]:
    """The experiment's probes as :class:`Probe` records (other tests, the rest and the
    second burst probe among them, are left out, and the reads' larger tests that ran on
    a MB/s bucket's credits, :func:`bytes_stale`); each direction's IOPS as fio gave them."""
    found = []
    stale = bytes_stale(tests)
    for test in tests:
        parsed = parse_name(test.name)
        if parsed is None or parsed.direction not in PROBED or test.iops <= 0:
            continue
        if test.name in stale:
            continue
        done = {n: d.iops for n, d in test.directions.items()}
        timed = [
            (done[n], d.lat_mean_ns or 0.0)
            for n, d in test.directions.items()
            if done[n] > 0 and d.lat_mean_ns
        ]
        lat = sum(iops * lat_ns for iops, lat_ns in timed)
        found.append(
            Probe(
                test.name,
                parsed.direction,
                parsed.bs_bytes,
                parsed.iodepth,
                done.get("read", 0.0),
                done.get("write", 0.0),
                lat / sum(iops for iops, _ in timed) if timed else 0.0,
                sum(d.bw_bytes_per_s for d in test.directions.values()),
            )
        )
    return found


def _dip_next(
    done: Sequence[Probe], merged: Sequence[Probe], direction: str, sizes: bool
) -> Next | None:
    """A point of ``direction``'s 4 KiB ladder (``sizes``: of its size ladder at the deep
    queue) to measure once more: a depth more than :data:`SAME` below a shallower one, or
    a size more than that below a larger one (neither a limiter nor a device does that; a
    busy machine holding the test down does); each once only (``done``: as measured;
    ``merged``: each point at its higher figure, :func:`settled`)."""
    again = {
        (p.bs_bytes, p.outstanding)
        for p in done
        if p.direction == direction and p.name.endswith(AGAIN)
    }
    if sizes:
        deep = deep_queue(merged, direction)
        points = sorted(
            (p for p in merged if p.direction == direction and p.outstanding == deep),
            key=lambda p: -p.bs_bytes,
        )
    else:
        points = sorted(
            (p for p in merged if p.direction == direction and p.bs_bytes == 4 * KIB),
            key=lambda p: p.outstanding,
        )
    for index, probe in enumerate(points):  # each against those that must do as many I/Os
        before = [p.iops for p in points[:index]]
        held = before and probe.iops < (1 - SAME) * max(before)
        if held and (probe.bs_bytes, probe.outstanding) not in again:
            return Next(direction, probe.bs_bytes, probe.outstanding, again=True)
    between = _between(points[::-1]) if sizes else None
    if between is not None and (between.bs_bytes, between.outstanding) not in again:
        return Next(direction, between.bs_bytes, between.outstanding, again=True)
    return None


def _between(sizes: Sequence[Probe]) -> Probe | None:
    """The first size past 4 KiB of a size ladder (``sizes``, smallest first) when it
    ran below both the 4 KiB plateau's IOPS and the larger sizes' MB/s by more than
    :data:`SAME`: under a limiter it is at one of them (an IOPS cap, or a bytes level
    from where it starts); the fit reads "the device's own ceiling" off such a point
    (:func:`volbench.analysis.limiter_model.fit`, a size past the plateau at fewer IOPS
    and fewer MB/s), so it is measured once more: a busy machine held it (a lab guest's
    8 KiB reads at 1,100 of a 1,200 IOPS cap), or the device does that again."""
    if len(sizes) < 3 or sizes[0].bs_bytes != 4 * KIB:
        return None
    first, after = sizes[1], sizes[2:]
    fewer_ios = first.iops < (1 - SAME) * sizes[0].iops
    fewer_bytes = first.bytes_per_s < (1 - SAME) * max(p.bytes_per_s for p in after)
    return first if fewer_ios and fewer_bytes else None


def _ladder_next(done: Sequence[Probe], direction: str) -> Next | None:
    """The next depth of ``direction``'s 4 KiB ladder; None once IOPS stopped rising
    over three depths or more (the last no more than :data:`SAME` above the best before
    it), or at the ladder's end."""
    ladder = sorted(
        (p for p in done if p.direction == direction and p.bs_bytes == 4 * KIB),
        key=lambda p: p.outstanding,
    )
    depths = [p.outstanding for p in ladder]
    if 1 not in depths:
        return Next(direction, 4 * KIB, 1)
    if len(ladder) >= 3 and ladder[-1].iops <= (1 + SAME) * max(p.iops for p in ladder[:-1]):
        return None
    for depth in LADDER:
        if depth not in depths:
            return Next(direction, 4 * KIB, depth)
    return None


def _sizes_next(done: Sequence[Probe], direction: str) -> Next | None:
    """The next size of ``direction``'s ladder at its deep queue."""
    deep = deep_queue(done, direction)
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


def _mix_next(
    done: Sequence[Probe], two_buckets: bool = False, measured: Sequence[Probe] = ()
) -> Next | None:
    """The 50/50 mixes: at 4 KiB (none when each direction bursts from a bucket of its
    own: two budgets, and the reads' bucket, full again after the writes' tests, would
    lift the mix), and at the first size both directions ran at their MB/s caps. A mix
    that did neither one budget's cap nor twice the lower of two (a busy machine held
    it) is measured once more, and counts at its higher figure (``done``: each point at
    its higher figure, :func:`settled`; ``measured``: as measured, when not ``done``)."""
    depths = [d for d in (deep_queue(done, "read"), deep_queue(done, "write")) if d is not None]
    if not depths:
        return None
    deep = max(depths)
    mixed = {p.bs_bytes for p in done if p.direction == "mix"}
    if 4 * KIB not in mixed and not two_buckets:
        return Next("mix", 4 * KIB, deep)
    large = _common_large_size(done)
    if large is not None and large not in mixed:
        return Next("mix", large, deep)
    model = fit(done, two_buckets)
    again = {
        p.bs_bytes for p in measured or done if p.direction == "mix" and p.name.endswith(AGAIN)
    }
    for size, shared, caps in (
        (4 * KIB, model.shared_iops, (model.read.iops_cap, model.write.iops_cap)),
        (large, model.shared_bytes, (model.read.bytes_cap, model.write.bytes_cap)),
    ):
        if size in mixed and size not in again and shared is None and all(caps):
            return Next("mix", size, deep, again=True)  # neither one budget nor two: held
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


BURST = Next("burst", 4 * KIB, BURST_QD)
"""The burst probe: the experiment's first test."""
REST = Next("rest", 4 * KIB, 1)
"""The rest after the burst probe (its runtime chosen from the burst: :func:`refill_tests`)."""
REFILL = Next("refill", 4 * KIB, BURST_QD)
"""The second burst probe, after the rest: what came back."""
WBURST = Next("wburst", 4 * KIB, BURST_QD)
"""The burst probe of writes, after the reads' tests when the reads burst: a bucket of
their own (QEMU's ``iops-write-max``), or none left (one bucket both directions share,
the read probe emptied it). It empties a write bucket before the write ladder. As long
as the reads' probe: a bucket of the writes' own drains slower than the reads' when
their baseline is nearer the ceiling (QEMU: ``iops-write`` 390 beside ``iops-read``
180, both bursting to 600 from 2,400 credits, drains in 11.4 s against 5.7 s), and a
probe sized on the reads' burst then saw a ceiling held to its end and no bucket."""


BBURST = Next("bburst", BYTES_BS, BYTES_QD)
"""The burst probe of MB/s (QEMU's ``bps-total-max``, ``bps-read-max``): reads of
:data:`BYTES_BS` at :data:`BYTES_QD`, right after the first test of the reads' size
ladder past their IOPS cap (a MB/s level: a bucket of bytes is met there first; below
it the tests do less than a MB/s cap's baseline, and a bucket stays full). The reads'
larger tests before it may have run on the bucket's credits: when it found a bucket they
are left out (:func:`bytes_stale`) and measured again after a drain."""
WBBURST = Next("wbburst", BYTES_BS, BYTES_QD)
"""The burst probe of writes' MB/s, after the reads' tests when the reads' MB/s burst:
a bucket of the writes' own (``bps-write-max``), or none left (``bps-total-max``)."""


def burst_seen(
    options: LimitsOptions,
    tests: Sequence[TestResult],
    probe: Next = BURST,
    largest: bool = False,
) -> Burst | None:
    """The burst of ``probe`` (the burst probe; or the writes', :data:`WBURST`) as fio's
    summary of its rate windows shows it (None: no such probe yet, no summary, no burst,
    or a bucket it did not empty); ``largest``: the larger of its two estimates (a
    drain's, :func:`~volbench.analysis.burst_series.burst_from_samples`)."""
    test = next((t for t in tests if t.name == probe.name), None)
    side = "write" if probe.direction in ("wburst", "wbburst") else "read"
    found = test.directions.get(side) if test is not None else None
    stats = found.iops_samples if found is not None else None
    if stats is None or test is None:
        return None
    seconds = test.runtime_ms / 1000 if test.runtime_ms > 0 else options.burst_s
    return burst_from_samples(
        stats.mean, stats.min, stats.max, stats.stddev, seconds, largest=largest
    )


_DRAIN = re.compile(r"^b?drain-(\d{1,4})(\.5)?s-")


def drain_name(seconds: float, test: Next, kind: str = "") -> str:
    """``drain-1.5s-read-4k-qd4``: the drain ahead of ``test``, its seconds (whole or a
    half) in its name (:func:`drained_s` reads them back); ``bdrain-``: of a MB/s
    bucket (``kind`` "b")."""
    return f"{kind}drain-{seconds:g}s-{test.name}"


def drained_s(name: str) -> float | None:
    """The seconds of a drain by its name (None: not a drain)."""
    match = _DRAIN.match(name)
    return float(match.group(1)) + (0.5 if match.group(2) else 0.0) if match else None


def lead_in(options: LimitsOptions, tests: Sequence[TestResult], test: Next) -> Workload | None:
    """The drain ahead of ``test`` in its fio process (None: no bucket is known, or
    ``test`` is a probe of the bucket itself): 4 KiB at the burst probe's queue in the
    test's direction (a mix: both), for the seconds at the ceiling that spend the most
    credits the bucket can have regained since the test before (:func:`regained`), in
    half seconds up, at least one. A bucket of its own for each direction
    (:data:`WBURST` found one) is drained by the test's direction; the reads' bucket
    before a mix has refilled through every write test: drained whole."""
    direction = SIDE.get(test.direction, test.direction)
    if direction not in ("read", "write", "mix"):
        return None
    reads = burst_seen(options, tests)
    if reads is None:
        return None
    writes = burst_seen(options, tests, WBURST)
    own = {"read": reads, "write": writes or reads}
    if direction == "mix":
        buckets = [(reads, reads.credits if writes else regained(options, tests, reads, None))]
        if writes is not None:
            buckets.append((writes, regained(options, tests, writes, "write")))
    else:
        side = direction if writes is not None else None
        bucket = own[direction]
        buckets = [(bucket, regained(options, tests, bucket, side))]
    seconds = max(  # half seconds up: fio's runtime takes milliseconds
        math.ceil(2 * credits / (burst.ceiling - burst.baseline)) / 2 for burst, credits in buckets
    )
    return Workload(
        drain_name(max(1.0, seconds), test),
        DIRECTIONS[direction],
        bs_bytes=4 * KIB,
        rwmixread_pct=50 if direction == "mix" else None,
        iodepth=BURST_QD,
        ioengine=options.ioengine,
        size_bytes=options.size_bytes,
        runtime_s=max(1.0, seconds),
        ramp_time_s=0.0,
    )


def bytes_lead_in(
    options: LimitsOptions, tests: Sequence[TestResult], test: Next
) -> Workload | None:
    """The drain of a MB/s bucket ahead of ``test`` in its fio process (None: no MB/s
    bucket is known, ``test`` is a probe, or of 4 KiB): :data:`BYTES_BS` requests at
    :data:`BYTES_QD` in the test's direction (a mix: both), for the seconds at the MB/s
    ceiling that spend what the bucket can have regained since its last drain
    (:func:`bytes_regained`, in requests of :data:`BYTES_BS`), half seconds up, at least
    one; as :func:`lead_in` does for a bucket of I/Os. A test of 4 KiB does far less than
    a MB/s cap (its IOPS cap's bytes): it is not lifted, and leaves the bucket to fill."""
    direction = SIDE.get(test.direction, test.direction)
    if direction not in ("read", "write", "mix") or test.bs_bytes <= 4 * KIB:
        return None
    reads = bytes_burst_seen(options, tests)
    if reads is None:
        return None
    writes = burst_seen(options, tests, WBBURST, largest=True)
    own = {"read": reads, "write": writes or reads, "mix": reads}
    side = direction if writes is not None and direction != "mix" else None
    bucket = own[direction]
    credits = bytes_regained(options, tests, bucket, side)
    seconds = math.ceil(2 * credits / (bucket.ceiling - bucket.baseline)) / 2
    if writes is not None and direction == "mix":  # each bucket: the longer drain
        more = bytes_regained(options, tests, writes, "write")
        seconds = max(seconds, math.ceil(2 * more / (writes.ceiling - writes.baseline)) / 2)
    return Workload(
        drain_name(max(1.0, seconds), test, "b"),
        DIRECTIONS[direction],
        bs_bytes=BYTES_BS,
        rwmixread_pct=50 if direction == "mix" else None,
        iodepth=BYTES_QD,
        ioengine=options.ioengine,
        size_bytes=options.size_bytes,
        runtime_s=max(1.0, seconds),
        ramp_time_s=0.0,
    )


PROCESS_GAP_S = 0.7
"""The idle time between two fio processes on a lab guest (s; its rounds took 0.7 s
more than their fio runtime on average: BENCHMARKS.md, bench/limits): what a bucket
regained after each test that spent it before its probe, as the plan sizes its drains
(its results carry no times). The card measures each gap where fio's logs or outputs
place the rounds (report/limits_card.py): under a busy host a gap was 1.5 s."""
BYTES_GAP_S = 4.0
"""The idle time between two fio processes a MB/s bucket's drain allows for (s): twice
:data:`DRAIN_GAP_S`. A test's ramp spends what a longer gap brought back only as fast as
its requests exceed the MB/s cap, and a test of 16 KiB at an IOPS cap hardly does: the
credits it cannot spend lift it."""


def bytes_regained(
    options: LimitsOptions, tests: Sequence[TestResult], burst: Burst, side: str | None
) -> float:
    """The most credits (requests of :data:`BYTES_BS`) the MB/s bucket of ``burst``
    (the MB/s burst probe's) can hold now: empty after its last drain or probe, refilled
    at its baseline through every test since below it (``side``: that direction's bytes
    count, None: both) and :data:`BYTES_GAP_S` before each fio process; at most the
    bucket."""
    back = 0.0
    for test in reversed(tests):
        if test.name.startswith("bdrain-") or test.name in (BBURST.name, WBBURST.name):
            break
        drain = drained_s(test.name) is not None
        done = (
            sum(d.bw_bytes_per_s for name, d in test.directions.items() if side in (None, name))
            / BYTES_BS
        )
        seconds = test.runtime_ms / 1000 + (0.0 if drain else options.ramp_time_s)
        back += max(0.0, burst.baseline - done) * seconds
        back += 0.0 if drain else burst.baseline * BYTES_GAP_S
    return min(burst.credits, back)


def bytes_burst_seen(options: LimitsOptions, tests: Sequence[TestResult]) -> Burst | None:
    """The burst of the MB/s burst probe (:data:`BBURST`, in requests of :data:`BYTES_BS`
    a second; the larger of its two estimates: the drains' bucket), counted whole: the
    reads' larger tests before it
    (:func:`bytes_stale`) spent part of it, what they did above its baseline added
    (:func:`~volbench.analysis.burst_series.with_spent`, in the order they ran), less
    what came back in the gap after each (:data:`PROCESS_GAP_S`)."""
    burst = burst_seen(options, tests, BBURST, largest=True)
    if burst is None:
        return None
    stale = bytes_stale(tests)
    spent = [
        (t.bw_bytes_per_s / BYTES_BS, t.runtime_ms / 1000 + options.ramp_time_s, PROCESS_GAP_S)
        for t in tests
        if t.name in stale
    ]
    return with_spent(burst, spent)


def bytes_stale(tests: Sequence[TestResult]) -> set[str]:
    """The reads' tests larger than 4 KiB run before the MB/s burst probe, when it found
    a bucket (none otherwise): they may have run on its credits, and count no more (the
    experiment measures them again, ``-again``, after a drain)."""
    names = [t.name for t in tests]
    if BBURST.name not in names or burst_seen(LimitsOptions(), tests, BBURST) is None:
        return set()
    found = set()
    for name in names[: names.index(BBURST.name)]:
        parsed = parse_name(name)
        if parsed and parsed.direction == "read" and parsed.bs_bytes > 4 * KIB:
            found.add(name)
    return found


def regained(
    options: LimitsOptions, tests: Sequence[TestResult], burst: Burst, side: str | None
) -> float:
    """The most credits (I/Os) ``burst``'s bucket can hold when the next test starts: it
    was empty after the last test's drain (or after a burst probe), and refills at its
    baseline (QEMU's leak; AWS's earn rate) through what the last test did below it
    (``side``: the I/Os of that direction count, None: of both, one bucket) and through
    :data:`DRAIN_GAP_S` between processes; at most the bucket."""
    last = next((t for t in reversed(tests) if drained_s(t.name) is None), None)
    below = 0.0
    if last is not None:
        done = sum(d.iops for name, d in last.directions.items() if side in (None, name))
        seconds = last.runtime_ms / 1000 + options.ramp_time_s
        below = max(0.0, burst.baseline - done) * seconds
    return min(burst.credits, burst.baseline * DRAIN_GAP_S + below)


def refill_tests(options: LimitsOptions, burst: Burst | None) -> tuple[Next, ...]:
    """The rest and the second burst probe that measure how fast the credits of ``burst``
    (the burst probe's) come back (:mod:`volbench.analysis.burst_refill`), or none: no
    burst, or they do not fit. Together at most a quarter of the budget, and the
    ladder's first tests still fit after them."""
    if burst is None:
        return ()
    probe_s = probe_seconds(burst, options.burst_s)
    room = min(options.budget_s / 4, options.budget_s - options.burst_s - 3 * options.test_s)
    rest_s = rest_seconds(burst, room - probe_s)
    if rest_s is None:
        return ()
    return (
        dataclasses.replace(REST, runtime_s=rest_s),
        dataclasses.replace(REFILL, runtime_s=probe_s),
    )


def _past(done: Sequence[Probe], direction: str) -> list[Probe]:
    """The sizes of ``direction``'s ladder at its deep queue that ran more than
    :data:`SAME` below the 4 KiB IOPS there (past the IOPS cap's reach, at a MB/s
    level), smallest first."""
    sizes = size_ladder(done, direction)
    return [p for p in sizes[1:] if p.iops < (1 - SAME) * sizes[0].iops]


def past_cap(done: Sequence[Probe], direction: str) -> bool:
    """Whether a size of ``direction``'s ladder ran past the IOPS cap (:func:`_past`)."""
    return bool(_past(done, direction))


def _mbps_next(done: Sequence[Probe], merged: Sequence[Probe], direction: str) -> Next | None:
    """``direction``'s MB/s test, once its size ladder is done and ran past the IOPS cap:
    the first size past it at :data:`MBPS_QD` (the deep queue's, when shallower), for
    :data:`MIN_MBPS_TEST_S` at least; the fit reads the MB/s cap from it
    (:func:`~volbench.analysis.limiter_model.fit`). Where it ran at the IOPS cap (a busy
    machine held the ladder's point at that size under the cap: 32 KiB reads at 1,000
    IOPS and 40 MB/s caps), once more at the next size past it. ``done``: as measured;
    ``merged``: each point at its higher figure (:func:`settled`: a point measured again
    is one)."""
    kind = MBPS_TEST[direction]
    past = _past(merged, direction)
    deep = deep_queue(merged, direction)
    if deep is None or not past:
        return None
    tests = [p for p in done if p.direction == kind]
    if not tests:
        return Next(kind, past[0].bs_bytes, min(deep, MBPS_QD))
    larger = [p for p in past if p.bs_bytes > tests[-1].bs_bytes]
    at_cap = tests[-1].iops >= (1 - SAME) * size_ladder(merged, direction)[0].iops
    if len(tests) == 1 and at_cap and larger:  # its size was not past the cap after all
        return Next(kind, larger[0].bs_bytes, min(deep, MBPS_QD))
    return None


def next_test(
    done: Sequence[Probe],
    refill: Sequence[Next] = (),
    writes_burst: bool = False,
    two_buckets: bool = False,
    bytes_probe: bool = False,
    writes_bytes_burst: bool = False,
) -> Next | None:
    """The experiment's next test from what ``done`` measured (None: it is over);
    ``refill``: the rest and second burst probe yet to run (:func:`refill_tests`), right
    after the burst probe; ``writes_burst``: the reads burst and the write burst probe
    is yet to run, after the reads' tests and before the writes'; ``two_buckets``: it
    found a bucket of the writes' own (no 4 KiB mix: :func:`_mix_next`); ``bytes_probe``:
    the MB/s burst probe (:data:`BBURST`) is due (a read size ran past the IOPS cap,
    :func:`past_cap`, and it has not run); ``writes_bytes_burst``: the reads' MB/s burst,
    and the writes' (:data:`WBBURST`) is yet to run. The reads' ladders come first, whole:
    a bucket of the reads' own stays empty through them."""
    if not done:
        return BURST
    if refill:
        return refill[0]
    if bytes_probe:
        return BBURST
    merged = settled(done)

    def direction_next(side: str) -> Next | None:
        return (
            _ladder_next(merged, side)
            or _dip_next(done, merged, side, sizes=False)
            or _sizes_next(merged, side)
            or _dip_next(done, merged, side, sizes=True)
            or _mbps_next(done, merged, side)
        )

    reads = direction_next("read")
    if reads is not None:
        return reads
    if writes_burst:
        return WBURST
    if writes_bytes_burst:
        return WBBURST
    return direction_next("write") or _mix_next(merged, two_buckets, done)


def _own_runtime(options: LimitsOptions, direction: str) -> float | None:
    """The runtime (s) of a test whose kind has one of its own: the burst probes', the
    MB/s burst probes', the MB/s tests' (None: the experiment's usual)."""
    if direction in ("burst", "wburst"):
        return options.burst_s
    if direction in ("bburst", "wbburst"):
        return options.bytes_burst_s
    if direction in SIDE:
        return max(options.runtime_s, MIN_MBPS_TEST_S)
    return None


def queue_runtime(options: LimitsOptions, done: Sequence[Probe], test: Next) -> float | None:
    """The runtime (s) of a ladder test (reads', writes', a mix's) long enough that its
    queue is at most :data:`DRAIN_SHARE` of the I/Os it does at the best 4 KiB rate its
    direction measured so far (a mix's: its own once measured, else the lower of the
    reads' and the writes'), the experiment's usual at least, a sixteenth of the budget
    at most (None: the usual, as for a test of another kind or with no rate measured
    yet)."""
    if test.direction not in ("read", "write", "mix"):
        return None
    sides = ("read", "write") if test.direction == "mix" else (test.direction,)
    if test.direction == "mix" and queue_ladder(done, "mix"):
        sides = ("mix",)
    rate = min(max((p.iops for p in queue_ladder(done, side)), default=0.0) for side in sides)
    if rate <= 0:
        return None
    wanted = test.iodepth / (DRAIN_SHARE * rate)
    longest = max(options.runtime_s, options.budget_s / 16)
    seconds = min(longest, math.ceil(wanted * 2) / 2)  # half seconds: fio's windows
    return seconds if seconds > options.runtime_s else None


def workload(options: LimitsOptions, test: Next) -> Workload:
    """The fio job of ``test``: a burst probe from its first second (no ramp: the ceiling
    is there), the rest at :data:`REST_IOPS`."""
    unramped = test.direction in ("burst", "refill", "rest", "wburst", "bburst", "wbburst")
    runtime = test.runtime_s or _own_runtime(options, test.direction)
    ramp = options.ramp_time_s
    return Workload(
        test.name,
        DIRECTIONS[test.direction],
        bs_bytes=test.bs_bytes,
        rwmixread_pct=50 if test.direction == "mix" else None,
        iodepth=test.iodepth,
        ioengine=options.ioengine,
        size_bytes=options.size_bytes,
        runtime_s=runtime or options.runtime_s,
        ramp_time_s=0.0 if unramped else ramp,
        rate_iops=REST_IOPS if test.direction == "rest" else None,
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
        seen = burst_seen(options, tests)
        refill = refill_tests(options, seen)
        names = {t.name for t in tests}
        spent = spent_s(options, {t.name: t.runtime_ms for t in tests}, refill)
        writes_burst = seen is not None and WBURST.name not in names
        two = burst_seen(options, tests, WBURST) is not None
        bytes_due = BBURST.name not in names and past_cap(settled(done), "read")
        bytes_seen = burst_seen(options, tests, BBURST) is not None
        test = next_test(
            done,
            [t for t in refill if t.name not in names],
            writes_burst,
            two,
            bytes_due,
            bytes_seen and WBBURST.name not in names,
        )
        if test is None:
            return None
        if test.name in bytes_stale(tests):  # ran on the MB/s bucket's credits: again
            test = dataclasses.replace(test, again=True)
        drains = (lead_in(options, tests, test), bytes_lead_in(options, tests, test))
        longer = queue_runtime(options, done, test) if test.runtime_s is None else None
        for runtime in dict.fromkeys((longer or test.runtime_s, test.runtime_s)):  # if it fits
            round_ = (
                *(d for d in drains if d is not None),
                workload(options, dataclasses.replace(test, runtime_s=runtime)),
            )
            if spent + planned_seconds(round_) <= options.budget_s and test.name not in names:
                return round_
        return None  # out of time; or a test that measured nothing asked for again

    # the burst probes (reads', writes'), the rest and the second probe, and the ladders'
    # tests in the time left
    most = 6 + int((options.budget_s - options.burst_s) // options.test_s)
    return PlanSpec(
        NAME,
        rounds=(),
        options={NAME: json_object(options)},
        next_round=next_round,
        budget=(most, options.budget_s),
        together=True,  # a drain and its test in one fio process: no gap between them
    )


def spent_s(options: LimitsOptions, ran: Mapping[str, float], probed: Sequence[Next] = ()) -> float:
    """The seconds of its budget the experiment's tests ``ran`` (name: fio's runtime in
    ms) took: the burst probes', and the rest's and second probe's (``probed``, chosen
    from the burst), as planned; a drain's from its name; a ladder test's as planned, or
    as long as fio ran it when longer (:func:`queue_runtime` lengthened it); none for a
    name not of the experiment."""
    seconds = {
        t.name: workload(options, t).duration_s for t in (BURST, WBURST, BBURST, WBBURST, *probed)
    }
    return sum(_spent_s(options, seconds, name, ms) for name, ms in ran.items())


def _spent_s(options: LimitsOptions, seconds: dict[str, float], name: str, ran_ms: float) -> float:
    drained = drained_s(name)
    if drained is not None:
        return drained
    parsed = parse_name(name)
    if parsed is None:
        return 0.0
    if name in seconds:
        return seconds[name]
    planned = workload(options, parsed)
    return max(planned.duration_s, planned.ramp_time_s + ran_ms / 1000)
