"""The products added from the rest of disk-catalogue.yaml give the YAML's own figures,
and burst credits (IOPS and throughput) behave as the vendors describe them."""

from __future__ import annotations

import pytest

from volbench.errors import UsageError
from volbench.specs import catalogue
from volbench.specs.expectation import expect
from volbench.specs.price import cost

CAT = catalogue.load()


def test_the_catalogue_covers_every_product_of_the_yaml() -> None:
    api_names = {p.api_name for p in CAT.products}
    for name in (
        "io2",
        "io2 Block Express",
        "sc1",
        "standard",
        "UltraSSD_LRS",
        "pd-standard",
        "pd-extreme",
        "hyperdisk-balanced",
        "hyperdisk-extreme",
        "hyperdisk-throughput",
        "cloud",
        "cloud_auto",
        "CLOUD_BSSD",
        "CLOUD_TSSD",
        "CLOUD_BASIC",
        "ESSD",
        "DataDisk",
        "SAS",
    ):
        assert name in api_names, name
    vendors = {p.vendor for p in CAT.products}
    assert {"Baidu AI Cloud", "Kingsoft Cloud", "China Telecom eSurfing Cloud (ctyun)"} <= vendors
    assert len(CAT.products) == 58
    assert len({p.id for p in CAT.products}) == 58


@pytest.mark.parametrize(
    ("size", "provisioned", "iops", "mib_s"),
    [(128, 64000, 64000, 1000), (100, 50000, 50000, 781.25), (100, 2000, 2000, 500)],
)
def test_io2_500_per_gib_64000_at_128_gib_before_block_express(
    size: float, provisioned: float, iops: float, mib_s: float
) -> None:
    e = expect(CAT.find("io2"), size, "2025-04-29", {"provisioned_iops": provisioned})
    assert (e.iops, e.throughput_value, e.throughput_unit) == (iops, mib_s, "MiB/s")
    with pytest.raises(UsageError, match="500:1"):  # 500 IOPS per GiB: no more at 100 GiB
        expect(CAT.find("io2"), 100, "2025-04-29", {"provisioned_iops": 50001})


def test_every_io2_volume_is_block_express_from_2025_04_30() -> None:
    e = expect(CAT.find("io2"), 256, "2025-04-30", {"provisioned_iops": 256000})
    assert (e.iops, e.throughput_value, e.edition.from_date) == (256000, 4000, "2025-04-30")
    assert e.latency is not None and e.latency.max_ms == 1  # Block Express: sub-millisecond
    assert expect(CAT.find("io2"), 65536, "2026-01-01", {"provisioned_iops": 100}).iops == 100
    with pytest.raises(UsageError, match=r"65536 GiB is outside|16384"):
        expect(CAT.find("io2"), 65536, "2025-01-01", {"provisioned_iops": 100})


def test_io2_block_express_256000_at_256_gib_and_4000_mib_s_from_16000_iops() -> None:
    product = CAT.find("aws-io2-block-express")
    full = expect(product, 256, None, {"provisioned_iops": 256000})
    assert (full.iops, full.throughput_value) == (256000, 4000)
    assert expect(product, 16, None, {"provisioned_iops": 16000}).throughput_value == 4000
    assert expect(product, 100, None, {"provisioned_iops": 10000}).throughput_value == 2560
    assert product.max_size == 65536


def test_io2_iops_prices_in_bands() -> None:
    (bill,) = cost(CAT.find("aws-io2-block-express"), 1000, 1.0, {"provisioned_iops": 100000})
    assert bill.amount == pytest.approx(
        1000 * 0.125 + 32000 * 0.065 + 32000 * 0.046 + 36000 * 0.032
    )


@pytest.mark.parametrize(
    ("size", "base", "burst"), [(128, 1.5, 10), (16384, 192, 250), (3200, 37.5, 250)]
)
def test_sc1_base_and_burst_per_tib(size: float, base: float, burst: float) -> None:
    e = expect(CAT.find("sc1"), size)  # A4: 1.5 / 10 MiB/s at 0.125 TiB, 250 cap at 3.125 TiB
    assert (e.throughput_value, e.burst_throughput_value) == (base, burst)
    assert e.burst_throughput_seconds is None  # the YAML gives st1's bucket only


