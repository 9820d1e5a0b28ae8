"""Bursts found in per-second series: the lab's (issue 24: 3,000 IOPS for 12.9 s, then
1,000, in a 40 s test) and the series that must not make one (flat, a ramp-up at the
start, noise, a slow decline, a step within the noise band, a burst too short)."""

from __future__ import annotations

import random
import statistics

import pytest

from volbench.analysis.burst_series import (
    MIN_PLATEAU_S,
    Burst,
    burst_from_samples,
    change_point,
    find_burst,
)
from volbench.analysis.stored_bursts import burst_of_test, stored_bursts
from volbench.model import LogSeries

Points = list[tuple[float, float]]


def per_second(values: list[float]) -> Points:
    """fio's windows: the first stamped at 1 s (its end)."""
    return [(i + 1.0, v) for i, v in enumerate(values)]


def issue_24(noise: float = 0.0, seed: int = 24) -> Points:
    """3,000 IOPS for 12.9 s (12 windows, then one of 0.9 x 3,000 + 0.1 x 1,000), then
    1,000 to the end of a 40 s test; ``noise``: gaussian, as a share of each window."""
    rng = random.Random(seed)
    values = [3000.0] * 12 + [2800.0] + [1000.0] * 27
    return per_second([v * (1 + rng.gauss(0, noise)) for v in values])


def test_the_lab_series_is_a_burst_of_25800_ios() -> None:
    burst = find_burst(issue_24())
    assert burst == Burst(3000.0, 1000.0, 25800.0, pytest.approx(12.9), 0.0, pytest.approx(12.9))
    assert burst is not None
    assert burst.sentence() == (
        "burst: 3,000 IOPS for 12.9 s (about 25,800 I/Os above the baseline), then 1,000"
    )


def test_a_burst_with_3_percent_noise_is_found_within_3_percent() -> None:
    for seed in range(20):
        burst = find_burst(issue_24(0.03, seed))
        assert burst is not None, seed
        assert burst.ceiling == pytest.approx(3000, rel=0.03)
        assert burst.baseline == pytest.approx(1000, rel=0.03)
        assert burst.credits == pytest.approx(25800, rel=0.05)
        assert burst.seconds == pytest.approx(12.9, abs=0.7)


def test_the_window_the_rate_fell_in_counts_whichever_side_it_lands() -> None:
    # fell 0.1 s into window 13: 0.1 x 3,000 + 0.9 x 1,000 = 1,200, nearer the baseline
    burst = find_burst(per_second([3000.0] * 12 + [1200.0] + [1000.0] * 27))
    assert burst is not None
    assert burst.credits == pytest.approx(24200) and burst.seconds == pytest.approx(12.1)


def test_a_warm_up_window_is_part_of_the_burst_not_its_ceiling() -> None:
    burst = find_burst(per_second([1800.0] + [3000.0] * 11 + [1000.0] * 28))
    assert burst is not None
    assert burst.ceiling == 3000.0 and burst.baseline == 1000.0
    assert burst.credits == 800 + 11 * 2000


def test_bandwidth_bursts_count_mb() -> None:
    burst = find_burst(per_second([250.0] * 10 + [125.0] * 20), "MB/s")
    assert burst is not None
    assert burst.sentence() == (
        "burst: 250 MB/s for 10.0 s (about 1,250 MB above the baseline), then 125"
    )


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([1000.0] * 40, id="flat"),
        pytest.param([250.0, 500.0, 1000.0, 2000.0] + [3000.0] * 36, id="ramp-up at the start"),
        pytest.param([3000.0 - 50 * i for i in range(40)], id="slow decline"),
        pytest.param([1050.0] * 13 + [1000.0] * 27, id="5% step: the same figure"),
        pytest.param([3000.0] * 2 + [1000.0] * 38, id="2 s: shorter than a plateau"),
        pytest.param([1000.0] * 20 + [3000.0] * 20, id="a step up"),
        pytest.param([3000.0] * 5, id="too short a test"),
        pytest.param([0.0] * 10 + [0.0] * 10, id="no I/O"),
    ],
)
def test_no_burst(values: list[float]) -> None:
    assert find_burst(per_second(values)) is None


