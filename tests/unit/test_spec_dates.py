"""Answers as of a date use only what was known then; vendors match as users name them."""

from __future__ import annotations

import pytest

from volbench.report.spec_sheets import expectation_sheet
from volbench.specs import catalogue, vendors
from volbench.specs.expectation import expect
from volbench.specs.price import cost

CAT = catalogue.built_in()


def test_a_2016_answer_holds_no_2023_latency_nor_2019_2020_prices() -> None:
    old = expect(CAT.find("tencent-cloud-ssd"), 500, "2016-12-31")
    assert old.edition.from_date == "2016-12-01"
    assert old.latency is None  # stated in a 2023 page (T1)
    assert cost(old.product, 500, 1.0, {}, "2016-12-31") == []  # priced 2019 and 2020 (T5, T6)
    sheet = expectation_sheet(old)
    assert sheet.document["latency_max_ms"] is None and sheet.document["prices"] == []
    assert "latency: not known at 2016-12-31 (first stated 2023-07-10)" in sheet.notes
    assert any(n.startswith("price: not known at 2016-12-31") for n in sheet.notes)
    between = expect(CAT.find("tencent-cloud-ssd"), 500, "2019-06-30")
    assert [p.from_date for p in between.product.prices_at("2019-06-30")] == ["2019-01-23"]
    now = expect(CAT.find("tencent-cloud-ssd"), 500)
    assert now.latency is not None and len(cost(now.product, 500, 1.0)) == 2


@pytest.mark.parametrize("as_of", ["2016-12-31", "2019-01-01", "2022-01-01", "2025-01-01"])
def test_every_figure_of_an_answer_is_in_force_at_its_date(as_of: str) -> None:
    for product in CAT.products:
        if product.editions[0].from_date > as_of:
            continue
        edition = product.edition(as_of)
        assert edition.from_date <= as_of
        latency = product.latency_at(edition, as_of)
        assert latency is None or latency.from_date <= as_of, product.id
        assert all(p.from_date <= as_of for p in product.prices_at(as_of)), product.id


@pytest.mark.parametrize(
    ("text", "vendor"),
    [
        ("aliyun", "Alibaba Cloud"),
        ("Alibaba", "Alibaba Cloud"),
        ("qcloud", "Tencent Cloud"),
        ("tencent", "Tencent Cloud"),
        ("gcp", "Google Cloud"),
        ("google", "Google Cloud"),
        ("amazon", "AWS"),
        ("azure", "Microsoft Azure"),
        ("ksyun", "Kingsoft Cloud"),
        ("esurfing", "China Telecom eSurfing Cloud (ctyun)"),
        ("huawei", "Huawei Cloud"),
    ],
)
def test_vendors_match_by_id_prefix_name_and_alias(text: str, vendor: str) -> None:
    found = CAT.of_vendor(text)
    assert found and {p.vendor for p in found} == {vendor}
    assert [p.id for p in found] == [p.id for p in CAT.products if p.vendor == vendor]


def test_vendor_text_that_names_nothing() -> None:
    assert CAT.of_vendor("nosuch") == [] and CAT.of_vendor(" ") == []
    assert not vendors.matches("ali", "tencent-cloud-ssd", "Tencent Cloud")
    assert "Alibaba Cloud (aliyun" in vendors.known([p.vendor for p in CAT.products])
