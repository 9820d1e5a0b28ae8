"""QoS figures from a stored verify run (a RunRecord built here, as the store returns it)."""

from __future__ import annotations

import dataclasses

import pytest

from stored_rows import bare_row
from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.analysis.qos_document import plan_document, plan_from_document
from volbench.analysis.qos_results import check_run, fit_groups, measurement, planned_iops
from volbench.cli.qos_options import parse_rates
from volbench.errors import UsageError
from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    TargetInfo,
)
from volbench.report.qos_sheets import fit_sheet
from volbench.report.summary import summarise
from volbench.views import view


def _result(test: str, iops: float, direction: str = "read") -> StoredResult:
    return bare_row(iops, test=test, direction=direction, runtime_ms=3000)


def _run(run_id: int, results: dict[str, float], capability: float = 3888) -> RunRecord:
    tenants = [Tenant("t40", 40), Tenant("t60", 60), Tenant("t80", 80)]
    plan = make_plan((capability, 0), (975, 0), tenants)
    return RunRecord(
        id=run_id,
        plan="qos-verify",
        status=RunStatus.COMPLETED,
        started_at="",
        ended_at=None,
        target=TargetInfo.from_record({}),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(
            options={
                "qos_plan": plan_document(plan),
                "verify": {"bs_bytes": 4096, "tolerance_pct": 10.0},
            }
        ),
        results=tuple(_result(name, iops) for name, iops in results.items()),
    )


def test_seed_004_alpha_from_a_stored_run() -> None:
    run = _run(7, {"t40": 118, "t60": 187, "t80": 235, "host": 975})
    m = measurement(run)
    assert (m.capability, m.host_used, m.achieved) == (3888, 975, (118, 187, 235))
    (group,) = fit_groups([m])
    assert group["alpha"] == pytest.approx(1 - 540 / 2913)
    assert group["tenants"] == 3 and group["direction"] == "read"
    assert group["capped"] == []  # far below the plan's limits: a loss, no warning
    assert fit_sheet([group]).document["warnings"] == []


def test_fit_warns_when_the_plans_own_limits_capped_the_tenants() -> None:
    capped = {"t40": 2913 * 40 / 180 * 0.99, "t60": 2913 * 60 / 180, "t80": 2913 * 80 / 180}
    m = measurement(_run(8, capped | {"host": 975}))
    assert m.capped
    (group,) = fit_groups([m, measurement(_run(9, {"t40": 118, "t60": 187, "t80": 235}))])
    assert group["capped"] == [8]
    sheet = fit_sheet([group])
    (warning,) = sheet.document["warnings"]
    assert "run(s) 8 every tenant got its planned limit" in warning
    assert "runs without limits" in warning and warning in sheet.notes
    assert sheet.flagged_rows == {0}


def test_runs_pool_per_direction_and_tenant_count() -> None:
    first = measurement(_run(1, {"t40": 118, "t60": 187, "t80": 235, "host": 975}))
    second = measurement(_run(2, {"t40": 100, "t60": 150, "t80": 200, "host": 975}))
    (group,) = fit_groups([first, second])
    assert group["alpha"] == pytest.approx(1 - (540 + 450) / (2 * 2913))
    assert group["runs"] == [1, 2]


def test_check_run_planned_vs_achieved_jain_and_isolation() -> None:
    planned = {"t40": 2913 * 40 / 180, "t60": 2913 * 60 / 180, "t80": 2913 * 80 / 180}
    run = _run(3, {"t40": planned["t40"] * 0.95, "t60": planned["t60"], "t80": planned["t80"]})
    result = check_run(run)
    assert [c.tenant for c in result.checks] == ["t40", "t60", "t80"]
    assert result.checks[0].error_pct == pytest.approx(-5)
    assert result.passed and result.isolated
    assert result.jain == pytest.approx((2.95**2) / (3 * (0.95**2 + 2)))
    low = check_run(_run(4, {"t40": planned["t40"] * 0.5, "t60": 1000, "t80": 1300}))
    assert not low.passed and not low.isolated


def test_bandwidth_limit_binds_when_lower() -> None:
    assert planned_iops(1000, 1_000_000, 4096) == pytest.approx(1_000_000 / 4096)
    assert planned_iops(100, 1_000_000, 4096) == 100
    assert planned_iops(0, 4096 * 50, 4096) == 50
    with pytest.raises(UsageError):
        planned_iops(0, 0, 4096)