def test_st1_burst_bucket_holds_1_tib_per_tib() -> None:
    e = expect(CAT.find("st1"), 1024)
    assert (e.throughput_value, e.burst_throughput_value) == (40, 250)
    assert e.burst_throughput_seconds == pytest.approx(1024 * 1024 / (250 - 40))
    small = expect(CAT.find("st1"), 128)  # A4: 5 MiB/s base, 31 MiB/s burst at 0.125 TiB
    assert (small.throughput_value, round(small.burst_throughput_value or 0)) == (5, 31)
    assert expect(CAT.find("st1"), 12800).burst_throughput_value is None  # base reaches 500


def test_gp2_throughput_bursts_to_128_then_250_mib_s_on_the_iops_bucket() -> None:
    small = expect(CAT.find("gp2"), 100)
    assert (small.throughput_value, small.burst_throughput_value) == (75, 128)
    # the same 5.4M credits of 256 KiB: 128 MiB/s is 512 I/Os per second, 300 of them earned
    assert small.burst_throughput_seconds == pytest.approx(5400000 / (512 - 300))
    assert expect(CAT.find("gp2"), 250).burst_throughput_value == 250
    assert expect(CAT.find("gp2"), 334).burst_throughput_value is None


@pytest.mark.parametrize(
    ("product", "size", "burst_iops", "burst_mb_s"),
    [
        ("azure-premium-ssd", 128, 3500, 170),  # P10
        ("azure-premium-ssd", 512, 3500, 170),  # P20
        ("azure-premium-ssd", 1024, None, None),  # P30: on-demand bursting only
        ("azure-standard-ssd", 128, 600, 150),  # E10
        ("azure-standard-ssd", 1024, 1000, 250),  # E30
        ("azure-standard-ssd", 2048, None, None),  # E40
    ],
)
def test_azure_credit_bursting_for_30_minutes(
    product: str, size: float, burst_iops: float | None, burst_mb_s: float | None
) -> None:
    e = expect(CAT.find(product), size)
    assert (e.burst_iops, e.burst_throughput_value) == (burst_iops, burst_mb_s)
    if burst_iops is not None:
        assert e.burst_seconds == e.burst_throughput_seconds == 30 * 60


@pytest.mark.parametrize(
    ("size", "iops", "mb_s"), [(4, 1200, 300), (16, 4800, 1200), (64, 19200, 4000)]
)
def test_azure_ultra_disk_size_caps_table(size: float, iops: float, mb_s: float) -> None:
    e = expect(
        CAT.find("UltraSSD_LRS"),
        size,
        "2025-01-01",
        {"provisioned_iops": iops, "provisioned_mb_s": 1e5},
    )
    assert (e.iops, e.throughput_value) == (iops, mb_s)
    assert (
        expect(
            CAT.find("azure-ultra-disk"),
            2048,
            "2025-01-01",
            {"provisioned_iops": 160000, "provisioned_mb_s": 1e5},
        ).iops
        == 160000
    )
    with pytest.raises(UsageError, match="300"):  # 2023: 300 IOPS per GiB
        expect(
            CAT.find("UltraSSD_LRS"),
            size,
            "2025-01-01",
            {"provisioned_iops": iops + 1, "provisioned_mb_s": 1e5},
        )


def test_azure_ultra_disk_2026_1000_iops_per_gib_up_to_400000_and_10000_mb_s() -> None:
    e = expect(
        CAT.find("azure-ultra-disk"),
        400,
        None,
        {"provisioned_iops": 400000, "provisioned_mb_s": 10000},
    )
    assert (e.iops, e.throughput_value, e.edition.from_date) == (400000, 10000, "2026-09-16")
    with pytest.raises(UsageError, match="10,000 MB/s"):
        expect(
            CAT.find("azure-ultra-disk"),
            400,
            None,
            {"provisioned_iops": 400000, "provisioned_mb_s": 10001},
        )


def test_pd_standard_has_separate_read_and_write_iops() -> None:
    e = expect(CAT.find("pd-standard"), 500)
    assert (e.iops, e.read_iops, e.write_iops, e.throughput_value) == (None, 375, 750, 60)
    assert CAT.find("pd-standard").rw_limits == "separate"


