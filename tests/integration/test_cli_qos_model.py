"""``volbench qos plan|predict|fit`` as a user runs them, with seed 004's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, run_all

SEED_READ_FIT = (
    "qos",
    "fit",
    "--capability",
    "3888",
    "--host-used",
    "975",
    "--measured",
    "Test_40G=118",
    "--measured",
    "Test_60G=187",
    "--measured",
    "Test_80G=235",
)


def test_plan_fit_predict_seed_004(volbench: Volbench, tmp_path: Path) -> None:
    plan, fit, predict = run_all(
        [
            (
                volbench,
                (
                    "qos",
                    "plan",
                    "--capability",
                    "riops=3888,wiops=156,bps=400m",
                    "--host-reserve",
                    "riops=975,wiops=48,bps=100m",
                    "--tenant",
                    "a:40",
                    "--tenant",
                    "b:60",
                    "--tenant",
                    "c:80",
                    "--volume-size",
                    "246",
                    "--format",
                    "json",
                ),
                None,
            ),
            (volbench, (*SEED_READ_FIT, "--format", "json"), None),
            (
                volbench,
                (
                    "qos",
                    "predict",
                    "--capability",
                    "iops=3888",
                    "--host-used",
                    "iops=976",
                    "--alpha",
                    "0.8146",
                    "--tenant",
                    "Test_20G:20",
                    "--tenant",
                    "Test_40G:40",
                    "--tenant",
                    "Test_60G:60",
                    "--measured",
                    "Test_20G=89",
                    "--format",
                    "csv",
                ),
                None,
            ),
        ]
    )
    assert plan.returncode == 0, plan.stderr
    document = json.loads(plan.stdout)
    assert document["schema"] == "volbench.qos-plan/1"
    iops = [t["read_iops"] for t in document["tenants"]]
    assert iops == pytest.approx([2913 * 40 / 180, 2913 * 60 / 180, 2913 * 80 / 180])
    writes = [t["write_iops"] for t in document["tenants"]]  # seed 004 writes: 156 - 48
    assert writes == pytest.approx([108 * 40 / 180, 108 * 60 / 180, 108 * 80 / 180])
    bps = (400 - 100) * 2**20
    assert document["tenants"][0]["read_bw_bytes_per_s"] == pytest.approx(bps * 40 / 180)
    assert document["tenants"][0]["write_bw_bytes_per_s"] == pytest.approx(bps * 40 / 180)
    assert [t["weight_v1"] for t in document["tenants"]] == [500, 750, 1000]
    assert fit.returncode == 0, fit.stderr
    (group,) = json.loads(fit.stdout)["groups"]
    assert group["alpha"] == pytest.approx(0.8146, abs=1e-4)
    assert predict.returncode == 0, predict.stderr
    header, first, *_ = predict.stdout.splitlines()
    row = dict(zip(header.split(","), first.split(","), strict=True))
    predicted = 2912 * (1 - 0.8146) * 20 / 120  # 90.0; the seed (alpha 0.814): 90.2
    assert float(row["iops"]) == pytest.approx(predicted)
    assert float(row["error_pct"]) == pytest.approx((89 - predicted) / predicted * 100)


def test_plan_table_shows_limits(volbench: Volbench) -> None:
    proc = volbench(
        "qos", "plan", "--capability", "iops=1000", "--tenant", "web:10", "--tenant", "db:30"
    )
    assert proc.returncode == 0, proc.stderr
    assert "250" in proc.stdout and "750" in proc.stdout
    assert "no limit" in proc.stdout  # no bandwidth capability given


def test_bad_input_is_one_line_exit_2(volbench: Volbench) -> None:
    no_fit, bad_tenant, reserve, alpha, unknown, clear_all = run_all(
        [
            (
                volbench,
                (
                    "qos",
                    "plan",
                    "--capability",
                    "iops=1000",
                    "--volume-size",
                    "100",
                    "--tenant",
                    "a:80",
                    "--tenant",
                    "b:40",
                ),
                None,
            ),
            (volbench, ("qos", "plan", "--capability", "iops=1000", "--tenant", "a"), None),
            (
                volbench,
                (
                    "qos",
                    "plan",
                    "--capability",
                    "iops=1000",
                    "--host-reserve",
                    "iops=2000",
                    "--tenant",
                    "a:1",
                ),
                None,
            ),
            (
                volbench,
                (
                    "qos",
                    "predict",
                    "--capability",
                    "iops=1000",
                    "--alpha",
                    "1.5",
                    "--tenant",
                    "a:1",
                ),
                None,
            ),
            (
                volbench,
                (
                    "qos",
                    "predict",
                    "--capability",
                    "iops=1000",
                    "--alpha",
                    "0.5",
                    "--tenant",
                    "a:1",
                    "--measured",
                    "b=3",
                ),
                None,
            ),
            (volbench, ("qos", "clear"), None),  # other sessions' cgroups only with --all
        ]
    )
    assert "do not fit on the device" in error_line(no_fit, 2)
    assert "NAME:SIZE" in error_line(bad_tenant, 2)
    assert "must be below the capability" in error_line(reserve, 2)
    assert "alpha" in error_line(alpha, 2)
    assert "no tenant named b" in error_line(unknown, 2)
    assert "--all for every cgroup volbench made" in error_line(clear_all, 2)
