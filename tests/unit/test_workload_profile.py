"""Characterisation and the synthetic fit on traces whose answers are known."""

from __future__ import annotations

import random
import time
from array import array
from pathlib import Path

import pytest

from volbench.analysis.workload_fit import distance, fit, workload_record
from volbench.analysis.workload_profile import characterise, region_bytes, size_label
from volbench.trace.events import IoTrace

MiB = 1 << 20


def _trace(rows: list[tuple[int, int, int, int, str]], duration_ns: int) -> IoTrace:
    """rows: (issue ns, latency ns, offset, size, op)."""
    return IoTrace(
        array("q", [r[0] for r in rows]),
        array("q", [r[1] for r in rows]),
        array("q", [r[2] for r in rows]),
        array("q", [r[3] for r in rows]),
        "".join(r[4] for r in rows),
        duration_ns,
    )


def known_mix(count: int = 10_000, seed: int = 7) -> IoTrace:
    """70% random 4 KiB reads over 64 MiB, 30% sequential 64 KiB writes, QD 4 closed loop."""
    rng = random.Random(seed)
    rows = []
    write_at = 0
    for i in range(count):
        if rng.random() < 0.7:
            rows.append((i * 10_000, 40_000, rng.randrange(0, 64 * MiB // 4096) * 4096, 4096, "R"))
        else:
            rows.append((i * 10_000, 40_000, write_at, 65536, "W"))
            write_at = (write_at + 65536) % (64 * MiB)
    return _trace(rows, count * 10_000 + 40_000)


def test_known_mix() -> None:
    profile = characterise(known_mix())
    assert profile.read_pct == pytest.approx(70, abs=1.5)
    assert {(s.op, s.size_bytes) for s in profile.sizes} == {("read", 4096), ("write", 65536)}
    assert profile.sequential_by_op["write"] > 99.8  # the first write and each wrap start one
    assert profile.sequential_by_op["read"] < 0.5
    assert [p.label.rsplit(" ", 1)[0] for p in profile.patterns] == [
        "RND 4 KiB read",
        "SEQ 64 KiB write",
    ]
    assert profile.qd_percentile == 4  # each request lasts four issue intervals
    assert profile.qd_max == 4
    assert profile.busy_pct > 99
    assert profile.span_bytes == 64 * MiB
    assert profile.working_set_bytes == 64 * MiB  # the writes cover everything
    assert sum(a + b + c for a, b, c in profile.per_second) == profile.ios


def test_concentration_and_working_set() -> None:
    # 90% of the requests on the first 1 MiB of a 100 MiB span, the rest spread out
    rng = random.Random(1)
    rows = []
    for i in range(20_000):
        if rng.random() < 0.9:
            offset = rng.randrange(0, 256) * 4096
        else:
            offset = rng.randrange(0, 100 * 256) * 4096
        rows.append((i * 1000, 500, offset, 4096, "R"))
    profile = characterise(_trace(rows, 20_000_000))
    assert profile.hot_pct[5] > 85
    assert profile.working_set_bytes < profile.span_bytes
    found = fit(profile)
    assert found.zones[0][1] == 5 and found.zones[0][0] > 85
    assert sum(a for a, _ in found.zones) == 100 == sum(r for _, r in found.zones)


def test_overlapping_requests_count_once_in_the_working_set() -> None:
    rows = [(0, 10, 0, 8192, "R"), (10, 10, 4096, 8192, "W"), (20, 10, 1 * MiB, 4096, "R")]
    assert characterise(_trace(rows, 100)).working_set_bytes == 12288 + 4096


def test_interleaved_streams_stay_sequential() -> None:
    rows = []
    for i in range(100):  # two sequential readers taking turns
        stream = i % 2
        rows.append((i * 100, 50, stream * 10 * MiB + (i // 2) * 4096, 4096, "R"))
    assert characterise(_trace(rows, 10_000)).sequential_pct == pytest.approx(98)


def test_fit_reproduces_the_mix() -> None:
    profile = characterise(known_mix())
    found = fit(profile)
    assert found.rwmixread_pct == round(profile.read_pct)
    assert found.read_bssplit == ((4096, 100),)
    assert found.write_bssplit == ((65536, 100),)
    assert (found.read_random_pct, found.write_random_pct) == (100, 0)
    assert found.iodepth == 4
    assert found.match_pct > 99
    record = workload_record(profile, found)
    assert record["synthetic"]["random_distribution"].startswith("zoned:")
    assert record["pattern_shares"][0]["fitted_pct"] == pytest.approx(found.rwmixread_pct)


def test_fit_says_what_it_cannot_reproduce() -> None:
    # reads: 4 KiB random and 128 KiB sequential; a job draws size and randomness apart
    rows = []
    at = 0
    for i in range(1000):
        if i % 2:
            rows.append((i * 100, 50, (i * 7919 % 4096) * 4096 * 3, 4096, "R"))
        else:
            rows.append((i * 100, 50, at, 131072, "R"))
            at += 131072
    found = fit(characterise(_trace(rows, 100_000)))
    assert found.match_pct == pytest.approx(50, abs=2)


def test_distance_and_labels() -> None:
    assert distance({("RND", "read", 4096): 100.0}, {("SEQ", "read", 4096): 100.0}) == 100
    assert size_label(4096) == "4 KiB" and size_label(1 << 20) == "1 MiB"
    assert size_label(512) == "512 B"
    assert region_bytes(64 * MiB) == 16384


def test_empty_trace() -> None:
    profile = characterise(_trace([], 1_000_000_000))
    assert profile.ios == 0 and profile.patterns == ()
    assert sum(a for a, _ in fit(profile).zones) == 100
    assert fit(profile).match_pct == 0


def test_a_million_requests_characterise_in_seconds() -> None:
    """The figure in BENCHMARKS.md (bench/trace_profile.py) is this, timed."""
    trace = known_mix(200_000)
    began = time.process_time()
    characterise(trace)
    assert time.process_time() - began < 10  # 5x the time a million takes, for a fifth


def test_longest_pause() -> None:
    rows = [(0, 100, 0, 4096, "R"), (50, 100, 8192, 4096, "R"), (2_000_000_150, 100, 0, 4096, "W")]
    assert characterise(_trace(rows, 3_000_000_000)).longest_idle_s == pytest.approx(2.0)


def test_a_trace_longer_than_a_week_is_refused_before_its_rows_are_made() -> None:
    """Regression (issue 31): the per-second rows of a trace lasting 999,999,999 s took
    23.8 GB. However a trace comes (a stored one, a bundle's), its length is checked."""
    from volbench.errors import UsageError
    from volbench.trace.clock import MAX_SPAN_NS

    rows = [(0, 100, 0, 4096, "R")]
    assert len(characterise(_trace(rows, MAX_SPAN_NS)).per_second) == 604_800
    for duration_ns in (MAX_SPAN_NS + 1, 999_999_999 * 10**9, -1):
        with pytest.raises(UsageError, match=r"beyond the 604,800 s \(7 days\)"):
            characterise(_trace(rows, duration_ns))


def test_a_capture_longer_than_a_trace_may_span_is_refused_first(tmp_path: Path) -> None:
    from volbench.errors import UsageError
    from volbench.plans.capture import capture_device
    from volbench.store.repository import Store

    with Store.open(str(tmp_path / "v.db")) as store, pytest.raises(UsageError) as caught:
        capture_device(store, "/dev/no-such-disk", 8 * 86_400.0, "week", {}, tmp_path / "s")
    assert (
        str(caught.value)
        == "a capture lasts at most 604,800 s (7 days), not 691,200 s: capture in parts"
    )
    assert not (tmp_path / "s").exists()
