"""Measured vs promised on stored runs made from recorded fio outputs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES, raw_document

from products import split_product
from volbench.analysis.promise import Measured, check, combined_finding, rate_verdict
from volbench.errors import UsageError
from volbench.model import StoredWorkload
from volbench.plans.imported.importing import import_file
from volbench.report.check_sheets import CheckRequest, check_sheet, count_unit_lines
from volbench.specs import catalogue
from volbench.specs.expectation import expect, given_caps
from volbench.store.repository import Store

CAT = catalogue.load()


def _stored(tmp_path: Path, fixture: str, labels: dict[str, str]) -> Store:
    store = Store.open(str(tmp_path / "results.db"))
    import_file(store, FIO_FIXTURES / fixture, labels)
    return store


def test_quick_run_against_io1_reports_fios_own_figures(tmp_path: Path) -> None:
    labels = {"product": "aws-io1", "size_gib": "200"}
    with _stored(tmp_path, "quick/round-000.json", labels) as store:
        request = CheckRequest(None, None, provisioned={"provisioned_iops": 2000})
        sheet = check_sheet(store.get_run("latest"), CAT, request)
    jobs = {job["jobname"]: job for job in raw_document("quick/round-000.json")["jobs"]}
    rows = {row["test"]: row for row in sheet.rows}
    assert set(rows) == {t for t in jobs if "latency" not in t}  # io1 states no latency
    for name, row in rows.items():
        direction = "read" if "randread" in name else "write"
        assert row["measured"] == jobs[name][direction]["iops"]
        assert row["expected"] == 2000 and row["verdict"] == "above"
        assert row["ratio"] == row["measured"] / 2000
    assert sheet.document["passed"] is True
    # io1 at 200 GiB, 2,000 IOPS: 200 x 0.125 + 2,000 x 0.065 = 155 USD/month (A11);
    # 2,000 IOPS x 256 KiB = 500 MiB/s = 524.288 MB/s promised (A3)
    (price,) = sheet.document["price_performance"]
    best = max(
        (job for name, job in jobs.items() if "latency" not in name),
        key=lambda job: job["read"]["iops"] + job["write"]["iops"],
    )
    assert (price["monthly"], price["currency"]) == (155, "USD")
    assert price["per_promised_iops"] == pytest.approx(0.0775)
    assert price["per_promised_mb_s"] == pytest.approx(155 / 524.288)  # 0.29564
    assert price["per_measured_iops"] == 155 / (best["read"]["iops"] + best["write"]["iops"])
    # every test is IOPS-bound at 2,000 IOPS: none measured what a MB/s costs
    assert price["per_measured_mb_s"] is None and price["measured_mb_s"] is None
    (note,) = [n for n in sheet.notes if n.startswith("price/performance")]
    assert "0.0775 USD/month per promised IOPS (2,000)" in note
    assert "0.2956 USD/month per promised MB/s (524.3)" in note
    assert "USD/month per measured IOPS" in note and "USD/month per measured MB/s" not in note
    assert "no throughput-bound test measured" in note
    assert "latency: the vendor states none, QD 1 tests not checked" in sheet.notes


def test_price_per_measured_mb_s_comes_from_throughput_bound_tests_only(tmp_path: Path) -> None:
    with _stored(tmp_path, "quick/round-000.json", {}) as store:
        sheet = check_sheet(store.get_run("latest"), CAT, CheckRequest("ucloud-rssd", 2040))
    bound = {r["test"]: r["metric"] for r in sheet.rows if r["metric"] in ("IOPS", "MB/s")}
    jobs = {job["jobname"]: job for job in raw_document("quick/round-000.json")["jobs"]}
    mb_s = {
        name: (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6
        for name, job in jobs.items()
        if bound.get(name) == "MB/s"
    }
    assert mb_s and all("16k" in name for name in mb_s)  # not the 4 KiB IOPS tests
    (price,) = sheet.document["price_performance"]
    assert price["measured_mb_s"] == max(mb_s.values())
    assert price["per_measured_mb_s"] == price["monthly"] / max(mb_s.values())


def test_quick_run_against_ucloud_rssd_is_below_and_latency_checked(tmp_path: Path) -> None:
    with _stored(tmp_path, "quick/round-000.json", {}) as store:
        sheet = check_sheet(store.get_run("latest"), CAT, CheckRequest("ucloud-rssd", 2040))
    rows = {(r["test"], r["metric"]): r for r in sheet.rows}
    jobs = {job["jobname"]: job for job in raw_document("quick/round-000.json")["jobs"]}
    tput = rows["randread-16k-throughput", "MB/s"]
    assert tput["expected"] == 1140
    assert tput["measured"] == jobs["randread-16k-throughput"]["read"]["bw_bytes"] / 1e6
    assert "throughput-bound" in tput["reason"]
    lat = rows["randread-4k-latency", "latency read"]
    assert lat["measured"] == jobs["randread-4k-latency"]["read"]["lat_ns"]["mean"] / 1e6
    assert lat["expected"] == 0.2
    assert sheet.flagged_rows and sheet.document["passed"] is False


def test_a_run_without_labels_or_options_is_refused(tmp_path: Path) -> None:
    with _stored(tmp_path, "randread_json.json", {}) as store:
        run = store.get_run("latest")
    with pytest.raises(UsageError, match="give --product and --size"):
        check_sheet(run, CAT, CheckRequest(None, None))


def _measured(bs: int, read: float, write: float, rw: str = "randrw") -> Measured:
    return Measured("t", rw, bs, 32, read, write, read * bs, write * bs, None, None)


def test_aws_ssd_counts_io_up_to_256_kib_as_one() -> None:
    """AWS counts SSD I/O up to 256 KiB as one, larger in 256 KiB units (A5, 2023);
    the EC2/Azure disk article's older '250 write records of 64 KB' for 1,000 IOPS (16 KiB units)
    is undated and not applied (CATALOGUE.md)."""
    e = expect(CAT.find("aws-io1"), 200, None, {"provisioned_iops": 2000})
    verdict = rate_verdict(_measured(65536, 2000, 0, "randread"), e)
    assert verdict is not None
    assert (verdict.measured, verdict.expected, verdict.verdict) == (2000, 2000, "meets")
    assert "AWS counts an I/O of up to 256 KiB as one" in verdict.reason
    old_wording = rate_verdict(_measured(65536, 500, 0, "randread"), e)
    assert old_wording is not None and old_wording.verdict == "below"
    large = rate_verdict(_measured(1048576, 500, 0, "randread"), e)  # 500 MiB/s
    assert large is not None and (large.measured, large.verdict) == (2000, "meets")
    assert "1024 KiB I/O counted as 4 x 256 KiB (AWS)" in large.reason
    # A8's example: gp2 at 100 GiB, 300 IOPS x 256 KiB = 75 MiB/s
    gp2 = rate_verdict(_measured(262144, 300, 0, "randread"), expect(CAT.find("aws-gp2"), 100))
    assert gp2 is not None and (gp2.metric, gp2.expected, gp2.verdict) == ("IOPS", 300, "meets")
    # gp3's 125 MiB/s binds before its 3,000 IOPS at 64 KiB (2,000 x 64 KiB)
    gp3 = rate_verdict(_measured(65536, 2000, 0, "randread"), expect(CAT.find("aws-gp3"), 100))
    assert gp3 is not None and (gp3.metric, gp3.verdict) == ("MB/s", "meets")
    assert gp3.reason.startswith("throughput-bound at 64 KiB (2,000 IOPS x 64 KiB)")
    assert "AWS counts an I/O of up to 256 KiB as one" in gp3.reason


def test_seed_003s_16_kib_rule_with_count_unit() -> None:
    """Seed 003: "1000 iops can send ... 250 write records of 64 KB" (16 KiB units):
    what ``check --count-unit 16k`` applies instead of the catalogue's 256 KiB."""
    io1 = dataclasses.replace(CAT.find("aws-io1"), count_unit_bytes=16384)
    e = expect(io1, 100, None, {"provisioned_iops": 1000})
    verdict = rate_verdict(_measured(65536, 0, 250, "randwrite"), e)
    assert verdict is not None
    assert (verdict.measured, verdict.expected, verdict.verdict) == (1000, 1000, "meets")
    assert "64 KiB I/O counted as 4 x 16 KiB (AWS)" in verdict.reason
    assert count_unit_lines(16384, 262144) == [
        "I/O counted in 16 KiB units (--count-unit); the catalogue's: 256 KiB"
    ]
    assert count_unit_lines(None, 262144) == []


