"""A mixed average (analysis/validity_mixed.py, analysis/step_series.py) on per-second
series: a burst and a step each with both parts' figures, a test that never settled with
the runtime that would settle it, and the controls: a steady series, a noisy one."""

from __future__ import annotations

import random

import pytest

from validity_facts import facts_of
from volbench.analysis import validity_mixed
from volbench.analysis.step_series import drift, levels
from volbench.analysis.validity import MarkKind


def series(values: list[float]) -> list[tuple[float, float]]:
    """One value a second, each window's end time first (fio's logs)."""
    return [(float(i + 1), v) for i, v in enumerate(values)]


def noisy(level: float, seconds: int, share: float, seed: int) -> list[float]:
    draw = random.Random(seed)
    return [level * (1 + draw.gauss(0, share)) for _ in range(seconds)]


def test_a_step_up_names_both_parts() -> None:
    points = series(noisy(1000, 8, 0.01, 1) + noisy(2000, 10, 0.01, 2))
    average = (8 * 1000 + 10 * 2000) / 18
    (mark,) = validity_mixed.check(facts_of(iops=average, rates=points, runtime_s=18)).marks
    assert mark.kind is MarkKind.MIXED
    before, after = mark.parts
    assert (before.start_s, before.end_s, after.start_s, after.end_s) == (0.0, 8.0, 8.0, 18.0)
    assert before.value == pytest.approx(1000, rel=0.02) and before.marked
    assert after.value == pytest.approx(2000, rel=0.02) and not after.marked
    assert mark.figures["iops_part1"] == before.value and mark.figures["iops_part2"] == after.value
    shown = f"{before.value:,.0f}, then {after.value:,.0f} IOPS"
    assert mark.problem.startswith(f"the rate changed level inside the test, {shown}")
    assert f"the average {average:,.0f} is none of them" in mark.problem


def test_a_burst_names_its_ceiling_baseline_and_the_runtime_for_the_baseline() -> None:
    points = series([2964.0] * 12 + [600.0] * 20)
    average = (12 * 2964 + 20 * 600) / 32
    (mark,) = validity_mixed.check(facts_of(iops=average, rates=points, runtime_s=32)).marks
    burst, base = mark.parts
    assert burst.label == "burst" and burst.value == 2964 and base.value == 600
    assert mark.figures["burst_iops"] == 2964 and mark.figures["baseline_iops"] == 600
    assert mark.figures["burst_s"] == pytest.approx(12.0)
    assert "from 2,964 to 600 IOPS" in mark.problem
    assert f"the average {average:,.0f} is neither" in mark.problem
    needed = (2964 - 600) * 12 / (0.05 * 600)  # the credits within 5% of the average
    assert f"run at least {needed:,.0f} s" in mark.advice


def test_a_steady_or_noisy_series_is_not_marked() -> None:
    for values in (
        [2000.0] * 20,
        noisy(2000, 20, 0.03, 3),  # a capped device
        noisy(40_000, 30, 0.15, 4),  # an uncapped device on a busy machine
    ):
        points = series(values)
        assert levels(points)[1:] == [] and drift(points) is None
        assert validity_mixed.check(facts_of(rates=points, runtime_s=len(values))).marks == ()


def test_a_test_that_never_settled_and_the_runtime_that_would_settle_it() -> None:
    settling = [3000.0 - 100 * i for i in range(15)] + [1500.0] * 15  # a write cliff
    (mark,) = validity_mixed.check(facts_of(rates=series(settling), runtime_s=30)).marks
    assert mark.problem.startswith("the test never settled")
    assert mark.figures["iops_first_third"] > 2000 and mark.figures["iops_last_third"] == 1500
    settled = mark.figures["settled_s"]
    assert 10 <= settled <= 16
    excess = sum(v - 1500 for v in settling[: int(settled)])
    assert mark.figures["suggested_runtime_s"] == pytest.approx(excess / (0.05 * 1500), rel=0.1)
    before, after = mark.parts
    assert before.marked and not after.marked and after.start_s == settled
    falling = [3000.0 - 50 * i for i in range(30)]  # still moving at its end
    (moving,) = validity_mixed.check(facts_of(rates=series(falling), runtime_s=30)).marks
    assert moving.parts == () and moving.figures["suggested_runtime_s"] == 90


def test_too_short_or_unlogged_tests_are_not_checked() -> None:
    short = validity_mixed.check(facts_of(rates=series([1000.0, 2000.0] * 2), runtime_s=4))
    assert short.marks == () and "a step shows in 6 s at least" in short.unchecked[0]
    none = validity_mixed.check(facts_of(rates_note="no per-second log: an output imported"))
    assert none.unchecked == ("a mixed average: no per-second log: an output imported",)


def test_three_levels_are_found_in_turn() -> None:
    values = [1000.0] * 8 + [2000.0] * 8 + [1000.0] * 8
    found = levels(series(values))
    assert [round(level.level) for level in found] == [1000, 2000, 1000]
    assert [(level.first, level.last) for level in found] == [(0, 7), (8, 15), (16, 23)]
