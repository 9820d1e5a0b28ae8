"""The validity checks on made-up tests, each with its control (the same test without the
fault: no mark): a cache answered, another process used the device, fio short of CPU
(analysis/validity_cache.py, validity_shared.py, validity_starved.py)."""

from __future__ import annotations

import pytest

from validity_facts import MiB, count, facts_of
from volbench.analysis import validity_cache, validity_shared, validity_starved
from volbench.analysis.limit_evidence import Context, Limit
from volbench.analysis.limit_verdict import verdict
from volbench.analysis.validity import MarkKind
from volbench.analysis.validity_facts import FrontCache, Known
from volbench.model import HostSample

GB = 1e9


def test_buffered_reads_are_a_caches_and_direct_ones_are_not() -> None:
    buffered = validity_cache.check(facts_of(direct=False))
    (mark,) = buffered.marks
    assert mark.kind is MarkKind.CACHE
    assert mark.problem.startswith("buffered I/O")
    assert "64 MiB, fits in the host's 24 GiB of memory" in mark.evidence[-1]
    assert mark.figures["working_set_bytes"] == 64 * MiB
    assert "direct" in mark.advice
    assert validity_cache.check(facts_of(direct=True)).marks == ()  # the control


def test_a_buffered_write_says_where_its_writes_went() -> None:
    (mark,) = validity_cache.check(facts_of("randwrite", direct=False)).marks
    assert mark.evidence[0].startswith("fio's writes were buffered")


def test_the_device_reading_far_less_than_fio_is_a_cache() -> None:
    fewer = facts_of(device=count(fio_read=4 * GB, device_read=0.1 * GB))
    (mark,) = validity_cache.check(fewer).marks
    assert mark.kind is MarkKind.CACHE
    assert mark.figures["device_share"] == pytest.approx(0.025)
    assert "the device read 100 MB while fio read 4,000 MB (2.5%)" in mark.evidence[0]
    same = facts_of(device=count(fio_read=4 * GB, device_read=3.9 * GB))  # the control
    assert validity_cache.check(same).marks == ()
    # readahead: the device read more than fio asked, no cache answered
    assert validity_cache.check(facts_of(device=count(4 * GB, 0, 9 * GB))).marks == ()
    # too little read over the seconds compared to tell
    assert validity_cache.check(facts_of(device=count(0.5 * MiB, 0, 0.0))).marks == ()


def test_without_the_devices_bytes_completions_count_for_random_io_only() -> None:
    old = count(fio_read=4 * GB, device_read=None, device_ios=1000.0)
    (mark,) = validity_cache.check(facts_of(device=old)).marks
    assert "the device completed 1,000 I/Os while fio completed 976,562" in mark.evidence[0]
    sequential = validity_cache.check(facts_of("read", device=old))
    assert sequential.marks == ()
    assert "sequential requests merge" in sequential.unchecked[0]


def test_a_test_without_device_samples_says_so() -> None:
    found = validity_cache.check(facts_of(device_note="no device samples: an imported output"))
    assert found.marks == ()
    assert found.unchecked == ("the device's reads: no device samples: an imported output",)


def test_reads_faster_than_the_medium_can_give() -> None:
    known = Known(500_000.0, "half the least latency Acme states")
    fast = facts_of(known=known)  # 200 µs mean read latency
    (mark,) = validity_cache.check(fast).marks
    assert mark.problem.startswith("reads faster than the medium")
    assert "200 µs is under the 500 µs the medium can give (half the least" in mark.evidence[0]
    assert validity_cache.check(facts_of(known=Known(100_000.0))).marks == ()


def test_a_working_set_inside_a_recorded_host_cache() -> None:
    cache = FrontCache(
        "QEMU's cache=writeback on the disk: the host's page cache", "writeback", 4 << 30
    )
    (mark,) = validity_cache.check(facts_of(front_cache=cache)).marks
    assert mark.problem == "the working set fits in a cache in front of the volume"
    assert "64 MiB, fits in its 4.0 GiB" in mark.evidence[0]
    larger = facts_of(front_cache=cache, size_bytes=8 << 30)
    assert validity_cache.check(larger).marks == ()
    direct = FrontCache("QEMU's cache=none", "none", 4 << 30)  # O_DIRECT on the host
    assert validity_cache.check(facts_of(front_cache=direct)).marks == ()