def test_instance_cap_and_burst() -> None:
    e = expect(CAT.find("ucloud-rssd"), 2040)
    capped = rate_verdict(_measured(4096, 18000, 0, "randread"), e, given_caps(18000, None))
    assert capped is not None and capped.verdict == "meets" and "instance cap" in capped.reason
    gp2 = expect(CAT.find("aws-gp2"), 100)
    burst = rate_verdict(_measured(4096, 2950, 0, "randread"), gp2)
    assert burst is not None and burst.verdict == "meets" and "bursting" in burst.reason


def test_tencent_50_50_mix_reaching_twice_the_cap_is_separate_budgets() -> None:
    e = expect(CAT.find("tencent-cloud-premium"), 400, "2016-12-31")  # cap 4,500
    mix = _measured(4096, 4480, 4490)
    verdicts, findings = check([mix], e)
    assert verdicts[0].expected == pytest.approx(9000, rel=0.01)
    planned = dataclasses.replace(mix, read_mix_pct=50)
    assert check([planned], e)[0][0].expected == 9000
    assert verdicts[0].verdict == "meets"
    assert "separate budgets" in findings[0]
    assert "4,480 and writes 4,490 IOPS at the 4,500 cap each (1.99 x cap" in findings[0]


def test_seed_000_aliyun_mix_sharing_the_cap_is_one_combined_budget() -> None:
    e = expect(CAT.find("aliyun-cloud-efficiency"), 400, "2016-12-31")
    assert e.iops == 3000  # min(1000 + 6 x 400, 3000), the 2016 Aliyun/Tencent post
    finding = combined_finding(_measured(4096, 1490, 1480), e) or ""
    assert "reads + writes 2,970 IOPS ~ the 3,000 cap: one combined budget" in finding