def test_no_burst_in_noise() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        assert find_burst(per_second([rng.uniform(500, 3500) for _ in range(40)])) is None, seed
        # the lab's step buried in 40 % noise: no plateau stands out
        assert find_burst(issue_24(0.4, seed)) is None, seed


def test_the_change_point_is_the_least_squares_split() -> None:
    assert change_point([3.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0], 3) == 3
    assert change_point([3.0, 3.0, 3.0, 1.0, 1.0], 3) is None  # no split leaves 3 a side
    assert MIN_PLATEAU_S == 3.0


def _log(test: str, job: int, direction: str, values: list[int], kind: str = "iops") -> LogSeries:
    points = tuple((1000 * (i + 1), v) for i, v in enumerate(values))
    return LogSeries(0, test, kind, job, None, direction, points)


def test_stored_series_add_jobs_and_directions() -> None:
    """Two jobs of a 65/35 test: each direction of each job a quarter-ish of the rate."""
    high, low = [1000] * 12 + [900] + [250] * 27, [500] * 12 + [500] + [250] * 27
    series = [
        _log("mixed", 0, "read", high),
        _log("mixed", 0, "write", low),
        _log("mixed", 1, "read", high),
        _log("mixed", 1, "write", low),
        _log("flat", 0, "read", [1000] * 40),
        _log("mixed", 0, "read", [100] * 40, kind="lat"),
    ]
    found = stored_bursts(series)
    assert list(found) == [(0, "mixed")]
    burst = found[(0, "mixed")]
    assert burst.ceiling == 3000 and burst.baseline == 1000
    assert burst.credits == 12 * 2000 + 1800
    assert burst_of_test(series, 0, "mixed") == burst
    assert burst_of_test(series, 0, "flat") is None
    assert burst_of_test(series, 1, "mixed") is None


