"""The PTS steady-state test on synthetic series (DESIGN.md "SNIA PTS facts")."""

from __future__ import annotations

import pytest

from volbench.analysis.steady_state import assess, least_squares, window


def test_flat_series_is_steady() -> None:
    verdict = assess({"iops": [1000.0] * 5})
    assert verdict.steady
    assert verdict.rounds_run == 5
    w = verdict.windows["iops"]
    assert w.average == 1000.0 and w.slope == 0.0 and w.data_excursion == 0.0


def test_three_percent_per_round_trend_fails_the_slope_test() -> None:
    values = [1000.0 * (1 + 0.03 * i) for i in range(5)]
    w = window(range(5), values)
    assert w.data_ok  # 120 <= 20% of 1060
    assert not w.slope_ok  # 4 x 30 = 120 > 106
    assert not assess({"iops": values}).steady


def test_a_25_percent_spike_fails_the_excursion_test() -> None:
    values = [1000.0, 1000.0, 1250.0, 1000.0, 1000.0]
    w = window(range(5), values)
    assert w.slope == pytest.approx(0.0)
    assert not w.data_ok
    assert not assess({"iops": values}).steady


def test_exactly_twenty_percent_excursion_passes() -> None:
    w = window(range(5), [90.0, 110.0, 100.0, 100.0, 100.0])
    assert w.data_excursion == pytest.approx(w.data_limit)
    assert w.data_ok


def test_exactly_ten_percent_slope_excursion_passes() -> None:
    w = window(range(5), [38.0, 39.0, 40.0, 41.0, 42.0])  # slope 1, x4 = 4 = 10% of 40
    assert w.slope == pytest.approx(1.0)
    assert w.slope_excursion == pytest.approx(w.slope_limit)
    assert w.slope_ok and w.steady


def test_just_over_the_limits_fails() -> None:
    assert not window(range(5), [90.0, 110.1, 100.0, 100.0, 100.0]).data_ok
    assert not window(range(5), [37.9, 39.0, 40.0, 41.0, 42.1]).slope_ok


def test_steady_state_found_in_a_later_window_and_every_variable_must_pass() -> None:
    settling = [500.0, 700.0, 900.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0]
    verdict = assess({"a": settling, "b": [5.0] * 8})
    assert verdict.steady
    assert verdict.window_rounds == (2, 3, 4, 5, 6)
    assert not assess({"a": settling[:6], "b": [5.0] * 6}).steady
    assert not assess({"a": [1.0] * 8, "b": [100.0 * 1.05**i for i in range(8)]}).steady


def test_not_steady_reports_the_last_window() -> None:
    values = [100.0 * (1.05**i) for i in range(25)]
    verdict = assess({"iops": values})
    assert not verdict.steady
    assert verdict.rounds_run == 25
    assert verdict.window_rounds == (20, 21, 22, 23, 24)


def test_fewer_than_five_rounds_is_not_steady() -> None:
    verdict = assess({"iops": [1.0] * 4})
    assert not verdict.steady and not verdict.windows


def test_least_squares_fit() -> None:
    slope, intercept = least_squares([0, 1, 2, 3], [1.0, 3.0, 5.0, 7.0])
    assert slope == pytest.approx(2.0) and intercept == pytest.approx(1.0)
    with pytest.raises(ValueError):
        least_squares([1], [1.0])