def test_a_mix_far_above_the_cap_concludes_neither() -> None:
    """An unthrottled loop device outruns gp3's 3,000 IOPS 24-fold: no budget finding."""
    e = expect(CAT.find("aws-gp3"), 200)
    finding = combined_finding(_measured(4096, 48015, 25939), e) or ""
    assert "separate budgets" not in finding and "combined budget" not in finding
    assert "reads 48,015 and writes 25,939 IOPS, 24.7 x the 3,000 cap" in finding
    assert "not throttled at this size, cannot tell combined from separate" in finding
    assert check([_measured(4096, 48015, 25939)], e)[1] == [finding]
    # the sum above a combined cap with neither direction at it: no finding either way
    assert combined_finding(_measured(4096, 2240, 2250), expect(CAT.find("aws-gp3"), 100)) is None
    assert combined_finding(_measured(4096, 1000, 990), e) is None  # below the cap


def test_a_mix_is_counted_in_the_vendors_units() -> None:
    e = expect(CAT.find("aws-io1"), 200, None, {"provisioned_iops": 2000})
    finding = combined_finding(_measured(524288, 500, 495), e) or ""  # 512 KiB = 2 x 256 KiB
    assert "reads + writes 1,990 IOPS (2 x 256 KiB per I/O) ~ the 2,000 cap" in finding


@pytest.mark.parametrize(
    ("size", "provisioned", "measured"), [(100, 1000, 1020), (200, 2000, 2040)]
)
def test_seed_003_io1_volumes_meet_their_provisioned_iops(
    size: float, provisioned: float, measured: float
) -> None:
    e = expect(CAT.find("aws-io1"), size, None, {"provisioned_iops": provisioned})
    verdict = rate_verdict(_measured(16384, measured, 0, "randread"), e)
    assert verdict is not None and verdict.verdict == "meets"
    assert verdict.ratio == pytest.approx(1.02)


