"""How fast a burst's credits come back: the refill rate of a credit bucket, from two
burst probes with a rest between them (:mod:`volbench.plans.limits`), and the rest and
second probe that measure it.

A bucket (:mod:`volbench.analysis.burst_series`) refills while the volume does less
than its baseline: QEMU's leaky bucket (util/throttle.c) leaks at the baseline rate
(``avg``) whatever the guest does, so an idle volume regains credits at its baseline;
AWS gp2 volumes earn I/O credits at their baseline, 3 IOPS per GiB each second (the
EBS user guide, "I/O credits and burst performance"). Other limiters may refill
faster or slower: the experiment measures it.

1. The first burst probe starts from a rested volume and empties the bucket: ``K``
   credits (I/Os above the baseline ``B``) at the ceiling ``C`` for ``t1`` seconds,
   then the baseline for a plateau's time at least (the bucket is empty when it ends).
2. A rest of ``r`` seconds (almost) without I/O. A bucket refilling at the baseline is
   full again after ``K / B`` seconds: the rest is half that (:func:`rest_seconds`),
   so that a part comes back, not the whole (the rate, not the bucket's size).
3. A second burst probe spends what came back, ``K2`` credits at ``C - B`` a second:
   the refill rate is ``K2 / r`` I/Os a second (:func:`refill_rate`). A bucket full
   again (``K2`` within :data:`FULL` of ``K``) filled before the rest ended: the rate
   is at least that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from volbench.analysis.burst_series import MIN_PLATEAU_S, Burst

FULL = 0.10
"""The second probe's credits within this share of the first's: the bucket was full
again (the rate a lower bound)."""
REST_SHARE = 0.5
"""The share of the bucket the rest lets come back, at a refill of the baseline."""
MOST_SHARE = 0.8
"""The most of the bucket a rest may let come back (at the baseline) to make the second
burst long enough to see: more, and a part could not be told from the whole."""
SEEN_S = MIN_PLATEAU_S + 1.0
"""The second burst's least length at the ceiling (s): a plateau and a window more,
for :func:`~volbench.analysis.burst_series.find_burst` to find it."""
MIN_REST_S = 5.0
"""The shortest rest (s): a few seconds, well above the gaps between fio processes."""
FIO_GAP_S = 0.3
"""The idle time between two fio processes (s; BENCHMARKS.md, "bench/test_gaps": 0.28 to
0.33 s a test): the volume rests through the gap before the rest and the one after it
too (:func:`rested_s`)."""
LOG_WINDOW_S = 1.0
"""fio's per-second log windows (``log_avg_msec``) the credits are counted in (s)."""
PROBE_MARGIN = 1.25
"""The second probe outlasts the first burst's estimated length by this factor."""


@dataclass(frozen=True)
class Refill:
    """A bucket's refill rate: ``rate`` credits (``unit``: I/Os) a second came back over
    ``rest_s`` seconds of rest, ``credits`` in all, of a ``bucket`` the first probe
    emptied; ``spread`` its relative uncertainty; ``lower_bound`` when the bucket was
    full again (the rate is at least ``rate``); ``tests`` the probes and the rest."""

    rate: float
    spread: float
    tests: tuple[str, ...]
    rest_s: float
    credits: float
    bucket: float
    lower_bound: bool
    unit: str = "I/Os"

    @property
    def full_s(self) -> float:
        """Seconds an empty bucket takes to refill at this rate."""
        return self.bucket / self.rate

    def sentence(self) -> str:
        """``600 I/Os a second (the bucket refills in 50 s)``."""
        if self.lower_bound:
            return (
                f"at least {self.rate:,.0f} {self.unit} a second (the bucket was full again"
                f" after the {self.rest_s:,.0f} s rest)"
            )
        return f"{self.rate:,.0f} {self.unit} a second (the bucket refills in {self.full_s:,.0f} s)"


def refill_rate(first: Burst, second: Burst, rest_s: float, tests: tuple[str, ...] = ()) -> Refill:
    """The refill rate from the burst of the first probe (from a rested volume, its bucket
    emptied), the burst of the second, and the rest between them (s).

    The spread adds in quadrature the second burst's plateau noise (as a share of its
    level), half a log window at its ceiling (the window the rate fell in counts in
    part: ``0.5 x LOG_WINDOW_S / seconds``) and half the two gaps between fio processes
    counted in the rest (``FIO_GAP_S / rest_s``: their length is an estimate)."""
    if rest_s <= 0:
        raise ValueError(f"a rest of {rest_s} s")
    spread = math.hypot(second.spread, 0.5 * LOG_WINDOW_S / second.seconds, FIO_GAP_S / rest_s)
    full = second.credits >= (1 - FULL) * first.credits
    return Refill(
        second.credits / rest_s,
        spread,
        tests,
        rest_s,
        second.credits,
        first.credits,
        full,
        first.amount,
    )


def rested_s(runtime_s: float) -> float:
    """The time a volume rests between the two burst probes (s): the rest test's runtime
    and the gaps between fio processes before and after it (:data:`FIO_GAP_S`)."""
    return runtime_s + 2 * FIO_GAP_S


def rest_seconds(burst: Burst, most_s: float) -> float | None:
    """The rest after ``burst`` (s): :data:`REST_SHARE` of the ``credits / baseline``
    seconds a bucket refilling at the baseline takes to fill, longer when that would
    bring back less than :data:`SEEN_S` at the ceiling (``SEEN_S x (ceiling - baseline)
    / baseline``), at least :data:`MIN_REST_S`, in whole seconds up; None when that
    needs more than :data:`MOST_SHARE` of the bucket or more than ``most_s`` (the
    budget's room)."""
    full_s = burst.credits / burst.baseline
    seen_s = SEEN_S * (burst.ceiling - burst.baseline) / burst.baseline
    rest = float(math.ceil(max(REST_SHARE * full_s, seen_s, MIN_REST_S)))
    if rest > MOST_SHARE * full_s or rest > most_s:
        return None
    return rest


def probe_seconds(burst: Burst, most_s: float) -> float:
    """The second probe's runtime (s): long enough to empty all that can have come back
    (the first burst's credits at most, spent at ``ceiling - baseline`` a second: its
    seconds, x :data:`PROBE_MARGIN`), then a baseline plateau of twice
    :data:`MIN_PLATEAU_S`; whole seconds, at most ``most_s`` (the first probe's)."""
    return min(most_s, float(math.ceil(PROBE_MARGIN * burst.seconds + 2 * MIN_PLATEAU_S)))