def test_a_test_on_places_is_all_its_places_added_up() -> None:
    """A run on ``--hosts`` logs each place's share as ``TEST@N``: on one place (a lab
    guest) the test's burst is that place's; on two, the test's is their sum window by
    window, and each place keeps its own."""
    rates = [3000] * 12 + [2800] + [1000] * 27
    one = [_log("randwrite-4k@1", 1, "write", rates)]
    assert list(stored_bursts(one)) == [(0, "randwrite-4k")]
    half = [r // 2 for r in rates]
    two = [_log("randwrite-4k@1", 1, "write", half), _log("randwrite-4k@2", 1, "write", half)]
    found = stored_bursts(two)
    assert sorted(found) == [(0, "randwrite-4k"), (0, "randwrite-4k@1"), (0, "randwrite-4k@2")]
    assert found[(0, "randwrite-4k")].ceiling == 3000
    assert found[(0, "randwrite-4k")].credits == 25_800
    assert found[(0, "randwrite-4k@2")].ceiling == 1500


def test_a_limiters_burst_is_steady_a_noisy_baseline_is_not() -> None:
    burst = find_burst(issue_24(0.03))
    assert burst is not None and burst.steady and burst.spread < 0.05
    rng = random.Random(7)
    cliff = [80_000 * (1 + rng.gauss(0, 0.02)) for _ in range(20)]
    cliff += [20_000 * (1 + rng.gauss(0, 0.25)) for _ in range(40)]
    found = find_burst(per_second(cliff))
    assert found is not None and not found.steady and found.spread > 0.15


def _summary(windows: list[float], seconds: float) -> Burst | None:
    """:func:`burst_from_samples` of fio's summary of ``windows``."""
    mean, stddev = statistics.fmean(windows), statistics.stdev(windows)
    return burst_from_samples(mean, min(windows), max(windows), stddev, seconds)


def half_seconds(
    ceiling: float, baseline: float, credits: float, seconds: float, noise: float, seed: int
) -> list[float]:
    """fio's 500 ms windows of a bucket of ``credits`` spent at ``ceiling``, then the
    baseline, ``noise`` gaussian (a share of each window)."""
    rng, left, windows = random.Random(seed), credits, []
    for _ in range(round(seconds / 0.5)):
        held = min(0.5, left / (ceiling - baseline))
        left -= held * (ceiling - baseline)
        rate = (ceiling * held + baseline * (0.5 - held)) / 0.5
        windows.append(rate * (1 + rng.gauss(0, noise)))
    return windows


def test_a_burst_read_off_fios_summary_of_its_windows() -> None:
    """The issue's burst (3,000 for 12.9 s, then 1,000) in a 44 s probe: the moments give
    it within a few percent, the noise of the fastest window taken for the ceiling's."""
    exact = _summary(half_seconds(3000, 1000, 25_800, 44, 0.0, 1), 44)
    assert exact is not None
    assert exact.ceiling == 3000 and exact.baseline == pytest.approx(1000, rel=0.01)
    assert exact.credits == pytest.approx(25_800, rel=0.01)
    assert exact.seconds == pytest.approx(12.9, rel=0.01)
    for seed in range(20):
        found = _summary(half_seconds(3000, 1000, 25_800, 44, 0.01, seed), 44)
        assert found is not None, seed
        assert found.ceiling == pytest.approx(3000, rel=0.04)
        assert found.baseline == pytest.approx(1000, rel=0.05)
        assert found.credits == pytest.approx(25_800, rel=0.08)


def test_a_first_window_above_the_ceiling_and_the_drains_estimate() -> None:
    """A lab guest's write MB/s bucket (QEMU: 26.4 MB/s bursting from 8.8 for 105.6 MB,
    403 requests of 256 KiB above the baseline) as fio summed the probe's ten windows in
    CI: its first window 10 % above the ceiling (QEMU lets a tenth of a second's burst
    through at once). Anchored at that window, the bucket looks a fifth smaller (a drain
    of 5 s left 18 MB that lifted the next test to 14.7 MB/s); the drains' estimate, the
    larger of the two anchors, is within 5 %. Without a burst, neither finds one."""
    summary = (73.9, 33.0, 111.0, 34.910839, 10.111)
    plain = burst_from_samples(*summary)
    largest = burst_from_samples(*summary, largest=True)
    assert plain is not None and largest is not None
    assert plain.credits < 0.85 * 403
    assert largest.credits == pytest.approx(403, rel=0.05)
    assert largest.baseline == pytest.approx(8.8e6 / 262_144, rel=0.05)
    for seed in range(20):  # a clean burst: the two anchors agree
        windows = half_seconds(3000, 1000, 25_800, 44, 0.01, seed)
        mean, stddev = statistics.fmean(windows), statistics.stdev(windows)
        both = burst_from_samples(mean, min(windows), max(windows), stddev, 44, largest=True)
        assert both is not None and both.credits == pytest.approx(25_800, rel=0.08), seed
    flat = _noisy(50_000, 0.05, 88, 5)
    mean, stddev = statistics.fmean(flat), statistics.stdev(flat)
    assert burst_from_samples(mean, min(flat), max(flat), stddev, 44, largest=True) is None


def _noisy(level: float, noise: float, count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.gauss(0, noise)) for _ in range(count)]


@pytest.mark.parametrize(
    "windows",
    [
        pytest.param(_noisy(50_000, 0.05, 88, 5), id="one noisy level"),
        pytest.param(_noisy(50_000, 0.01, 88, 6), id="one steady level"),
        pytest.param([3000.0 - 25 * i + 30 * (i % 3) for i in range(88)], id="a steady decline"),
        pytest.param(half_seconds(3000, 600, 200_000, 44, 0.01, 2), id="a bucket not emptied"),
        pytest.param(half_seconds(3000, 600, 2400, 44, 0.0, 3), id="a 1 s burst"),
        pytest.param(half_seconds(3200, 3000, 3000, 44, 0.0, 3), id="a rise of 7 %: the same"),
        pytest.param([1000.0] * 88, id="flat"),
    ],
)
def test_no_burst_in_a_summary(windows: list[float]) -> None:
    assert _summary(windows, 44) is None
