"""The QoS model against seed 004's own arithmetic (tests 3 and 4 of the seed)."""

from __future__ import annotations

import pytest

from volbench.analysis.qos import (
    Rates,
    Tenant,
    allocation,
    error_pct,
    fit_alpha,
    jain_index,
    make_plan,
    predict,
)
from volbench.errors import UsageError


def test_allocation_formula_seed_test3_sequential_read() -> None:
    # Seed 004 test 3: C=3052, C0=304, Va=180, alpha=0.642 -> the seed prints 219 / 328 / 437
    got = [allocation(3052, 304, 0.642, v, 180) for v in (40, 60, 80)]
    assert [round(g) for g in got] == [219, 328, 437]
    assert got[0] == pytest.approx(2748 * 0.358 * 40 / 180)


def test_fit_alpha_seed_test4_sequential_read() -> None:
    # C=3888, C0=975, tenants 40/60/80 achieving 118/187/235 -> alpha ~ 0.814
    alpha = fit_alpha(3888, 975, [118, 187, 235])
    assert alpha == pytest.approx(1 - 540 / 2913)
    assert round(alpha, 2) == 0.81
    assert abs(alpha - 0.814) < 0.001


def test_predict_seed_test4_group_20_40_60_within_reported_error() -> None:
    alpha = fit_alpha(3888, 975, [118, 187, 235])
    predicted = predict(3888, 976, alpha, {"Test_20G": 20, "Test_40G": 40, "Test_60G": 60})
    # the seed's own predictions with alpha = 0.814: 90.2 / 180.5 / 270.8
    assert predicted["Test_20G"] == pytest.approx(90.2, abs=0.5)
    assert predicted["Test_40G"] == pytest.approx(180.5, abs=1.0)
    assert predicted["Test_60G"] == pytest.approx(270.8, abs=1.5)
    measured = {"Test_20G": 89, "Test_40G": 180, "Test_60G": 268}
    for name, value in measured.items():
        assert abs(error_pct(predicted[name], value)) < 10  # the seed reports ~10 %


def test_fit_and_predict_seed_test4_sequential_write() -> None:
    # C=156, C0=48, 22/27/36 -> alpha ~ 0.2 (seed); the 20/40/60 group measured 14/30/42
    alpha = fit_alpha(156, 48, [22, 27, 36])
    assert alpha == pytest.approx(1 - 85 / 108)
    assert 0.19 < alpha < 0.22
    predicted = predict(156, 52, alpha, {"a": 20, "b": 40, "c": 60})
    for name, value in {"a": 14, "b": 30, "c": 42}.items():
        assert abs(error_pct(predicted[name], value)) < 10


def test_fit_alpha_two_tenants_seed_read() -> None:
    # 214 + 323 over C - C0 = 2912 -> 0.816 in the seed
    assert fit_alpha(3888, 976, [214, 323]) == pytest.approx(0.816, abs=0.001)


def test_plan_shares_limits_and_weights() -> None:
    tenants = [Tenant("a", 40), Tenant("b", 60), Tenant("c", 80)]
    plan = make_plan((3888, 400e6), (975, 100e6), tenants, alpha=0.0, volume_gib=246)
    assert plan.tenants_gib == 180
    iops = [a.limits.read_iops for a in plan.allocations]
    assert iops == [a.limits.write_iops for a in plan.allocations]  # one figure: both
    assert iops == pytest.approx([2913 * 40 / 180, 2913 * 60 / 180, 2913 * 80 / 180])
    assert sum(iops) == pytest.approx(3888 - 975)
    assert plan.allocations[2].limits.write_bps == pytest.approx(300e6 * 80 / 180)
    assert [a.share for a in plan.allocations] == pytest.approx([2 / 9, 3 / 9, 4 / 9])
    assert [a.weight_v1 for a in plan.allocations] == [500, 750, 1000]
    assert [a.weight_v2 for a in plan.allocations] == [5000, 7500, 10000]


def test_plan_with_alpha_scales_every_tenant() -> None:
    plan = make_plan((3888, 1e8), (975, 0), [Tenant("a", 40), Tenant("b", 80)], alpha=0.814)
    assert plan.allocations[0].limits.read_iops == pytest.approx(2913 * 0.186 / 3)


@pytest.mark.parametrize(
    ("tenants", "volume", "message"),
    [
        ([Tenant("a", 200), Tenant("b", 100)], 246, "do not fit on the device"),
        ([], 0, "at least one tenant"),
        ([Tenant("a", 1), Tenant("a", 2)], 0, "given twice"),
        ([Tenant("a b", 1)], 0, "invalid tenant name"),
        ([Tenant("a", 0)], 0, "size must be positive"),
    ],
)
def test_plan_rejects_bad_tenants(tenants: list[Tenant], volume: float, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        make_plan((1000, 1e8), (100, 1e7), tenants, volume_gib=volume)


def test_plan_rejects_reserve_above_capability_and_bad_alpha() -> None:
    with pytest.raises(UsageError, match="reserve"):
        make_plan((1000, 1e8), (1000, 0), [Tenant("a", 1)])
    with pytest.raises(UsageError, match="alpha"):
        make_plan((1000, 1e8), (0, 0), [Tenant("a", 1)], alpha=1.0)
    with pytest.raises(UsageError, match="below 1"):
        make_plan((10, 1e8), (9, 0), [Tenant("a", 1), Tenant("b", 1)])


def test_jain_index() -> None:
    assert jain_index([1, 1, 1]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index([1, 2]) == pytest.approx(9 / 10)


def test_error_pct() -> None:
    assert error_pct(90.2, 89) == pytest.approx(-1.330, abs=0.001)
    with pytest.raises(UsageError):
        error_pct(0, 1)


def test_plan_per_direction_seed_test4_read_3888_write_156() -> None:
    # Seed 004 test 4: read C=3888, C0=975, alpha 0.814 -> 118/187/235 measured;
    # write C=156, C0=48, alpha 0.2 -> 22/27/36 measured (Va=180: 40/60/80 GiB)
    tenants = [Tenant("Test_40G", 40), Tenant("Test_60G", 60), Tenant("Test_80G", 80)]
    capability = Rates(read_iops=3888, write_iops=156)
    plan = make_plan(capability, Rates(read_iops=975, write_iops=48), tenants, alpha=0.2)
    reads = [a.limits.read_iops for a in plan.allocations]
    writes = [a.limits.write_iops for a in plan.allocations]
    assert reads == pytest.approx([2913 * 0.8 * v / 180 for v in (40, 60, 80)])
    assert writes == pytest.approx([108 * 0.8 * v / 180 for v in (40, 60, 80)])
    assert [round(w, 1) for w in writes] == [19.2, 28.8, 38.4]  # seed measured 22/27/36
    assert all(a.limits.read_bps == a.limits.write_bps == 0 for a in plan.allocations)
    with pytest.raises(UsageError, match="write IOPS reserve"):
        make_plan(Rates(read_iops=3888), Rates(write_iops=48), tenants)
