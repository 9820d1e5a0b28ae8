"""How fast a burst's credits come back (analysis/burst_refill.py), on QEMU-like numbers:
a baseline of 600 IOPS, a ceiling of 3,000, a 30,000-I/O bucket (12.5 s of burst from
rest) refilling at the baseline, full again 50 s after it emptied."""

from __future__ import annotations

import pytest

from volbench.analysis.burst_refill import (
    FIO_GAP_S,
    Refill,
    probe_seconds,
    refill_rate,
    rest_seconds,
    rested_s,
)
from volbench.analysis.burst_series import Burst


def burst(credits: float, ceiling: float = 3000.0, baseline: float = 600.0) -> Burst:
    """A steady burst of ``credits`` above ``baseline`` (no noise)."""
    seconds = credits / (ceiling - baseline)
    return Burst(ceiling, baseline, credits, seconds, 0.0, seconds)


FIRST = burst(30_000.0)
TESTS = ("burst-4k-qd32", "rest-4k-qd1", "refill-4k-qd32")


def test_half_the_bucket_back_in_a_25_s_rest_is_600_a_second() -> None:
    refill = refill_rate(FIRST, burst(15_000.0), 25.0, TESTS)
    assert refill.rate == pytest.approx(600.0)
    assert refill.full_s == pytest.approx(50.0)
    assert refill.lower_bound is False
    assert (refill.credits, refill.bucket, refill.rest_s) == (15_000.0, 30_000.0, 25.0)
    assert refill.tests == TESTS
    assert refill.sentence() == "600 I/Os a second (the bucket refills in 50 s)"
    # half a 1 s window of the 6.25 s burst, the gaps' 0.3 s of the 25 s rest; no noise
    assert refill.spread == pytest.approx(((0.5 / 6.25) ** 2 + (0.3 / 25) ** 2) ** 0.5)


def test_a_bucket_full_again_gives_a_lower_bound() -> None:
    """29,000 of 30,000 back in 25 s: within 10 % of the bucket, it may have been full
    before the rest ended: at least 1,160 a second."""
    refill = refill_rate(FIRST, burst(29_000.0), 25.0, TESTS)
    assert refill.lower_bound is True
    assert refill.rate == pytest.approx(1160.0)
    assert refill.sentence() == (
        "at least 1,160 I/Os a second (the bucket was full again after the 25 s rest)"
    )
    assert refill_rate(FIRST, burst(26_900.0), 25.0).lower_bound is False  # 89.7 %


def test_the_spread_grows_with_the_plateaus_noise() -> None:
    noisy = Burst(3000.0, 600.0, 15_000.0, 6.25, 0.0, 6.25, "IOPS", 150.0, 12.0)  # 5 %, 2 %
    quiet = refill_rate(FIRST, burst(15_000.0), 25.0)
    assert refill_rate(FIRST, noisy, 25.0).spread == pytest.approx(
        (quiet.spread**2 + 0.05**2) ** 0.5
    )


def test_a_rest_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="a rest of 0"):
        refill_rate(FIRST, burst(15_000.0), 0.0)


def test_the_rest_is_half_the_refill_at_the_baseline() -> None:
    assert rest_seconds(FIRST, 150.0) == 25.0  # 30,000 / 600 = 50 s to fill, half
    assert rest_seconds(FIRST, 24.0) is None  # the budget's room is shorter


def test_a_short_burst_rests_long_enough_to_see_its_second() -> None:
    """The lab's 1,000 from a 4,000-I/O bucket, then 300 (5.7 s): half the 13.3 s refill
    brings back 2.9 s of burst, less than a plateau; 10 s bring back 4.3 s (4 at least:
    3 s and a window), 75 % of the bucket."""
    lab = burst(4000.0, 1000.0, 300.0)
    rest = rest_seconds(lab, 100.0)
    assert rest == 10.0  # 4 x 700 / 300 = 9.3 s, whole seconds up
    assert rest * 300 / 700 >= 4.0


def test_no_rest_for_a_burst_too_short_to_see_a_part_of() -> None:
    """3 s of burst: 4 s of it back would take more than 80 % of the bucket (a part not
    told from the whole); a bucket of 2.6 s at the baseline: even the shortest rest (5 s)
    fills it."""
    assert rest_seconds(burst(3 * 2400.0), 1000.0) is None
    assert rest_seconds(burst(7680.0, 3000.0, 2900.0), 1000.0) is None


def test_the_second_probe_spends_a_whole_bucket_and_shows_a_baseline() -> None:
    assert probe_seconds(FIRST, 44.0) == 22.0  # 12.5 s x 1.25, 6 s of baseline, up
    assert probe_seconds(FIRST, 12.0) == 12.0  # at most the first probe's


def test_the_volume_rests_through_the_gaps_around_the_rest() -> None:
    assert rested_s(24.0) == pytest.approx(24.0 + 2 * FIO_GAP_S)


def test_a_refill_says_its_unit() -> None:
    mb = Burst(250.0, 125.0, 1250.0, 10.0, 0.0, 10.0, "MB/s")
    refill = refill_rate(mb, Burst(250.0, 125.0, 500.0, 4.0, 0.0, 4.0, "MB/s"), 10.0)
    assert refill == Refill(50.0, refill.spread, (), 10.0, 500.0, 1250.0, False, "MB")
    assert refill.sentence() == "50 MB a second (the bucket refills in 25 s)"
