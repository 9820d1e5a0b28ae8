"""The catalogue reproduces the seeds' figures, keeps its history, and matches its sources."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from volbench.errors import UsageError
from volbench.report.cost_sheets import cost_sheet
from volbench.report.spec_sheets import expectation_sheet
from volbench.specs import catalogue, provenance
from volbench.specs.expectation import curve_sizes, expect
from volbench.specs.price import cost

SHARED = Path(__file__).resolve().parents[3] / "shared"
CAT = catalogue.load()


def test_ucloud_rssd_2040_gb_seed_001() -> None:
    e = expect(CAT.find("ucloud-rssd"), 2040)
    assert (e.iops, e.throughput_value, e.throughput_unit) == (103800, 1140, "MB/s")
    assert e.throughput_bytes_per_s == 1140e6


@pytest.mark.parametrize(("size", "iops", "mb_s"), [(250, 7500, 175), (500, 15000, 256)])
def test_aliyun_2016_ssd_seed_000(size: float, iops: float, mb_s: float) -> None:
    e = expect(CAT.find("aliyun-cloud-ssd"), size, as_of="2016-12-31")
    assert (e.iops, e.throughput_value) == (iops, mb_s)
    assert e.edition.from_date == "2016-12-01"
    assert expect(CAT.find("cloud_ssd"), size).iops == min(1800 + 30 * size, 25000)


@pytest.mark.parametrize(("size", "iops", "mb_s"), [(50, 1900, 82.35), (400, 4500, 130)])
def test_tencent_2016_hybrid_seed_000(size: float, iops: float, mb_s: float) -> None:
    e = expect(CAT.find("tencent-cloud-premium"), size, as_of="2016-12-31")
    assert e.iops == iops
    assert e.throughput_value == pytest.approx(mb_s)


def test_tencent_2016_ssd_cap_is_24000_not_the_posts_typo() -> None:
    assert expect(CAT.find("tencent-cloud-ssd"), 1000, as_of="2016-12-31").iops == 24000


@pytest.mark.parametrize(("size", "iops"), [(128, 500), (512, 2300), (1024, 5000), (100, 500)])
@pytest.mark.parametrize("as_of", ["2016-06-01", None])
def test_azure_p10_p20_p30_seed_002(size: float, iops: float, as_of: str | None) -> None:
    product = CAT.find("azure-premium-ssd")
    assert expect(product, size, as_of=as_of).iops == iops
    assert product.iops_io_bytes == 8192


@pytest.mark.parametrize(("size", "provisioned"), [(100, 1000), (200, 2000)])
def test_aws_provisioned_iops_seed_003(size: float, provisioned: float) -> None:
    product = CAT.find("io1")
    for as_of in ("2014-07-01", None):
        e = expect(product, size, as_of, {"provisioned_iops": provisioned})
        assert e.iops == provisioned
    assert (product.iops_io_bytes, product.count_unit_bytes) == (16384, 262144)  # A1, A5


def test_gp2_burst_duration_matches_the_aws_example() -> None:
    e = expect(CAT.find("aws-gp2"), 100)  # A2: 100 GiB -> 2,000 s at 3,000 IOPS
    assert (e.iops, e.burst_iops, e.burst_seconds) == (300, 3000, 2000)
    assert e.throughput_value == 75  # A8: 300 IOPS x 256 KiB = 75 MiB/s
    assert expect(CAT.find("aws-gp2"), 2000).burst_iops is None


def test_bad_input_is_a_one_line_usage_error() -> None:
    with pytest.raises(UsageError, match="did you mean ucloud-rssd"):
        CAT.find("ucloud-rsd")
    with pytest.raises(UsageError, match="outside ucloud-rssd's range 1-32000 GB"):
        expect(CAT.find("ucloud-rssd"), 40000)
    with pytest.raises(UsageError, match="give --provisioned-iops"):
        expect(CAT.find("aws-io1"), 100)
    with pytest.raises(UsageError, match="oldest known is from 2016-12-01"):
        expect(CAT.find("aliyun-cloud-ssd"), 100, as_of="2015-01-01")


def test_costs_per_currency_and_billing() -> None:
    (gp3,) = cost(CAT.find("aws-gp3"), 500, 1.0, {"provisioned_iops": 6000})
    assert gp3.amount == pytest.approx(500 * 0.08 + 3000 * 0.005)
    totals = {(t.currency, t.billing): t for t in cost(CAT.find("tencent-cloud-ssd"), 100, 2.0)}
    assert set(totals) == {("USD", "pay-as-you-go"), ("CNY", "subscription")}
    assert totals["USD", "pay-as-you-go"].amount == pytest.approx(0.0003 * 100 * 730 * 2)
    assert totals["CNY", "subscription"].monthly == pytest.approx(110)
    (p20,) = cost(CAT.find("azure-premium-ssd"), 500, 1.0)
    assert p20.amount == 73.22


def test_cost_per_provisioned_iops_and_mb_s() -> None:
    """gp3 at 500 GiB with 6,000 IOPS: 500 x 0.08 + 3,000 x 0.005 = 55 USD/month for
    6,000 IOPS and 125 MiB/s = 131.072 MB/s (catalogue A2, A11)."""
    gp3 = CAT.find("aws-gp3")
    values = {"provisioned_iops": 6000.0}
    sheet = cost_sheet(gp3, 500, 2.0, cost(gp3, 500, 2.0, values), expect(gp3, 500, None, values))
    (total,) = sheet.document["totals"]
    assert (total["amount"], total["monthly"]) == (110, 55)
    assert (total["provisioned_iops"], total["provisioned_mb_s"]) == (6000, 131.072)
    assert total["per_provisioned_iops"] == pytest.approx(55 / 6000)  # 0.0091667
    assert total["per_provisioned_mb_s"] == pytest.approx(55 / 131.072)  # 0.41962
    row = sheet.rows[-1]
    assert (row["per_provisioned_iops"], row["currency"]) == (total["per_provisioned_iops"], "USD")
    headers = [c.header for c in sheet.columns]
    assert "USD/month per prov. IOPS" in headers and "USD/month per prov. MB/s" in headers
    assert sheet.cells()[-1][4:6] == ["0.0092", "0.4196"]
    # two currencies: each total divided in its own, the header names no single one
    tencent = CAT.find("tencent-cloud-ssd")  # 1.1 CNY/GB-month, 0.0003 USD/GB-hour, 4,800 IOPS
    mixed = cost_sheet(tencent, 100, 1.0, cost(tencent, 100, 1.0), expect(tencent, 100))
    per = {t["currency"]: t["per_provisioned_iops"] for t in mixed.document["totals"]}
    assert per == pytest.approx({"CNY": 110 / 4800, "USD": 0.0003 * 100 * 730 / 4800})
    assert "currency/month per prov. IOPS" in [c.header for c in mixed.columns]


def test_spec_expect_shows_the_monthly_price_at_the_size() -> None:
    gp3 = expectation_sheet(expect(CAT.find("aws-gp3"), 500, None, {"provisioned_iops": 6000}))
    (price,) = gp3.document["prices"]
    assert (price["value"], price["unit"], price["billing"]) == (55, "USD/month", "monthly")
    assert price["basis"].startswith("500 x 0.08 USD per GB-month (us-east-1, undated)")
    assert "3000 x 0.005 USD per IOPS-month above 3000" in price["basis"]
    assert (price["regions"], price["dates"], price["sources"]) == (
        ["us-east-1"],
        ["undated"],
        "A11, A12",
    )
    assert price in gp3.rows
    tencent = expectation_sheet(expect(CAT.find("tencent-cloud-ssd"), 100))
    prices = {(p["currency"], p["billing"]): p for p in tencent.document["prices"]}
    assert prices["CNY", "subscription"]["value"] == pytest.approx(110)  # 1.1 CNY/GB-month
    usd = prices["USD", "pay-as-you-go"]  # 0.0003 USD/GB-hour x 730 h
    assert usd["value"] == pytest.approx(0.0003 * 100 * 730)
    assert (usd["dates"], usd["regions"]) == (["2020-06-04"], ["Guangzhou/Shanghai/Beijing"])
    assert "x 730 h" in usd["basis"]


def test_cost_without_the_provisioned_figures_says_what_to_give() -> None:
    io1 = CAT.find("aws-io1")
    sheet = cost_sheet(io1, 100, 1.0, cost(io1, 100, 1.0), None, "give --provisioned-iops")
    assert sheet.document["totals"][0]["per_provisioned_iops"] is None
    assert "no cost per provisioned IOPS or MB/s: give --provisioned-iops" in sheet.notes


def _document() -> dict[str, Any]:
    text = resources.files("volbench.specs").joinpath("catalogue.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared data folder is not present")
def test_every_figure_is_quoted_from_its_source() -> None:
    texts = provenance.source_texts(SHARED / "data" / "disk-catalogue.yaml", SHARED / "seeds")
    assert provenance.problems(_document(), texts) == []
    changed = copy.deepcopy(_document())
    changed["products"][0]["editions"][0]["iops"]["expr"] = "min(max(4 * size, 100), 16000)"
    changed["products"][1]["prices"][0]["quote"] = "value: 0.07"
    azure = next(p for p in changed["products"] if p["id"] == "azure-premium-ssd")
    azure["editions"][1]["iops"]["tiers"][5] = [128, 550]
    st1 = next(p for p in changed["products"] if p["id"] == "aws-st1")
    st1["editions"][0]["burst"]["throughput"]["expr"] = "min(260 * size / 1024, 500)"
    changed["instances"][0]["iops_baseline"] = 501
    found = provenance.problems(changed, texts)
    assert len(found) == 5
    assert "[4.0] not in quote" in found[0] and "quote not in any source" in found[1]
    assert "aws-st1 2022-12-17 burst throughput: [260.0] not in quote" in found[2]
    assert "no source line holds tier (128, 550)" in found[3]
    assert "instance t3.micro: [501.0] not in quote" in found[4]


def test_curve_sizes_cover_the_range_and_every_tier() -> None:
    assert curve_sizes(CAT.find("aliyun-cloud-ssd"), 4000, 5) == [20, 1015, 2010, 3005, 4000]
    azure = curve_sizes(CAT.find("azure-premium-ssd"), 1024, 2)
    assert azure == [4, 8, 16, 32, 64, 128, 256, 512, 1024]
    with pytest.raises(UsageError, match="below aws-st1's minimum 125 GiB"):
        curve_sizes(CAT.find("aws-st1"), 100, 5)