def test_the_device_moving_more_than_fio_is_another_process() -> None:
    shared = facts_of(device=count(fio_read=0.47 * GB, device_read=1.40 * GB))
    (mark,) = validity_shared.check(shared).marks
    assert mark.kind is MarkKind.SHARED
    assert mark.figures["extra_bytes"] == pytest.approx(0.93 * GB)
    assert "the device read 1,400 MB and wrote 0.0 MB while fio read 470 MB" in mark.evidence[0]
    alone = facts_of(device=count(fio_read=0.47 * GB, device_read=0.47 * GB))
    assert validity_shared.check(alone).marks == ()  # the control


def test_a_filesystems_own_writes_are_no_other_process() -> None:
    # 20 KB/s of journal beside a slow test: over the share, under the floor
    slow = count(fio_read=8 * 400e3, device_read=8 * 400e3, device_write=8 * 20e3)
    assert validity_shared.check(facts_of(device=slow)).marks == ()
    # 1 MB/s of another process's writes beside the same test: marked
    other = count(fio_read=8 * 400e3, device_read=8 * 400e3, device_write=8 * 1e6)
    assert validity_shared.check(facts_of(device=other)).marks != ()


def test_buffered_io_is_not_checked_for_another_process() -> None:
    readahead = facts_of(direct=False, device=count(1 * GB, 0, 3 * GB))
    assert validity_shared.check(readahead) == validity_shared.check(facts_of(direct=False))
    assert validity_shared.check(readahead).marks == ()


def test_completions_beside_large_requests_are_not_compared() -> None:
    split = count(fio_read=GB, device_read=None, device_ios=GB / 131072 * 8, block=1 << 20)
    found = validity_shared.check(facts_of("read", device=split, bs_bytes=1 << 20))
    assert found.marks == () and "may be split" in found.unchecked[0]
    small = count(fio_read=GB, device_read=None, device_ios=GB / 4096 * 2)
    (mark,) = validity_shared.check(facts_of(device=small)).marks
    assert mark.figures["extra_ios"] == pytest.approx(GB / 4096)


def _busy(wait_threads: float, cores: float = 0.4, busy: float = 97.0) -> list[HostSample]:
    return [
        HostSample(float(t), (busy, busy), fio_cpu_cores=cores, fio_wait_threads=wait_threads)
        for t in range(10)
    ]


def test_starved_is_the_limit_verdicts_host_cpu() -> None:
    cases = [
        facts_of(job_cpu=(97.0,)),  # one job near all of a core
        facts_of(job_cpu=(9.0,), cpu_quota_cores=0.1, throttled_pct=99.0),  # quota
        facts_of(host=_busy(0.8)),  # every CPU busy, fio waited 2/3 of its runnable time
    ]
    for case in cases:
        (mark,) = validity_starved.check(case).marks
        assert mark.kind is MarkKind.STARVED
        context = Context(
            host=case.host,
            cpu_quota_cores=case.cpu_quota_cores,
            throttled_pct=case.throttled_pct,
        )
        limit = verdict(case.measured, context)
        assert limit.limit is Limit.HOST_CPU
        assert limit.evidence[: len(mark.evidence)] == mark.evidence  # the same sentences
    (quota,) = validity_starved.check(cases[1]).marks
    assert quota.figures == {"quota_cores": 0.1, "throttled_pct": 99.0}


def test_a_busy_host_whose_fio_got_a_cpu_is_not_starved() -> None:
    assert validity_starved.check(facts_of(host=_busy(0.05))).marks == ()  # fio barely waited
    assert validity_starved.check(facts_of(host=_busy(0.8, cores=0.1))).marks != ()
    assert validity_starved.check(facts_of(host=_busy(0.8, busy=50.0))).marks == ()
    unsampled = validity_starved.check(facts_of())
    assert unsampled.marks == () and "not sampled" in unsampled.unchecked[0]


def test_every_cpu_busy_without_fios_own_figures_is_not_a_mark() -> None:
    # the limit verdict's sign where fio's processes were not sampled: not fio's shortage
    busy = [HostSample(float(t), (99.0, 99.0)) for t in range(10)]
    found = validity_starved.check(facts_of(host=busy))
    assert found.marks == ()
    assert found.unchecked == (
        "the host's CPU: all CPUs were 99% busy on average, but fio's processes were not"
        " sampled (whether fio waited for a CPU)",
    )
    case = facts_of(host=busy)
    held = verdict(case.measured, Context(host=case.host))
    assert held.limit is Limit.HOST_CPU  # the limit verdict still names it
