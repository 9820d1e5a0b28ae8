"""The disk limits of a lab guest: hand-set options and a catalogue product's
promise, as QEMU's throttle-group properties (docs/throttle.txt: a bucket of
burst x length, filled at burst - base per second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab.promise import LimitChoice, promised_limits
from volbench.lab.throttle import (
    Bucket,
    HandLimits,
    Limits,
    bucket,
    from_expectation,
    from_hand,
)
from volbench.specs import catalogue
from volbench.specs.expectation import expect

ISSUE_PRODUCT = """\
products:
  - id: lab-burst
    vendor: Our lab
    name: the issue's bursting volume
    size_unit: GiB
    capacity: {min: 1, max: 1000}
    count_unit_bytes: 262144
    rw_limits: combined
    editions:
      - from: 2024-01-01
        iops: {expr: "1000"}
        burst: {iops: 3000, bucket_credits: 30000}
"""
"""Issue 24's product: baseline 1,000, burst 3,000, a 30,000-I/O bucket, 256 KiB
unit, one budget (the catalogue says a 15 s burst)."""


def test_gp2_100_gib_is_the_catalogues_bucket() -> None:
    promise = expect(catalogue.load().find("aws-gp2"), 100)
    limits = from_expectation(promise)
    assert limits.iops_total == Bucket(300, 3000, 1800)
    assert limits.iops_total.credits == 5_400_000
    assert limits.iops_total.burst_seconds == pytest.approx(2000)
    assert promise.burst_seconds == pytest.approx(2000)
    assert limits.iops_size == 262144
    props = limits.properties()
    assert props["iops-total"] == 300
    assert props["iops-total-max"] == 3000
    assert props["iops-total-max-length"] == 1800
    assert props["bps-total"] == 75 * 2**20  # min(300 x 256 KiB, 250 MiB/s)
    assert props["bps-total-max"] == 128 * 2**20  # <= 170 GiB: bursts to 128 MiB/s
    assert "iops-read" not in props


def test_the_issues_product_bursts_15_s(tmp_path: Path) -> None:
    (tmp_path / "lab.yaml").write_text(ISSUE_PRODUCT)
    limits = promised_limits("lab-burst", 100 << 30, {}, (str(tmp_path / "lab.yaml"),))
    assert limits.iops_total == Bucket(1000, 3000, 10)
    assert limits.iops_total.credits == 30_000
    assert limits.iops_total.burst_seconds == pytest.approx(15.0)
    assert limits.iops_size == 262144
    assert "burst 3,000 for 15 s, 30,000 credits" in limits.text()


def test_a_choice_is_a_product_or_hand_limits(tmp_path: Path) -> None:
    assert LimitChoice(HandLimits(iops_total=500)).limits(1 << 30) == Limits(Bucket(500))
    gp2 = LimitChoice(product="aws-gp2").limits(100 << 30)
    assert gp2.iops_total == Bucket(300, 3000, 1800)
    small = LimitChoice(product="aws-gp2").limits(10 << 30)
    assert small.iops_total == Bucket(100, 3000, 1800)  # min 100 IOPS; 5.4 M credits
    with pytest.raises(UsageError, match="not both"):
        LimitChoice(HandLimits(iops_total=5), product="aws-gp2").limits(1 << 30)
    with pytest.raises(UsageError, match="provisioned-iops"):
        LimitChoice(product="aws-io1").limits(100 << 30)


def test_separate_budgets_set_read_and_write_buckets() -> None:
    promise = expect(catalogue.load().find("gcp-pd-standard"), 500)
    limits = from_expectation(promise)
    assert limits.iops_total is None and limits.bps_total is None
    assert limits.iops_read is not None and limits.iops_write is not None
    assert limits.iops_read.rate == round(promise.read_iops or 0)
    assert limits.iops_write.rate == round(promise.write_iops or 0)


def test_provisioned_product_without_burst() -> None:
    found = catalogue.load().find("aws-io1")
    limits = from_expectation(expect(found, 100, None, {"provisioned_iops": 5000}))
    assert limits.iops_total == Bucket(5000)
    assert limits.properties()["iops-total"] == 5000
    assert "iops-total-max" not in limits.properties()


def test_hand_limits() -> None:
    limits = from_hand(HandLimits(iops_total=1000, burst_iops=3000, burst_credits=30000))
    assert limits.properties() == {
        "iops-total": 1000,
        "iops-total-max": 3000,
        "iops-total-max-length": 10,
    }
    split = from_hand(HandLimits(iops_read=1000, iops_write=500, mbps=100, io_unit=4096))
    assert split.properties() == {
        "iops-read": 1000,
        "iops-write": 500,
        "bps-total": 100_000_000,
        "iops-size": 4096,
    }
    assert from_hand(HandLimits()).properties() == {}
    assert from_hand(HandLimits()).text() == "unlimited"


def test_a_burst_of_mbps_is_each_mbps_caps_bucket() -> None:
    """``--burst-mbps`` and ``--burst-mb`` burst every MB/s cap given (QEMU's
    ``bps-*-max`` and ``-max-length``: 240 MB at 60 MB/s is 4 s), not the IOPS caps."""
    shared = from_hand(HandLimits(iops_total=900, mbps=20, burst_mbps=60, burst_mb=240))
    assert shared.properties() == {
        "iops-total": 900,
        "bps-total": 20_000_000,
        "bps-total-max": 60_000_000,
        "bps-total-max-length": 4,
    }
    assert "burst 60.0 for 6 s, 240.0 MB" in shared.text()
    split = from_hand(HandLimits(mbps_read=20, mbps_write=10, burst_mbps=60, burst_mb=240))
    assert split.properties()["bps-read-max"] == split.properties()["bps-write-max"] == 60_000_000
    assert split.properties()["bps-write-max-length"] == 4
    from volbench.lab import io_max

    with pytest.raises(UsageError, match="without a burst"):  # cgroup v2 has no burst
        io_max.check(from_hand(HandLimits(mbps_read=20, burst_mbps=60, burst_mb=240)))


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (HandLimits(iops_total=10, iops_read=5), "not both"),
        (HandLimits(mbps=10, mbps_write=5), "not both"),
        (HandLimits(iops_total=10, burst_iops=50), "go together"),
        (HandLimits(burst_iops=50, burst_credits=100), "needs a baseline"),
        (HandLimits(iops_total=100, burst_iops=50, burst_credits=100), "must be above"),
        (HandLimits(mbps=10, burst_mbps=50), "go together"),
        (HandLimits(iops_total=10, burst_mbps=50, burst_mb=100), "needs a baseline"),
        (HandLimits(mbps=100, burst_mbps=50, burst_mb=100), "must be above"),
    ],
)
def test_hand_limits_refused(given: HandLimits, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        from_hand(given)


def test_bucket_rounds_to_whole_seconds() -> None:
    assert bucket(300.4) == Bucket(300)
    assert bucket(1000, 3000, 31_000) == Bucket(1000, 3000, 10)  # 10.33 s -> 10
    assert bucket(1000, 3000, 100) == Bucket(1000, 3000, 1)  # at least 1 s
    assert bucket(1000, 900, 100) == Bucket(1000)  # a "burst" below the base is none
    assert Limits(iops_total=Bucket(1000)).text() == "iops-total 1,000"


def test_io_max_holds_each_directions_figures_and_qemu_none() -> None:
    """``--io-max``: the guest kernel's io.max line for each direction (``max`` where no
    limit), QEMU's throttle group given nothing."""
    from volbench.lab import io_max

    limits = from_hand(HandLimits(iops_read=800, iops_write=400, mbps_read=8, io_max=True))
    assert limits.in_guest and limits.qemu() == Limits()
    assert limits.qemu().every_property()["iops-read"] == 0
    assert io_max.line(limits) == "riops=800 wiops=400 rbps=8000000 wbps=max"
    assert limits.text().endswith("by the guest kernel's io.max")
    script = io_max.script(limits)
    assert "\n" not in script and "> /sys/fs/cgroup/volbench-io/io.max" in script
    assert "riops=max wiops=max rbps=max wbps=max" in io_max.script(None)


@pytest.mark.parametrize(
    "given",
    [
        HandLimits(iops_total=100, io_max=True),
        HandLimits(mbps=10, io_max=True),
        HandLimits(iops_read=100, burst_iops=500, burst_credits=1000, io_max=True),
        HandLimits(iops_read=100, io_unit=4096, io_max=True),
    ],
)
def test_io_max_refuses_what_cgroup_v2_has_not(given: HandLimits) -> None:
    with pytest.raises(UsageError, match=r"io\.max"):
        LimitChoice(given).limits(1 << 30)
