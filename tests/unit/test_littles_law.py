"""Little's law: in flight = IOPS x mean latency, against iodepth x numjobs."""

from __future__ import annotations

import pytest

from volbench.analysis.littles_law import TOLERANCE, check, implied_outstanding

MS = 1_000_000  # ns


def test_seed_001_throttled_disk_holds_the_law() -> None:
    # the UCloud RSSD post: 32 jobs x QD 64 at about 104,000 IOPS and 19.66 ms mean latency
    result = check([(104_000, 19.66 * MS)], configured=32 * 64)
    assert result.implied == pytest.approx(2044.64)
    assert result.ratio == pytest.approx(2044.64 / 2048)
    assert not result.flagged
    assert result.verdict == "ok"


def test_host_bound_queue_is_flagged() -> None:
    # QD 32 asked for, but 10,000 IOPS at 1 ms means only 10 I/Os were in flight
    result = check([(10_000, 1 * MS)], configured=32)
    assert result.implied == pytest.approx(10.0)
    assert result.ratio == pytest.approx(10 / 32)
    assert result.flagged
    assert result.verdict == "host-bound: queue not kept full"


def test_more_in_flight_than_configured_is_flagged() -> None:
    result = check([(50_000, 1 * MS)], configured=32)
    assert result.flagged
    assert result.verdict == "more in flight than configured"


def test_directions_add_up() -> None:
    read, write = (70_000, 0.5 * MS), (30_000, 1 * MS)  # 35 + 30 in flight
    assert implied_outstanding([read, write]) == pytest.approx(65.0)
    assert implied_outstanding([]) == 0.0
    assert check([read, write], configured=64).verdict == "ok"
    assert check([read], configured=64).flagged  # one direction alone is not the queue
    assert check([write], configured=64).flagged


def test_exactly_20_percent_off_is_not_flagged() -> None:
    assert TOLERANCE == 0.20
    # configured 10: 8 and 12 in flight are exactly 20% off, 7.99 and 12.01 just beyond
    for iops, flagged in [(8_000, False), (12_000, False), (7_990, True), (12_010, True)]:
        result = check([(iops, 1 * MS)], configured=10)
        assert result.flagged is flagged, (iops, result.ratio)
