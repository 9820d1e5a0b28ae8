"""``volbench spec ...``, ``cost`` and ``check`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import Volbench, error_line, run_all

QUICK = Path(__file__).parents[1] / "fixtures" / "fio" / "quick" / "round-000.json"


def test_spec_expect_and_cost_print_the_catalogue_figures(volbench: Volbench) -> None:
    expected = volbench.document("spec", "expect", "ucloud-rssd", "--size", "2040")
    assert (expected["iops"], expected["throughput"]) == (103800, 1140)
    assert expected["throughput_bytes_per_s"] == 1140e6
    assert {(p["currency"], p["billing"], p["value"]) for p in expected["prices"]} == {
        ("CNY", "monthly", 0.6 * 2040)  # the UCloud RSSD post: 0.6 CNY per GB-month
    }
    old = volbench.document(
        "spec", "expect", "aliyun-cloud-ssd", "--size", "250", "--as-of", "2016-12-31"
    )
    assert (old["iops"], old["throughput"], old["edition_from"]) == (7500, 175, "2016-12-01")
    bill = volbench.document("cost", "aliyun-essd-pl1", "--size", "100", "--hours", "730")
    assert {(t["billing"], round(t["amount"], 6)) for t in bill["totals"]} == {
        ("subscription", 100.0),
        ("pay-as-you-go", round(0.0021 * 100 * 730, 6)),
    }
    gp3 = volbench.document("cost", "aws-gp3", "--size", "500")  # 40 USD, 3,000 IOPS, 125 MiB/s
    (total,) = gp3["totals"]
    assert (total["per_provisioned_iops"], total["per_provisioned_mb_s"]) == (
        40 / 3000,
        40 / 131.072,
    )
    listed = volbench.document("spec", "list", "--vendor", "tencent")
    assert [p["id"] for p in listed["products"]] == [
        "tencent-cloud-basic",
        "tencent-cloud-bssd",
        "tencent-cloud-hssd",
        "tencent-cloud-premium",
        "tencent-cloud-ssd",
        "tencent-cloud-tssd",
    ]
    curve = volbench.document(
        "spec",
        "curve",
        "aliyun-cloud-ssd",
        "tencent-cloud-ssd",
        "--max-size",
        "4000",
        "--points",
        "3",
        "--as-of",
        "2016-12-31",
    )
    assert [(p["product"], p["size"], p["iops"]) for p in curve["points"]] == [
        ("aliyun-cloud-ssd", 20, 600),
        ("aliyun-cloud-ssd", 2010, 20000),
        ("aliyun-cloud-ssd", 4000, 20000),
        ("tencent-cloud-ssd", 1, 24),
        ("tencent-cloud-ssd", 2000, 24000),
        ("tencent-cloud-ssd", 4000, 24000),
    ]
    p20 = volbench.document("spec", "expect", "azure-premium-ssd", "--size", "500")
    assert (p20["iops"], p20["burst_iops"], p20["burst_seconds"]) == (2300, 3500, 1800)
    assert (p20["burst_throughput"], p20["burst_throughput_seconds"]) == (170, 1800)
    st1 = volbench.document("spec", "expect", "st1", "--size", "1024")
    assert (st1["throughput"], st1["burst_throughput"]) == (40, 250)
    assert round(st1["burst_throughput_seconds"]) == 4993  # 1 TiB of credits / 210 MiB/s
    limits = volbench.document("spec", "instances", "--product", "ucloud-rssd")
    assert [(i["instance"], i["iops"]) for i in limits["instances"][:2]] == [
        ("ucloud-1vcpu", 18000),
        ("ucloud-2vcpu", 38000),
    ]


def test_bad_input_is_one_line_with_exit_2(volbench: Volbench) -> None:
    procs = run_all(
        [
            (volbench, ("spec", "show", "ucloud-rsd"), None),
            (volbench, ("spec", "expect", "ucloud-rssd", "--size", "40000"), None),
            (volbench, ("spec", "expect", "aws-io1", "--size", "100"), None),
            (volbench, ("spec", "expect", "aws-gp2", "--size", "100", "--as-of", "2016"), None),
            (volbench, ("cost", "ucloud-ssd", "--size", "100"), None),
            (volbench, ("spec", "instances", "--product", "ctyun-high-io"), None),
        ]
    )
    assert "did you mean ucloud-rssd" in error_line(procs[0], 2)
    assert "outside ucloud-rssd's range 1-32000 GB" in error_line(procs[1], 2)
    assert "give --provisioned-iops" in error_line(procs[2], 2)
    assert "use YYYY-MM-DD" in error_line(procs[3], 2)
    assert "no price for ucloud-ssd" in error_line(procs[4], 2)
    assert "no instance limits match" in error_line(procs[5], 2)


def test_check_uses_labels_and_exits_1_below_the_promise(volbench: Volbench) -> None:
    imported = volbench(
        "import", str(QUICK), "--label", "product=ucloud-rssd", "--label", "size_gib=2040"
    )
    assert imported.returncode == 0, imported.stderr
    below = volbench("check", "latest", "--format", "json")
    assert below.returncode == 1
    assert "below the promise" in below.stderr
    assert '"verdict": "below"' in below.stdout
    fine = volbench(
        "check", "latest", "--product", "aws-io1", "--size", "200", "--provisioned-iops", "2000"
    )
    assert fine.returncode == 0, fine.stderr
    assert "above" in fine.stdout and "155.00 USD/month" in fine.stdout
    capped = volbench("check", "latest", "--instance", "ucloud-4vcpu", "--format", "json")
    assert capped.returncode == 1  # the 4 KiB write test stays below the host's 300 MB/s
    assert '"instance": "ucloud-4vcpu"' in capped.stdout
    assert "instance cap 300.0 MB/s" in capped.stdout
    unknown = volbench("check", "latest", "--instance", "ucloud-4cpu")
    assert "did you mean ucloud-4vcpu" in error_line(unknown, 2)


def test_spec_plot_draws_the_curve_data(volbench: Volbench, tmp_path: Path) -> None:
    """Seed 000's chart: Aliyun's 2016 SSD formula against Tencent's 2016 hybrid disk."""
    args = ("aliyun-cloud-ssd", "tencent-cloud-premium", "--max-size", "1000")
    args += ("--as-of", "2017-01-01")
    points = volbench.document("spec", "curve", *args)["points"]
    page = tmp_path / "spec.html"
    proc = volbench("spec", "plot", *args, "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    figures = json.loads(
        html.split('id="volbench-figures">')[1].split("</script>")[0].replace("<\\/", "</")
    )
    for product in ("aliyun-cloud-ssd", "tencent-cloud-premium"):
        rows = [p for p in points if p["product"] == product]
        iops = next(t for t in figures["spec-iops"]["data"] if t["name"] == product)
        assert iops["x"] == [r["size"] for r in rows] and iops["y"] == [r["iops"] for r in rows]
        mbps = next(t for t in figures["spec-throughput_mb_s"]["data"] if t["name"] == product)
        assert mbps["y"] == [r["throughput_mb_s"] for r in rows]
    bad = volbench("spec", "plot", *args, "-o", str(tmp_path / "spec.png"))
    assert "name it FILE.html or FILE.pdf" in error_line(bad, 2)


