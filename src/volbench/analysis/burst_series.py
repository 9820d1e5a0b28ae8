"""Bursts measured: a test's per-second rate held a high plateau, then a lower one.

A volume with a credit bucket (AWS gp2 I/O credits, Azure P1-P20 and E1-E30 bursting,
Alibaba ESSD AutoPL; QEMU's ``throttling.iops-total-max`` with ``-max-length``) runs at
its burst ceiling while its bucket lasts, then at its baseline. In a test's per-second
series (fio's ``log_avg_msec`` windows, analysis/timeseries.py) that is one step down
in the mean. :func:`find_burst` finds it:

1. the step: the least-squares estimate of a single change point in the mean, the
   split ``k`` minimising the squared deviations of ``x[:k]`` and ``x[k:]`` from their
   own means (Hinkley, "Inference about the change-point in a sequence of random
   variables", Biometrika 57(1), 1970), each side at least :data:`MIN_PLATEAU_S`;
2. the plateaus: ceiling and baseline are the medians of the two sides; the noise of
   each side is its median absolute deviation from its median x 1.4826 (which
   estimates the standard deviation of normal noise: Hampel, "The influence curve and
   its role in robust estimation", JASA 69, 1974), robust to a warm-up window and to
   the window the rate fell in;
3. a burst only when the ceiling comes first and is :data:`MIN_RISE` above the
   baseline (less is within the 0.9-1.1 band in which ``check`` calls two figures the
   same; gp2's smallest burst above its baseline, 3,000 over 2,700 IOPS at 900 GiB, is
   11 %), and the step is :data:`STEP_SIGMAS` x the noise of either plateau (a flat,
   rising or noisy series, a slow decline: none).

The I/Os above the baseline are the credits spent: ``sum((x_i - baseline) x window)``
over the burst's windows (from the test's start to the first window back within
:data:`TAIL_SIGMAS` x the baseline's noise of it; windows below the baseline count 0);
the seconds at the ceiling are ``credits / (ceiling - baseline)``: 12 windows at
3,000 and one at 2,800 above a 1,000 baseline are 25,800 I/Os, 12.9 s.

A plan that must choose its next test before the per-second logs are stored reads a
burst off fio's own summary of its rate windows instead (:func:`burst_from_samples`).

The bursts of a stored run's tests: analysis/stored_bursts.py.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

MIN_PLATEAU_S = 3.0
"""Each plateau lasts at least this long (s): a shorter burst, or a last window fio
cut short, is not a plateau."""
MIN_RISE = 0.10
"""The ceiling is at least this share above the baseline."""
STEP_SIGMAS = 5.0
"""The step is at least this many times the noise (robust standard deviation) of each
plateau."""
TAIL_SIGMAS = 3.0
"""Windows after the step more than this many times the baseline's noise above it are
still the burst (the rate fell within them)."""
NOISE_FLOOR = 0.01
"""The least noise assumed, as a share of the baseline (a synthetic or quantised
series can have none)."""
LIMITER_CV = 0.10
"""A limiter holds each plateau steady: its robust standard deviation at most this share
of its level (AWS EBS io1/io2: within 10 % of provisioned IOPS 99.9 % of the time, the
EBS user guide's "Provisioned IOPS SSD volumes"). An SSD after its write cliff (its
write cache full, garbage collection at work) varies more."""
MAD_SCALE = 1.4826
"""Median absolute deviation x this = the standard deviation of normal noise."""
SAMPLE_FIT = 0.4
"""Two plateaus put the slowest window (fio's ``iops_min``) within this share of the step
of the baseline the moments give (a few noise widths below it); one noisy level (about
0.7 of the step its moments give, for 80 normal windows) or a steady decline (0.5) puts
it farther."""


@dataclass(frozen=True)
class Burst:
    """A burst: ``ceiling`` and ``baseline`` in ``unit`` per second (medians of the two
    plateaus), ``credits`` the units done above the baseline during it (I/Os or MB),
    ``seconds`` those credits at the ceiling; ``start_s`` and ``end_s`` on the series'
    clock (s): the burst's start and ``start_s + seconds``; ``ceiling_noise`` and
    ``baseline_noise`` each plateau's robust standard deviation (``unit``/s)."""

    ceiling: float
    baseline: float
    credits: float
    seconds: float
    start_s: float
    end_s: float
    unit: str = "IOPS"
    ceiling_noise: float = 0.0
    baseline_noise: float = 0.0

    @property
    def spread(self) -> float:
        """The larger plateau's noise as a share of its level."""
        return max(self.ceiling_noise / self.ceiling, self.baseline_noise / self.baseline)

    @property
    def steady(self) -> bool:
        """Both plateaus as steady as a limiter holds them (:data:`LIMITER_CV`)."""
        return self.spread <= LIMITER_CV

    @property
    def amount(self) -> str:
        """What a credit is: ``I/Os`` for IOPS, ``MB`` for MB/s."""
        return "I/Os" if self.unit == "IOPS" else self.unit.split("/")[0]

    def sentence(self) -> str:
        """``burst: 3,000 IOPS for 12.9 s (about 25,800 I/Os above the baseline), then
        1,000``."""
        return (
            f"burst: {self.ceiling:,.0f} {self.unit} for {self.seconds:,.1f} s (about"
            f" {self.credits:,.0f} {self.amount} above the baseline), then {self.baseline:,.0f}"
        )


def _noise(values: Sequence[float]) -> float:
    """Robust standard deviation: MAD from the median x :data:`MAD_SCALE`."""
    middle = statistics.median(values)
    return MAD_SCALE * statistics.median(abs(v - middle) for v in values)


def change_point(values: Sequence[float], min_len: int) -> int | None:
    """The split ``k`` (``values[:k]``, ``values[k:]``, each ``min_len`` long at least)
    with the least sum of squared deviations from each side's mean (Hinkley 1970);
    None when the series is too short. O(n) with prefix sums."""
    n = len(values)
    if min_len < 1 or n < 2 * min_len:
        return None
    sums = [0.0, *accumulate(values)]
    squares = [0.0, *accumulate(v * v for v in values)]

    def sse(start: int, end: int) -> float:
        total = sums[end] - sums[start]
        return squares[end] - squares[start] - total * total / (end - start)

    return min(range(min_len, n - min_len + 1), key=lambda k: sse(0, k) + sse(k, n))


def find_burst(points: Sequence[tuple[float, float]], unit: str = "IOPS") -> Burst | None:
    """The burst of a per-second series ``points`` ((window end time in s, rate),
    time ascending), or None (see the module docstring for the method)."""
    if len(points) < 2:
        return None
    times = [t for t, _ in points]
    values = [v for _, v in points]
    window = statistics.median(b - a for a, b in pairwise(times))
    if window <= 0:
        return None
    min_len = max(1, math.ceil(MIN_PLATEAU_S / window - 1e-9))
    k = change_point(values, min_len)
    if k is None:
        return None
    high, low = values[:k], values[k:]
    ceiling, baseline = statistics.median(high), statistics.median(low)
    step = ceiling - baseline
    if baseline <= 0 or step < MIN_RISE * baseline:
        return None
    if sum(v > baseline + step / 2 for v in high) < min_len:  # held for a plateau's time
        return None
    high_noise, low_noise = _noise(high), _noise(low)
    floor = max(low_noise, NOISE_FLOOR * baseline)
    if step < STEP_SIGMAS * max(high_noise, floor):
        return None
    end = k
    while end < len(values) and values[end] - baseline > TAIL_SIGMAS * floor:
        end += 1
    credits = sum(max(0.0, v - baseline) for v in values[:end]) * window
    seconds = credits / step
    start = times[0] - window
    return Burst(
        ceiling, baseline, credits, seconds, start, start + seconds, unit, high_noise, low_noise
    )


def burst_from_samples(
    mean: float,
    low: float,
    high: float,
    stddev: float,
    seconds: float,
    unit: str = "IOPS",
    largest: bool = False,
) -> Burst | None:
    """A burst estimated from fio's summary of a test's rate windows (``iops_mean``,
    ``iops_min``, ``iops_max``, ``iops_stddev`` of its ``iopsavgtime`` windows, 500 ms
    by default, over ``seconds`` of the test), or None: what a plan knows of a test's
    course before its per-second logs are stored.

    Two plateaus, a share ``p`` of the time at the ceiling ``C`` and the rest at the
    baseline ``B``, have the mean ``M = B + p (C - B)`` and the variance
    ``s^2 = p (1 - p) (C - B)^2`` (a two-point distribution); with ``C`` the fastest
    window these give ``C - B = ((C - M)^2 + s^2) / (C - M)``, ``p = s^2 / ((C - M)^2 +
    s^2)`` and the credits ``p (C - B) x seconds = s^2 x seconds / (C - M)`` (the method of
    moments). A burst, as :func:`find_burst` has it, only when the ceiling is
    :data:`MIN_RISE` above the baseline, each plateau lasts :data:`MIN_PLATEAU_S` and
    the slowest window lies where two plateaus put it (:data:`SAMPLE_FIT`). The
    plateaus' noise is not known (0): an estimate to plan with, not a measurement.

    The fastest window may lie above the ceiling (QEMU lets a tenth of a second's
    burst through at once: a first window 10 % above it), which makes the bucket look
    smaller (a lab guest's 105.6 MB: 87 MB); the same moments anchored at the slowest
    window instead (``B`` the slowest, ``C - B = ((M - B)^2 + s^2) / (M - B)``) do not
    see it, but take a slow window below the baseline for it (a bucket a few % larger).
    ``largest``: of the two, the larger bucket, for a drain that must leave no credits
    to lift the test after it; the slowest window's anchor only where the fastest
    one's finds a burst (no burst is found that it alone would see)."""
    if not (seconds > 0 and stddev > 0 and high > mean > 0 and low >= 0):
        return None
    found = _two_plateaus(mean, high, high - mean, stddev, seconds, low, unit)
    if found is None or not largest or mean <= low:
        return found
    other = _two_plateaus(mean, low, low - mean, stddev, seconds, high, unit)
    return other if other is not None and other.credits > found.credits else found


def _two_plateaus(
    mean: float,
    anchor: float,
    lead: float,
    stddev: float,
    seconds: float,
    other: float,
    unit: str,
) -> Burst | None:
    """The two plateaus of :func:`burst_from_samples` with one of them at ``anchor``
    (the fastest window, ``lead = anchor - mean > 0``; or the slowest, ``lead < 0``),
    the other window ``other`` where the two put the other extreme; None when they are
    not a burst."""
    step = (lead * lead + stddev * stddev) / abs(lead)
    ceiling, baseline = (anchor, anchor - step) if lead > 0 else (anchor + step, anchor)
    if baseline <= 0 or step < MIN_RISE * baseline:
        return None
    if abs((baseline if lead > 0 else ceiling) - other) > SAMPLE_FIT * step:
        return None
    share = stddev * stddev / (lead * lead + stddev * stddev)
    held = (share if lead > 0 else 1 - share) * seconds
    if held < MIN_PLATEAU_S or seconds - held < MIN_PLATEAU_S:
        return None
    return Burst(ceiling, baseline, held * step, held, 0.0, held, unit)


def with_spent(burst: Burst, spent: Sequence[tuple[float, float, float]]) -> Burst:
    """``burst`` as a probe measured it after tests that had spent part of its bucket:
    ``spent`` each such test in the order they ran, as its rate (``burst.unit`` a
    second), its seconds and the seconds without I/O after it (until the next test, or
    the probe). The bucket is full before the first (a volume at rest, or run below its
    baseline: the leak keeps it full); each test takes what it did above the baseline
    (or gives back at its own rate below it), each gap gives back the baseline's, and a
    bucket is never fuller than full: QEMU's leaky bucket (``throttle_leak_bucket`` in
    QEMU's util/throttle.c: the level leaks at the average rate, to zero at most). What
    was still spent when the probe began is added to its credits and to its seconds at
    the ceiling.

    Counting the gaps all at once instead overstated the refill: a lab guest's 16 KiB
    test 2.8 MB/s above a 12.8 MB/s baseline for 2 s, then 1.7 s idle, had the extra
    16 MB of that gap taken from the 64 KiB test after it (139 MB for a 156.8 MB
    bucket; walked in order: 155 MB)."""
    level = 0.0
    for rate, seconds, idle_s in spent:
        level = max(0.0, level + (rate - burst.baseline) * seconds)
        level = max(0.0, level - burst.baseline * idle_s)
    if level <= 0:
        return burst
    step = burst.ceiling - burst.baseline
    seconds = burst.seconds + level / step
    return dataclasses.replace(
        burst, credits=burst.credits + level, seconds=seconds, end_s=burst.start_s + seconds
    )