def test_hyperdisks_are_provisioned_within_their_bounds() -> None:
    balanced = CAT.find("hyperdisk-balanced")
    assert (expect(balanced, 100).iops, expect(balanced, 100).throughput_value) == (3000, 140)
    assert expect(balanced, 100, None, {"provisioned_iops": 200000}).iops == 160000
    extreme = CAT.find("hyperdisk-extreme")
    assert expect(extreme, 1000, None, {"provisioned_iops": 10000}).throughput_value == 2500
    assert expect(extreme, 1000, None, {"provisioned_iops": 100000}).throughput_value == 5000
    throughput = CAT.find("hyperdisk-throughput")
    low = expect(throughput, 32768, None, {"provisioned_mb_s": 320})
    assert (low.throughput_value, low.iops) == (320, 1280)  # at least 10 MiB/s per TiB
    with pytest.raises(UsageError, match=r"below the least allowed at 32768 GiB.* = 320 MiB/s"):
        expect(throughput, 32768, None, {"provisioned_mb_s": 20})
    with pytest.raises(UsageError, match="2,400"):
        expect(throughput, 2048, None, {"provisioned_mb_s": 2401})
    assert expect(throughput, 2048, None, {"provisioned_mb_s": 2400}).iops == 9600
    with pytest.raises(UsageError, match="range 2048-32768 GiB"):
        expect(throughput, 1024, None, {"provisioned_mb_s": 20})


def test_essd_autopl_2024_and_2026_formulas() -> None:
    product = CAT.find("cloud_auto")
    old = expect(product, 100, as_of="2025-01-01")
    assert (old.iops, old.throughput_value) == (6800, 170)  # as a PL1 of the same size
    now = expect(product, 100, None, {"provisioned_iops": 10000})
    assert (now.iops, now.throughput_value) == (6800 + 10000, 170 + 16 * 10000 / 1024)
    assert (now.burst_iops, now.burst_throughput_value) == (100000, 16 * 100000 / 1024)
    assert expect(product, 1).iops == 3000  # the 3,000 floor
    with pytest.raises(UsageError, match="only above 3 GiB"):  # <= 3 GiB: not provisionable
        expect(product, 1, None, {"provisioned_iops": 10000})
    with pytest.raises(UsageError, match="50,000"):
        expect(product, 100, None, {"provisioned_iops": 50001})
    assert expect(product, 4000).burst_throughput_value == 4 * 1024  # 4 GB/s


@pytest.mark.parametrize(
    ("name", "size", "iops", "tput", "unit"),
    [
        ("CLOUD_BSSD", 100, 3300, 120, "MB/s"),
        ("CLOUD_TSSD", 100, 14000, 170, "MB/s"),
        ("ucloud-essd", 100, 2600, 115, "MB/s"),
        ("ucloud-hdd", 100, 1000, 100, "MB/s"),
        ("huawei-evs-high-io", 100, 2600, 115, "MiB/s"),
        ("huawei-evs-high-io-my-kualalumpur-1", 100, 1800, 150, "MiB/s"),
        ("huawei-evs-extreme-ssd", 100, 6800, 170, "MiB/s"),
        ("baidu-cds-enhanced-ssd", 2000, 101800, 1120, "MB/s"),
        ("ksyun-ssd", 100, 4800, 170, "MB/s"),
        ("ctyun-extreme-ssd", 100, 6800, 250, "MB/s"),
        ("aws-standard", 100, 100, 40, "MiB/s"),
    ],
)
def test_formula_products(name: str, size: float, iops: float, tput: float, unit: str) -> None:
    e = expect(CAT.find(name), size)
    assert (e.iops, e.throughput_value, e.throughput_unit) == (iops, tput, unit)


@pytest.mark.parametrize(
    ("name", "size", "burst"),
    [
        ("huawei-evs-ultra-high-io", 100, 16000),
        ("huawei-evs-ultra-high-io", 500, None),  # 26,800 baseline: above the burst level
        ("huawei-evs-extreme-ssd", 100, 64000),
        ("ctyun-general-ssd", 100, 8000),
    ],
)
def test_burst_iops_without_a_bucket(name: str, size: float, burst: float | None) -> None:
    e = expect(CAT.find(name), size)
    assert (e.burst_iops, e.burst_seconds) == (burst, None)


def test_unstated_sizes_and_ranges() -> None:
    with pytest.raises(UsageError, match=r"range 1-\(no stated maximum\) GB"):
        expect(CAT.find("ctyun-general-ssd"), 0.5)
    assert expect(CAT.find("ctyun-general-ssd"), 100000).iops == 20000
    with pytest.raises(UsageError, match="range 1261-32765 GB"):
        expect(CAT.find("baidu-cds-enhanced-ssd"), 1000)
    basic = expect(CAT.find("aliyun-cloud"), 100)
    assert (basic.iops, basic.throughput_value, basic.latency and basic.latency.max_ms) == (
        None,
        30,
        10,
    )


