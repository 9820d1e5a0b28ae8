"""The 2025-2026 editions and the provisioning limits: refused outside what the vendor
allowed at the date, with the limit and its source, in `spec expect`, `cost` and `check`."""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import UsageError
from volbench.plans.imported.importing import import_file
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.specs import catalogue
from volbench.specs.expectation import check_limits, expect
from volbench.specs.price import cost
from volbench.store.repository import Store

CAT = catalogue.built_in()
GP3 = CAT.find("aws-gp3")


def test_gp3_2025_edition_80000_iops_2000_mib_s_64_tib() -> None:
    e = expect(GP3, 4000, "2026-01-01", {"provisioned_iops": 80000, "provisioned_mb_s": 2000})
    assert (e.iops, e.throughput_value, e.edition.from_date) == (80000, 2000, "2025-09-26")
    assert GP3.size_range("2026-01-01") == (1, 65536)
    assert GP3.size_range("2024-01-01") == (1, 16384)
    big = expect(GP3, 65536, "2026-01-01")
    assert (big.iops, big.throughput_value) == (3000, 125)  # the baseline, whatever the size
    figure = e.edition.iops
    assert figure is not None and figure.status == "VM" and "A19" in figure.sources


def test_gp3_refuses_what_aws_did_not_allow_at_the_date() -> None:
    with pytest.raises(UsageError, match=r"90,000 IOPS is above.*= 80,000 IOPS.*\[VM A19, A2\]"):
        expect(GP3, 4000, "2026-01-01", {"provisioned_iops": 90000})
    with pytest.raises(UsageError, match=r"80,000 IOPS is above.* = 16,000 IOPS.*as of 2024"):
        expect(GP3, 4000, "2024-06-30", {"provisioned_iops": 80000})
    with pytest.raises(UsageError, match=r"60,000 IOPS.* = 16,000 IOPS.*\[V A2\]"):
        check_limits(GP3, 500, "2024-06-30", {"provisioned_iops": 60000})
    check_limits(GP3, 500, None, {"provisioned_iops": 60000})  # 500 x 500 = 250,000 > 80,000
    with pytest.raises(UsageError, match=r"= 5,000 IOPS"):  # 500 IOPS per GiB at 10 GiB
        check_limits(GP3, 10, None, {"provisioned_iops": 6000})
    with pytest.raises(UsageError, match=r"below the least allowed.*3000 IOPS"):
        check_limits(GP3, 10, None, {"provisioned_iops": 2000})
    with pytest.raises(UsageError, match=r"0.25 \* provisioned_iops.*= 750 MiB/s"):
        check_limits(GP3, 100, None, {"provisioned_mb_s": 751})  # 3,000 IOPS by default
    with pytest.raises(UsageError, match=r"--size 20,000 GiB is above the most allowed, 16384"):
        check_limits(GP3, 20000, "2024-01-01", {})


def test_cost_bills_only_what_may_be_provisioned() -> None:
    (bill,) = cost(GP3, 500, 1.0, {"provisioned_iops": 60000})
    assert bill.amount == pytest.approx(500 * 0.08 + (60000 - 3000) * 0.005)  # 325 USD, 2026


def test_io2_is_block_express_and_premium_ssd_v2_reaches_2000_mb_s() -> None:
    io2 = CAT.find("io2")
    assert io2.edition("2025-04-30").label.startswith("2025-04-30: every io2 volume")
    v2 = CAT.find("azure-premium-ssd-v2")
    e = expect(v2, 200, None, {"provisioned_iops": 8000, "provisioned_mb_s": 2000})
    assert (e.throughput_value, e.throughput_unit, e.edition.from_date) == (
        2000,
        "MB/s",
        "2026-09-16",
    )
    with pytest.raises(UsageError, match="= 1,200 MB/s"):
        expect(v2, 200, "2026-01-01", {"provisioned_iops": 8000, "provisioned_mb_s": 2000})


def test_tencent_extra_performance_only_above_460_gib() -> None:
    hssd = CAT.find("CLOUD_HSSD")
    assert expect(hssd, 461, None, {"extra_performance": 100}).throughput_value == 350 + 100
    with pytest.raises(UsageError, match=r"only above 460 GB.*exceeding 460GiB.*\[V T7\]"):
        expect(hssd, 460, None, {"extra_performance": 100})


def test_every_limit_quotes_a_source_the_catalogue_names() -> None:
    for product in CAT.products:
        for edition in product.editions:
            for limit in edition.limits:
                assert limit.quote and set(limit.sources) <= set(CAT.sources), product.id


def test_check_refuses_provisioning_outside_the_limits(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "results.db")) as store:
        import_file(store, FIO_FIXTURES / "quick/round-000.json", {})
        run = store.get_run("latest")
        request = CheckRequest("aws-gp3", 500, "2024-06-30", {"provisioned_iops": 60000})
        with pytest.raises(UsageError, match="16,000 IOPS"):
            check_sheet(run, CAT, request)
        allowed = CheckRequest("aws-gp3", 500, None, {"provisioned_iops": 60000})
        assert check_sheet(run, CAT, allowed).document["edition_from"] == "2025-09-26"
