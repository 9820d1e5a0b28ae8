"""Knee, saturation sentence and latency target on hand-made and the UCloud RSSD post points."""

from __future__ import annotations

import pytest

from volbench.analysis.scaling import (
    ScalingPoint,
    best_under_latency,
    knee,
    peak,
    saturation_sentence,
)
from volbench.cli.options import parse_count_list
from volbench.cli.sweep import parse_latency_target
from volbench.errors import UsageError


def point(qd: int, jobs: int, iops: float, mean_ms: float, p99_ms: float = 0.0) -> ScalingPoint:
    return ScalingPoint(qd, jobs, iops, iops * 4096, mean_ms * 1e6, (p99_ms or mean_ms) * 1e6)


def test_seed_001_saturation_comes_out_as_one_sentence() -> None:
    # the UCloud RSSD post: 32-core host, rssd 2040 GB, randread 4k QD64: 1 job vs 32 jobs
    points = [point(64, 1, 104_000, 0.61530), point(64, 32, 104_000, 19.68328)]
    assert saturation_sentence(points) == (
        "Raising outstanding I/O from 64 (QD64x1) to 2048 (QD64x32) raised mean latency "
        "from 0.62 ms to 19.68 ms at the same ~104.0k IOPS: the volume is saturated there, "
        "extra queue only waits."
    )


def test_flat_from_qd_1_on_is_a_limiters_pacing() -> None:
    """A lab guest at iops-total 1,000 (QEMU's throttling), randread 4 KiB QD 1, 4, 16:
    the same IOPS from one I/O in flight on is a limiter pacing it, not saturation."""
    points = [point(1, 1, 1000, 0.9887), point(4, 1, 1000, 3.99), point(16, 1, 998, 16.0)]
    assert saturation_sentence(points) == (
        "Raising outstanding I/O from 1 (QD1x1) to 16 (QD16x1) raised mean latency from "
        "0.99 ms to 16.00 ms at the same ~1.0k IOPS: flat from 1 I/O in flight on, a rate "
        "limiter paces the I/O (a device that serves several I/Os at once gains from more "
        "queue), extra queue only waits."
    )


def test_no_sentence_while_iops_still_grows_or_latency_barely_moves() -> None:
    assert saturation_sentence([point(1, 1, 10_000, 0.1), point(8, 1, 60_000, 0.13)]) is None
    assert saturation_sentence([point(1, 1, 10_000, 0.1), point(2, 1, 10_100, 0.15)]) is None
    assert saturation_sentence([point(1, 1, 10_000, 0.1)]) is None


def test_knee_is_the_smallest_outstanding_reaching_95_percent_of_the_peak() -> None:
    points = [
        point(1, 1, 20_000, 0.05),
        point(4, 1, 60_000, 0.07),
        point(8, 1, 95_500, 0.08),
        point(16, 1, 100_000, 0.16),
        point(4, 2, 94_000, 0.09),
    ]
    assert peak(points).label == "QD16x1"
    assert knee(points).label == "QD8x1"  # 95.5% of the peak at 8 outstanding
    # at 90% QD4x2 qualifies too, with the same 8 outstanding: the higher IOPS wins
    assert knee(points, fraction=0.9).label == "QD8x1"
    assert knee(points, fraction=0.5).label == "QD4x1"
    with pytest.raises(ValueError):
        knee([])


def test_best_under_latency_uses_mean_or_p99() -> None:
    points = [
        point(1, 1, 10_000, 0.1, 0.3),
        point(4, 1, 30_000, 0.13, 0.9),
        point(16, 1, 50_000, 0.3, 2.0),
    ]
    assert best_under_latency(points, 0.5e6).label == "QD16x1"
    assert best_under_latency(points, 1e6, "p99").label == "QD4x1"
    assert best_under_latency(points, 0.05e6) is None


def test_int_lists_and_latency_targets() -> None:
    assert parse_count_list("1-64", 64) == (1, 2, 4, 8, 16, 32, 64)
    assert parse_count_list("1,3, 5", 64) == (1, 3, 5)
    assert parse_count_list("2-12", 64) == (2, 4, 8)
    assert parse_count_list("1..3,8", 64) == (1, 2, 3, 8)
    for bad in ("", "a", "4-2", "0-8", "1,,2", "1-65", "1.5", "1..2..3", "-1"):
        with pytest.raises(UsageError):
            parse_count_list(bad, 64)
    assert parse_latency_target("1ms") == (1e6, "mean")
    assert parse_latency_target("500us:p99") == (5e5, "p99")
    for bad in ("1", "0ms", "1ms:p50", "fast"):
        with pytest.raises(UsageError):
            parse_latency_target(bad)