def test_tencent_basic_prices_per_currency() -> None:
    totals = {(t.currency, t.billing): t for t in cost(CAT.find("CLOUD_BASIC"), 100, 1.0)}
    assert totals["USD", "pay-as-you-go"].amount == pytest.approx(0.0001 * 100 * 730)
    assert totals["CNY", "subscription"].amount == pytest.approx(30)
    (magnetic,) = cost(CAT.find("aws-standard"), 100, 1.0)  # per-request price not applied
    assert magnetic.amount == pytest.approx(5) and len(magnetic.lines) == 1


def test_dated_history_of_the_yaml() -> None:
    gp2_2018 = expect(CAT.find("gp2"), 4000, as_of="2018-06-01")  # A7: 10,000 IOPS, 160 MiB/s
    assert (gp2_2018.iops, gp2_2018.throughput_value) == (10000, 160)
    assert expect(CAT.find("gp2"), 4000).iops == 12000
    p30 = expect(CAT.find("azure-premium-ssd"), 1024, as_of="2020-01-01")  # Z4: MiB/sec
    assert (p30.iops, p30.throughput_value, p30.throughput_unit) == (5000, 200, "MiB/s")
    assert expect(CAT.find("azure-premium-ssd"), 1024).throughput_unit == "MB/s"
    s30 = expect(CAT.find("azure-standard-hdd"), 1000, as_of="2018-01-01")  # Z10b
    assert (s30.iops, s30.throughput_value) == (500, 60)
    v2 = CAT.find("azure-premium-ssd-v2")
    provisioned = {"provisioned_iops": 6000, "provisioned_mb_s": 1500}
    preview = expect(v2, 100, "2022-12-01", provisioned)
    assert (preview.throughput_value, preview.throughput_unit) == (1200, "MiB/s")
    assert expect(v2, 100, None, provisioned).throughput_unit == "MB/s"


def test_tencent_enhanced_ssd_breakpoints_and_extra_performance() -> None:
    hssd = CAT.find("CLOUD_HSSD")
    at_460 = expect(hssd, 460)  # T4: throughput cap reached at 460 GB (24,800 IOPS)
    assert (at_460.iops, at_460.throughput_value) == (24800, 350)
    assert expect(hssd, 964).iops == 50000  # T4: IOPS cap at 964 GB
    extra = expect(hssd, 1000, None, {"extra_performance": 100})
    assert (extra.iops, extra.throughput_value) == (50000 + 128 * 100, 350 + 100)
    most = expect(hssd, 1000, None, {"extra_performance": 10000})
    assert (most.iops, most.throughput_value) == (100000, 1000)  # T4 totals
    tssd = expect(CAT.find("CLOUD_TSSD"), 1000, None, {"extra_performance": 1000})
    assert (tssd.iops, tssd.throughput_value) == (50000 + 128 * 1000, 350 + 1000)
    assert expect(CAT.find("CLOUD_TSSD"), 1000, None, {"extra_performance": 1e5}).iops == 1e6


def test_missing_provisioned_values_name_the_options() -> None:
    with pytest.raises(UsageError, match="give --provisioned-iops, --provisioned-mbps"):
        expect(CAT.find("azure-ultra-disk"), 100)
    with pytest.raises(UsageError, match="give --provisioned-mbps"):
        expect(CAT.find("hyperdisk-throughput"), 4096)


def test_older_tables_and_variants() -> None:
    e10 = expect(CAT.find("azure-standard-ssd"), 128, as_of="2020-01-01")  # Z6, MiB/s
    assert (e10.iops, e10.throughput_value, e10.throughput_unit) == (500, 60, "MiB/s")
    e4 = expect(CAT.find("azure-standard-ssd"), 30, as_of="2020-01-01")
    assert (e4.iops, e4.throughput_value, e4.burst_iops) == (120, 25, None)
    assert expect(CAT.find("azure-standard-ssd"), 30).iops == 500  # 2023: E1-E4 500
    assert expect(CAT.find("azure-page-blob-basic"), 1023).iops == 300  # Z10, Z11
    essd = expect(CAT.find("aliyun-essd-2018"), 2000)  # L4: 100 x GiB + 1,200
    assert (essd.iops, essd.throughput_value) == (201200, 2080)