def test_a_run_whose_workloads_cannot_be_compared(tmp_path: Path) -> None:
    with _stored(tmp_path, "quick/round-000.json", {}) as store:
        run = store.get_run("latest")
    unknown = tuple(
        dataclasses.replace(r, workload=StoredWorkload(rw=r.workload.rw)) for r in run.results
    )
    with pytest.raises(UsageError, match="no workload that can be compared: randwrite-4k-iops"):
        check_sheet(dataclasses.replace(run, results=unknown), CAT, CheckRequest("aws-gp3", 100))


def test_check_of_an_unthrottled_mix_says_no_budget_can_be_told(tmp_path: Path) -> None:
    with _stored(tmp_path, "randrw_lat_percentiles_jsonplus.json", {}) as store:
        sheet = check_sheet(store.get_run("latest"), CAT, CheckRequest("aws-gp3", 200))
    job = raw_document("randrw_lat_percentiles_jsonplus.json")["jobs"][0]
    read, write = job["read"]["iops"], job["write"]["iops"]
    (finding,) = sheet.document["findings"]
    assert f"reads {read:,.0f} and writes {write:,.0f} IOPS" in finding
    assert f"{(read + write) / 3000:.1f} x the 3,000 cap" in finding
    assert "cannot tell combined from separate" in finding and finding in sheet.notes


@pytest.mark.parametrize("rw", ["read", "write"])
def test_a_1_mib_sequential_request_counts_as_4_ios_of_256_kib(rw: str) -> None:
    """Issue 24's guest counts in 256 KiB units (QEMU's iops-size, AWS's rule, A5): a
    sequential 1 MiB request at 250 IOPS is 1,000 of the vendor's I/Os, at the cap."""
    e = expect(CAT.find("aws-io1"), 200, None, {"provisioned_iops": 1000})
    read, write = (250, 0) if rw == "read" else (0, 250)
    verdict = rate_verdict(_measured(1048576, read, write, rw), e)
    assert verdict is not None
    assert (verdict.metric, verdict.measured, verdict.expected) == ("IOPS", 1000, 1000)
    assert verdict.verdict == "meets"
    assert "1024 KiB I/O counted as 4 x 256 KiB (AWS)" in verdict.reason
    twice = rate_verdict(_measured(1048576, 2 * read, 2 * write, rw), e)
    assert twice is not None and (twice.measured, twice.verdict) == (2000, "above")


SPLIT_PRODUCT = split_product(33_700, 40_000, 10_000)
"""Separate read and write IOPS promises: the mix's reads (33,681 IOPS) at the first."""


def test_check_names_a_mixs_direction_at_the_promised_cap(tmp_path: Path) -> None:
    (tmp_path / "split.yaml").write_text(SPLIT_PRODUCT)
    cat = catalogue.load((str(tmp_path / "split.yaml"),))
    with _stored(tmp_path, "randrw_lat_percentiles_jsonplus.json", {}) as store:
        sheet = check_sheet(store.get_run("latest"), cat, CheckRequest("lab-split", 100))
    (row,) = sheet.document["limits"]
    assert row["limit"] == "rate limiter", row
    assert row["why"] == (
        "the reads of this mix, 33,681 IOPS of 48,097 IOPS, are 100% of their own cap of 33,700"
        " IOPS (the Lab Split volume 100 GiB volume (read limit)): a rate limiter holds the"
        " reads"
    )


def test_a_fill_is_not_judged_against_the_promise(tmp_path: Path) -> None:
    """``--fill``'s write before the tests is not one the promise is checked on: a fill
    far below the promise does not fail the check (the control: the same row named as
    a test of the plan does)."""
    labels = {"product": "aws-io1", "size_gib": "200"}
    with _stored(tmp_path, "quick/round-000.json", labels) as store:
        run = store.get_run("latest")
    request = CheckRequest(None, None, provisioned={"provisioned_iops": 2000})
    slow = next(r for r in run.results if r.direction == "write")
    slow = dataclasses.replace(slow, iops=10.0, bw_bytes_per_s=10 * 4096.0)
    for name, failed in (("fill", False), ("randwrite-slow", True)):
        row = dataclasses.replace(slow, test=name)
        sheet = check_sheet(dataclasses.replace(run, results=(row, *run.results)), CAT, request)
        assert (name in {r["test"] for r in sheet.rows}) is failed
        assert sheet.document["passed"] is not failed
