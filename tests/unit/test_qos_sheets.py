"""QoS sheets: bars, fio's IOPS samples over time, and the plan sheet's figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN as QOS_VERIFY
from volbench.analysis.qos_results import (
    TenantCheck,
    VerifyOptions,
    VerifyResult,
    VerifySetup,
    check_run,
)
from volbench.cli.main import cli
from volbench.errors import UsageError
from volbench.model import RW, RunSettings, RunStatus, TargetInfo
from volbench.records import json_object
from volbench.report.chart import traces_values
from volbench.report.export import export
from volbench.report.plan_charts import qos_verify_charts
from volbench.report.qos_sheets import plan_sheet
from volbench.report.qos_verify_sheets import (
    fmt_bar,
    interval_iops,
    run_verify_sheet,
    verify_sheet,
)
from volbench.store.repository import Store
from volbench.views import view


def test_bar_length_follows_the_ratio() -> None:
    assert fmt_bar(1.0).startswith("█" * 20 + " ")
    assert fmt_bar(0.5).startswith("█" * 10 + " ")
    assert fmt_bar(0.5).endswith(" 50 %")
    assert fmt_bar(0.0).strip() == "0 %"
    assert fmt_bar(3.0).count("█") == 30  # capped at 150 %
    assert fmt_bar(3.0).endswith("300 %")


def test_interval_iops_keeps_fios_own_samples_of_the_busiest_direction() -> None:
    job = {
        "jobname": "web",
        "read": {
            "iops_min": 590,
            "iops_max": 612,
            "iops_mean": 601.5,
            "iops_stddev": 4.2,
            "iops_samples": 5,
        },
        "write": {
            "iops_min": 0,
            "iops_max": 0,
            "iops_mean": 0,
            "iops_stddev": 0,
            "iops_samples": 0,
        },
    }
    raw = "note: text around fio's JSON\n" + json.dumps({"jobs": [job]})
    assert interval_iops([raw, "not json"]) == {
        "web": {
            "iops_min": 590,
            "iops_max": 612,
            "iops_mean": 601.5,
            "iops_stddev": 4.2,
            "iops_samples": 5,
        }
    }


def test_plan_sheet_csv_has_the_formula_figures() -> None:
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("a", 40), Tenant("b", 80)])
    header, first, second = export(plan_sheet(plan, plan_document(plan)), "csv").decode().split()
    rows = [dict(zip(header.split(","), r.split(","), strict=True)) for r in (first, second)]
    assert float(rows[0]["read_iops"]) == pytest.approx(2913 / 3)
    assert float(rows[0]["write_iops"]) == pytest.approx(108 / 3)  # the NetEase QoS test: 156 - 48
    assert float(rows[1]["share"]) == pytest.approx(2 / 3)


def test_verify_sheet_flags_and_names_the_quiet_tenant() -> None:
    checks = (
        TenantCheck("a", 40, 600, 450, 450 * 4096, -25.0, False, "quiet"),
        TenantCheck("b", 80, 1200, 1200, 1200 * 4096, 0.0, True, "noisy"),
    )
    sheet = verify_sheet(VerifyResult(9, checks, 0.98, False, 10.0))
    assert sheet.flagged_rows == frozenset({0})
    assert "isolation FAILED: quiet tenant a beside noisy ones" in " ".join(sheet.notes)
    assert sheet.document["tenants"][0]["achieved_ratio"] == pytest.approx(0.75)
    assert sheet.cells()[0][-1] == "below plan"


def test_verify_chart_plots_planned_and_achieved_per_tenant() -> None:
    checks = (
        TenantCheck("a", 40, 600, 450, 450 * 4096, -25.0, False, "quiet"),
        TenantCheck("b", 80, 1200, 1200, 1200 * 4096, 0.0, True, "noisy"),
    )
    (chart,) = qos_verify_charts(verify_sheet(VerifyResult(9, checks, 0.98, False, 10.0)))
    assert chart.id == "run9-qos-iops"
    assert traces_values(chart) == {"planned": [600, 1200], "achieved": [450, 1200]}
    assert chart.figure["data"][0]["x"] == ["a", "b"]


def test_predict_never_prints_a_bandwidth_it_was_not_given() -> None:
    from volbench.report.qos_sheets import predict_sheet

    plan = make_plan(Rates.both(4000, 0), Rates(), [Tenant("a", 100), Tenant("b", 300)], 0.9)
    sheet = predict_sheet(plan, {})
    assert not any("0.0 MB/s" in note for note in sheet.notes)
    assert "C = read 4,000 IOPS, write 4,000 IOPS" in sheet.notes[0]
    assert [row["bw_mb_per_s"] for row in sheet.document["tenants"]] == [None, None]
    given = make_plan(Rates.both(4000, 400e6), Rates(), [Tenant("a", 100)], 0.5)
    assert "read 4,000 IOPS / 400.0 MB/s" in predict_sheet(given, {}).notes[0]
    assert predict_sheet(given, {}).document["tenants"][0]["bw_mb_per_s"] == pytest.approx(200)


def test_a_verification_killed_before_any_result_is_listed(tmp_path: Path) -> None:
    """A ``qos verify`` killed before its first tenant's output was stored: ``runs``,
    ``show`` and its headline say so, where they ended in "has no stored tenant results"."""
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("a", 40), Tenant("b", 80)])
    options = VerifyOptions(rw=RW.RANDREAD, bs_bytes=4096, tolerance_pct=10.0)
    settings = RunSettings(options=json_object(VerifySetup(plan_document(plan), options)))
    db = str(tmp_path / "v.db")
    with Store.open(db) as store:
        run_id = store.create_run(
            QOS_VERIFY, TargetInfo("/dev/x", "block", 1 << 30), {}, {}, settings
        )
        store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted by the user")
        run = store.get_run(str(run_id))
    assert view(QOS_VERIFY).headline is not None
    headline = view(QOS_VERIFY).headline(run)
    assert headline.figures == ()
    assert "no tenant's results were stored" in " ".join(run_verify_sheet(run).notes)
    for command in (["runs"], ["show", str(run_id)]):
        done = CliRunner().invoke(cli, [*command, "--db", db])
        assert done.exit_code == 0, (done.output, done.exception)
    with pytest.raises(UsageError, match=f"run {run_id} has no stored tenant results"):
        check_run(run)