PRIVATE_YAML = """\
sources:
  NE1: "NetEase cloud document on instance-storage QoS (undated)"
products:
  - id: private-instance-ssd
    vendor: Our private cloud
    name: Instance storage, QoS by size
    size_unit: GiB
    capacity: {min: 10, max: 2000, quote: "10-2000 GiB", st: V, src: [NE1]}
    editions:
      - from: 2015-06-01
        label: QoS v1
        iops: {expr: "min(30 * size, 20000)", quote: "30 IOPS per GiB", st: V, src: [NE1]}
        throughput: {expr: "min(size, 400)", unit: MB/s, quote: "1 MB/s per GiB", st: V,
                     src: [NE1]}
    prices:
      - {value: 0.5, currency: CNY, per: GB-month, quote: "0.5", st: R, src: [NE1]}
"""


GP3_4000 = ("spec", "expect", "aws-gp3", "--size", "4000", "--provisioned-iops")


def test_limits_vendors_and_the_users_catalogue(volbench: Volbench, tmp_path: Path) -> None:
    private = tmp_path / "private.yaml"
    private.write_text(PRIVATE_YAML, encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(PRIVATE_YAML.replace("size_unit: GiB", "size_unit: TB"), encoding="utf-8")
    clean = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    env = {**clean, "VOLBENCH_CATALOGUE": str(private)}
    gp3 = ("cost", "aws-gp3", "--size", "500", "--provisioned-iops", "60000")
    procs = run_all(
        [
            (volbench, (*gp3, "--as-of", "2024-06-30"), clean),
            (volbench, (*gp3, "--format", "json"), clean),
            (volbench, ("spec", "list", "--vendor", "aliyun", "--format", "json"), clean),
            (volbench, ("spec", "list", "--catalogue", str(private), "--format", "json"), clean),
            (volbench, ("spec", "expect", "private-instance-ssd", "--size", "100"), env),
            (volbench, ("cost", "private-instance-ssd", "--size", "100"), env),
            (volbench, ("spec", "list", "--catalogue", str(bad)), clean),
            (volbench, (*GP3_4000, "90000", "--as-of", "2026-01-01"), clean),
        ]
    )
    refused = error_line(procs[0], 2)
    assert "--provisioned-iops 60,000 IOPS is above the most allowed at 500 GiB" in refused
    assert "= 16,000 IOPS" in refused and "[V A2]" in refused
    (total,) = json.loads(procs[1].stdout)["totals"]  # 2026: up to 80,000 IOPS
    assert total["amount"] == 500 * 0.08 + 57000 * 0.005
    aliyun = json.loads(procs[2].stdout)["products"]
    assert aliyun and all(p["id"].startswith("aliyun-") for p in aliyun)
    listed = {p["id"]: p["origin"] for p in json.loads(procs[3].stdout)["products"]}
    assert listed["private-instance-ssd"] == str(private) and listed["aws-gp3"] == "built-in"
    assert procs[4].returncode == 0 and "3,000" in procs[4].stdout
    assert procs[5].returncode == 0 and "50" in procs[5].stdout
    assert f"{bad}: product private-instance-ssd: size_unit: must be one of GiB, GB" in (
        error_line(procs[6], 2)
    )
    assert "= 80,000 IOPS" in error_line(procs[7], 2)
    imported = volbench(
        "import",
        str(QUICK),
        "--label",
        "product=private-instance-ssd",
        "--label",
        "size_gib=100",
        env=env,
    )
    assert imported.returncode == 0, imported.stderr
    checked = volbench("check", "latest", "--format", "json", env=env)
    assert checked.returncode in (0, 1), checked.stderr
    assert json.loads(checked.stdout)["product"] == "private-instance-ssd"
    over = volbench(
        "check",
        "latest",
        "--product",
        "aws-gp3",
        "--size",
        "500",
        "--provisioned-iops",
        "60000",
        "--as-of",
        "2024-06-30",
        env=clean,
    )
    assert "= 16,000 IOPS" in error_line(over, 2)