def test_not_a_verify_run_and_missing_tenant() -> None:
    unknown = TargetInfo.from_record({}), HostInfo.from_record({})
    other = RunRecord(1, "quick", RunStatus.COMPLETED, "", None, *unknown, {}, RunSettings())
    with pytest.raises(UsageError, match="not a QoS verify run"):
        check_run(other)
    with pytest.raises(UsageError, match="no result of tenant t80"):
        measurement(_run(5, {"t40": 1, "t60": 1}))


def test_plan_document_round_trip_and_bad_documents() -> None:
    plan = make_plan((3888, 1e8), (975, 1e7), [Tenant("a", 40), Tenant("b", 80)], 0.2, 246)
    assert plan_from_document(plan_document(plan)) == plan
    older = {k: v for k, v in plan_document(plan).items() if k != "nominal_sizes"}
    assert plan_from_document(older).nominal  # before the key: V given = nominal sizes
    with pytest.raises(UsageError, match="not a volbench QoS plan"):
        plan_from_document({"schema": "x"})
    document = plan_document(plan)
    document["alpha"] = "high"
    with pytest.raises(UsageError, match="alpha is not a number"):
        plan_from_document(document)


def test_isolation_is_judged_on_quiet_tenants_when_there_are_some() -> None:
    planned = {"t40": 2913 * 40 / 180, "t60": 2913 * 60 / 180, "t80": 2913 * 80 / 180}
    run = _run(6, {"t40": planned["t40"], "t60": planned["t60"] * 0.5, "t80": planned["t80"]})
    assert not check_run(run).isolated  # no quiet tenant: every tenant must keep its plan
    options = run.settings.options
    settings = RunSettings(options={**options, "verify": {**options["verify"], "quiet": ["t40"]}})
    quiet = check_run(dataclasses.replace(run, settings=settings))
    assert quiet.isolated and not quiet.passed  # t60 is off its plan, t40 was not pushed
    assert [c.role for c in quiet.checks] == ["quiet", "noisy", "noisy"]


def test_write_verify_compares_write_limits_and_old_plans_load() -> None:
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("t40", 40), Tenant("t80", 80)])
    run = dataclasses.replace(
        _run(4, {}),
        settings=RunSettings(
            options={
                "qos_plan": plan_document(plan),
                "verify": {"rw": "randwrite", "bs_bytes": 4096},
            }
        ),
        results=(_result("t40", 36, "write"), _result("t80", 60, "write")),
    )
    checks = {c.tenant: c for c in check_run(run).checks}
    assert checks["t40"].planned_iops == pytest.approx(108 * 40 / 120)
    assert checks["t40"].ok and checks["t80"].error_pct == pytest.approx(60 / 72 * 100 - 100)
    assert measurement(run).capability == 156  # the write capability
    older = plan_document(plan) | {"capability": {"iops": 3888, "bps": 0}}
    older["host_reserve"] = {"iops": 975, "bps": 0}
    assert plan_from_document(older).capability == Rates.both(3888, 0)  # one figure: both


def test_rates_per_direction_and_for_both() -> None:
    assert parse_rates("riops=3888,wiops=156,rbps=400m,wbps=100m") == Rates(
        3888, 156, 400 * 2**20, 100 * 2**20
    )
    assert parse_rates("wiops=156,iops=3888") == Rates(3888, 156, 0, 0)  # per direction wins
    with pytest.raises(UsageError, match="riops="):
        parse_rates("xiops=3")


def test_the_list_of_runs_says_how_many_tenants_got_their_plan() -> None:
    """A verification's headline is its tenants against their plan, not the highest
    IOPS of its steps (with --fit-alpha: the host alone, no tenant's figure)."""
    planned = {"t40": 2913 * 40 / 180, "t60": 2913 * 60 / 180, "t80": 2913 * 80 / 180}
    run = _run(3, {"t40": planned["t40"] * 0.5, "t60": planned["t60"], "t80": planned["t80"]})
    summary = summarise(run, view(run.plan), check=False)
    jain = check_run(run).jain
    assert summary.figures == (f"2 of 3 tenants within 10 % of plan, Jain {jain:.3f}",)
    assert summary.table.title == "Run 3 at a glance: QoS verify"
    assert any(n.startswith("isolation FAILED") for n in summary.notes)
