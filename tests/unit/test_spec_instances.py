"""Instance-side limits: the table's figures, ``check --instance`` and bad names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.analysis.promise import Measured, rate_verdict
from volbench.errors import UsageError
from volbench.plans.imported.importing import import_file
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.specs import catalogue
from volbench.specs.expectation import expect, instance_caps
from volbench.specs.instances import InstanceLimit, find_limit
from volbench.store.repository import Store

CAT = catalogue.load()


def _limit(name: str, product: str) -> InstanceLimit:
    found = CAT.find(product)
    return find_limit(CAT.instances, name, found.id, found.vendor)


def _measured(bs: int, read: float, write: float, rw: str) -> Measured:
    return Measured("t", rw, bs, 32, read, write, read * bs, write * bs, None, None)


def test_aws_ebs_optimized_figures_from_a6() -> None:
    m5 = _limit("m5.large", "gp3")
    assert (m5.iops, m5.iops_baseline, m5.throughput, m5.throughput_baseline) == (
        18750,
        3600,
        593.75,
        81.25,
    )
    assert (m5.burst_minutes, m5.iops_io_bytes, m5.throughput_io_bytes) == (30, 16384, 131072)
    assert _limit("X2IDN.32xlarge", "io1").iops == 260000
    assert _limit("aws-non-nitro", "io1").iops == 32000
    assert _limit("aws-non-nitro", "aws-io2-block-express").throughput is None
    assert _limit("ucloud-64vcpu", "ucloud-rssd").iops == 1200000
    assert _limit("n2-64vcpu", "pd-balanced").iops == 80000
    assert _limit("n1-64vcpu", "pd-balanced").iops == 100000


def test_unknown_instance_types_suggest_close_names() -> None:
    with pytest.raises(
        UsageError, match=r"unknown instance type 'm5\.larg': did you mean m5\.large"
    ):
        _limit("m5.larg", "gp3")
    with pytest.raises(UsageError, match="did you mean n2-64vcpu"):
        _limit("n2-64cpu", "pd-ssd")
    with pytest.raises(UsageError, match="no n2-8-15vcpu limit for gcp-pd-balanced"):
        _limit("n2-8-15vcpu", "pd-balanced")
    with pytest.raises(
        UsageError, match=r"no m5\.large limit for gcp-pd-ssd: it has limits for AWS"
    ):
        _limit("m5.large", "pd-ssd")


def test_burstable_instance_meets_above_its_baseline_within_its_maximum() -> None:
    e = expect(CAT.find("gp3"), 500, None, {"provisioned_iops": 16000})
    caps = instance_caps(_limit("m5.large", "gp3"))
    bursting = rate_verdict(_measured(4096, 16000, 0, "randread"), e, caps)
    assert bursting is not None
    assert (bursting.expected, bursting.verdict) == (3600, "meets")
    assert "instance cap 3,600 IOPS" in bursting.reason
    assert "instance bursting: m5.large" in bursting.reason and "30 min" in bursting.reason
    slow = rate_verdict(_measured(4096, 2000, 0, "randread"), e, caps)
    assert slow is not None and slow.verdict == "below"
    over = rate_verdict(_measured(4096, 19000, 0, "randread"), e, caps)
    assert over is not None and over.verdict == "above"  # the volume's 16,000 is the ceiling


def test_gcp_separate_read_and_write_caps_on_volume_and_instance() -> None:
    e = expect(CAT.find("pd-standard"), 20000)  # 15,000 read / 30,000 write IOPS
    caps = instance_caps(_limit("n2-16-31vcpu", "pd-standard"))  # 7,500 / 15,000
    read = rate_verdict(_measured(4096, 7400, 0, "randread"), e, caps)
    assert read is not None and (read.expected, read.verdict) == (7500, "meets")
    write = rate_verdict(_measured(4096, 0, 14000, "randwrite"), e, caps)
    assert write is not None and write.expected == 15000
    mixed = rate_verdict(_measured(4096, 7000, 7000, "randrw"), e, caps)
    assert mixed is not None and mixed.expected == 15000  # min(7,500 / 0.5, 15,000 / 0.5)
    alone = rate_verdict(_measured(4096, 7000, 7000, "randrw"), e)
    assert alone is not None and alone.expected == 30000  # min(15,000 / 0.5, 30,000 / 0.5)
    assert "separate read 15,000 / write 30,000 IOPS limits" in alone.reason


def test_volume_throughput_burst_meets_between_baseline_and_burst() -> None:
    e = expect(CAT.find("st1"), 1024)
    verdict = rate_verdict(_measured(1048576, 240, 0, "read"), e)
    assert verdict is not None and verdict.metric == "MB/s"
    assert verdict.expected == pytest.approx(40 * 1.048576)
    assert verdict.verdict == "meets"
    assert "volume bursting: up to 262.1 MB/s (baseline 41.9) for 4,993 s" in verdict.reason
    azure = expect(CAT.find("azure-premium-ssd"), 500)
    p20 = rate_verdict(_measured(8192, 3400, 0, "randread"), azure)
    assert p20 is not None and p20.verdict == "meets" and "for 1,800 s" in p20.reason


def test_check_sheet_with_instance_names_its_caps(tmp_path: Path) -> None:
    store = catalogue_store(tmp_path)
    with store:
        run = store.get_run("latest")
    request = CheckRequest("ucloud-rssd", 2040, instance="ucloud-4vcpu")
    sheet = check_sheet(run, CAT, request)
    jobs = {job["jobname"]: job for job in raw_document("quick/round-000.json")["jobs"]}
    rows = {(r["test"], r["metric"]): r for r in sheet.rows}
    # the 4-vCPU host's 75,000 IOPS / 300 MB/s: 300 MB/s binds first at 4 KiB (73,242 IOPS)
    row = rows["randread-4k-iops", "MB/s"]
    assert row["expected"] == 300 and row["verdict"] == "meets"
    assert "instance cap 75,000 IOPS (ucloud-4vcpu [V U1])" in row["reason"]
    assert "instance cap 300.0 MB/s" in row["reason"]
    assert row["measured"] == jobs["randread-4k-iops"]["read"]["bw_bytes"] / 1e6
    assert any(n.startswith("instance caps: ucloud-4vcpu (UHost with 4 vCPU") for n in sheet.notes)
    assert sheet.document["instance"] == "ucloud-4vcpu"
    both = CheckRequest("ucloud-rssd", 2040, instance_iops=1000, instance="ucloud-4vcpu")
    with pytest.raises(UsageError, match="not both"):
        check_sheet(run, CAT, both)
    with pytest.raises(UsageError, match="did you mean ucloud-4vcpu"):
        check_sheet(run, CAT, CheckRequest("ucloud-rssd", 2040, instance="ucloud-4cpu"))


def catalogue_store(tmp_path: Path) -> Store:
    store = Store.open(str(tmp_path / "results.db"))
    import_file(store, FIO_FIXTURES / "quick/round-000.json", {})
    return store


def test_a_run_longer_than_the_bucket_lasts_cannot_be_all_burst() -> None:
    """st1 at 1 TiB: 250 MiB/s for 4,993 s on a full bucket, then 40 MiB/s (A4)."""
    e = expect(CAT.find("st1"), 1024)
    short = dataclasses.replace(_measured(1048576, 240, 0, "read"), runtime_s=60)
    verdict = rate_verdict(short, e)
    assert verdict is not None and verdict.verdict == "meets"
    long = dataclasses.replace(short, runtime_s=10000)
    best = (40 + 210 * (1024 * 1024 / 210) / 10000) * 1.048576  # MB/s average
    verdict = rate_verdict(long, e)
    assert verdict is not None and verdict.verdict == "above"
    assert f"over fio's 10,000.0 s at most {best:,.1f} MB/s on average" in verdict.reason
    steady = dataclasses.replace(long, read_bw_bytes_per_s=best * 1e6)
    fits = rate_verdict(steady, e)
    assert fits is not None and fits.verdict == "meets"


def test_a_burstable_instance_holds_its_maximum_30_minutes() -> None:
    e = expect(CAT.find("gp3"), 500, None, {"provisioned_iops": 16000})
    caps = instance_caps(_limit("m5.large", "gp3"))
    hour = dataclasses.replace(_measured(4096, 16000, 0, "randread"), runtime_s=3600)
    verdict = rate_verdict(hour, e, caps)  # best average: 3,600 + (18,750 - 3,600) / 2
    assert verdict is not None and verdict.verdict == "above"
    assert "at most 11,175.0 IOPS on average" in verdict.reason
