"""Aggregation tests: sums, pooled moments and percentiles from merged bins."""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections import Counter
from typing import Any

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.analysis.aggregate import (
    group_tests,
    merge_directions,
    merge_jobs,
    merge_latency,
)
from volbench.analysis.percentiles import REPORTED_PERCENTILES, percentiles_from_bins
from volbench.fio.parser import parse
from volbench.model import DirectionResult, FioOutput, IopsSamples, LatencyStats


def _parse(name: str) -> FioOutput:
    return parse((FIO_FIXTURES / name).read_text())


def _lat(kind: str = "clat", **kw: Any) -> LatencyStats:
    base: dict[str, Any] = {
        "min_ns": 1.0,
        "max_ns": 9.0,
        "mean_ns": 5.0,
        "stddev_ns": 1.0,
        "samples": 10,
    }
    base.update(kw)
    return LatencyStats(kind=kind, **base)


def test_four_clones_merge_into_one_test() -> None:
    name = "numjobs4_jsonplus.json"
    raw_reads = [j["read"] for j in raw_document(name)["jobs"]]
    [test] = group_tests(_parse(name))
    assert test.name == "clones"
    assert test.jobs == 4
    read = test.directions["read"]
    assert read.iops == pytest.approx(sum(r["iops"] for r in raw_reads), rel=1e-12)
    assert test.iops == read.iops
    assert read.io_bytes == sum(r["io_bytes"] for r in raw_reads)
    assert read.total_ios == sum(r["total_ios"] for r in raw_reads)
    assert read.bw_bytes_per_s == sum(r["bw_bytes"] for r in raw_reads)
    assert read.runtime_ms == max(r["runtime"] for r in raw_reads)
    lat = read.latency
    assert lat is not None
    raw_clat = [r["clat_ns"] for r in raw_reads]
    assert lat.kind == "clat"
    assert lat.samples == sum(c["N"] for c in raw_clat)
    assert lat.min_ns == min(c["min"] for c in raw_clat)
    assert lat.max_ns == max(c["max"] for c in raw_clat)
    assert lat.mean_ns == pytest.approx(
        sum(c["N"] * c["mean"] for c in raw_clat) / sum(c["N"] for c in raw_clat), rel=1e-12
    )
    summed: Counter[int] = Counter()
    for c in raw_clat:
        summed.update({int(k): v for k, v in c["bins"].items()})
    assert lat.bins == dict(summed)
    assert set(REPORTED_PERCENTILES) <= set(lat.percentiles_ns)
    assert lat.percentiles_ns == percentiles_from_bins(summed, lat.percentiles_ns)
    # one clone's histogram alone gives a different p99 than the merged one
    p99_each = {c["percentile"]["99.000000"] for c in raw_clat}
    assert lat.percentiles_ns[99.0] not in p99_each or len(p99_each) == 1
    cpu = [j["usr_cpu"] for j in raw_document(name)["jobs"]]
    assert test.usr_cpu_pct == pytest.approx(sum(cpu) / 4)


def test_stonewalled_jobs_are_separate_tests() -> None:
    name = "stonewall_jsonplus.json"
    raw_jobs = raw_document(name)["jobs"]
    tests = group_tests(_parse(name))
    assert [t.name for t in tests] == ["randwrite", "randread"]
    assert [t.jobs for t in tests] == [1, 1]
    assert tests[0].directions["write"].iops == raw_jobs[0]["write"]["iops"]
    assert tests[1].directions["read"].iops == raw_jobs[1]["read"]["iops"]
    # one job: fio's own percentiles and moments pass through unchanged
    lat = tests[1].directions["read"].latency
    assert lat is not None
    raw_clat = raw_jobs[1]["read"]["clat_ns"]
    assert lat.stddev_ns == raw_clat["stddev"]
    assert lat.percentiles_ns == {float(k): float(v) for k, v in raw_clat["percentile"].items()}


def test_client_hosts_group_separately_and_merge_to_all_clients() -> None:
    name = "client_server_jsonplus.txt"
    out = _parse(name)
    tests = group_tests(out)
    assert sorted((t.name, t.hostname, t.jobs) for t in tests) == [
        ("host1-randread", "127.0.0.2", 1),
        ("host2-randread", "127.0.0.3", 1),
    ]
    raw_agg = next(e for e in raw_document(name)["client_stats"] if e["jobname"] == "All clients")
    merged = merge_jobs("all hosts", out.jobs)
    assert merged.hostname is None
    read = merged.directions["read"]
    assert read.iops == pytest.approx(raw_agg["read"]["iops"], rel=1e-9)
    assert read.total_ios == raw_agg["read"]["total_ios"]
    assert read.io_bytes == raw_agg["read"]["io_bytes"]
    assert read.bw_bytes_per_s == raw_agg["read"]["bw_bytes"]
    # fio's aggregate pools clat the same way (stat.c sum_stat): moments agree
    lat = read.latency
    assert lat is not None and lat.kind == "clat"
    agg_clat = raw_agg["read"]["clat_ns"]
    assert lat.samples == agg_clat["N"]
    assert (lat.min_ns, lat.max_ns) == (agg_clat["min"], agg_clat["max"])
    assert lat.mean_ns == pytest.approx(agg_clat["mean"], rel=1e-9)
    assert lat.stddev_ns == pytest.approx(agg_clat["stddev"], rel=1e-9)
    # ... and percentiles come from the hosts' merged bins (fio's aggregate has none)
    assert "percentile" not in agg_clat
    assert sum(lat.bins.values()) == agg_clat["N"]
    assert set(REPORTED_PERCENTILES) <= set(lat.percentiles_ns)


def test_fio2_clones_without_sample_or_io_counts_weigh_by_bytes() -> None:
    """fio 2.1 printed neither N nor total_ios: the clones' bytes (one block size) weigh
    their means, as their I/O counts would."""
    name = "fio2_randread_4jobs.json"
    raw_reads = [j["read"] for j in raw_document(name)["jobs"]]
    [test] = group_tests(_parse(name))
    assert test.jobs == 4
    read = test.directions["read"]
    assert read.io_bytes == sum(r["io_bytes"] for r in raw_reads) * 1024
    assert read.total_ios == 0
    lat = read.latency
    assert lat is not None
    assert lat.samples == 0
    kib = [r["io_bytes"] for r in raw_reads]
    weighted = sum(r["clat"]["mean"] * n for r, n in zip(raw_reads, kib, strict=True)) / sum(kib)
    assert lat.mean_ns == pytest.approx(weighted * 1000, rel=1e-12)
    total = sum(r["lat"]["mean"] * n for r, n in zip(raw_reads, kib, strict=True)) / sum(kib)
    assert read.lat_mean_ns == pytest.approx(total * 1000, rel=1e-12)
    assert lat.max_ns == max(r["clat"]["max"] for r in raw_reads) * 1000
    assert lat.percentiles_ns == {}  # no bins: percentiles cannot be merged
    assert lat.bins == {}


def test_pooled_stddev_equals_stddev_of_all_samples() -> None:
    rng = random.Random(7)
    groups = [[rng.gauss(mu, sd) for _ in range(n)] for mu, sd, n in [(100, 5, 40), (130, 20, 7)]]
    groups.append([90.0, 91.0])
    stats = [
        _lat(
            min_ns=min(g),
            max_ns=max(g),
            mean_ns=statistics.fmean(g),
            stddev_ns=statistics.stdev(g),
            samples=len(g),
        )
        for g in groups
    ]
    merged = merge_latency(stats)
    everything = [x for g in groups for x in g]
    assert merged is not None
    assert merged.samples == len(everything)
    assert merged.mean_ns == pytest.approx(statistics.fmean(everything), rel=1e-12)
    assert merged.stddev_ns == pytest.approx(statistics.stdev(everything), rel=1e-12)
    assert merged.min_ns == min(everything) and merged.max_ns == max(everything)


def test_merge_latency_percentiles_only_from_bins() -> None:
    with_bins = _lat(bins={100: 9, 200: 1}, percentiles_ns={50.0: 100.0}, samples=10)
    with_bins2 = _lat(bins={200: 10}, percentiles_ns={50.0: 200.0}, samples=10)
    without = _lat(percentiles_ns={50.0: 150.0}, samples=10)
    merged = merge_latency([with_bins, with_bins2])
    assert merged is not None
    assert merged.bins == {100: 9, 200: 11}
    assert merged.percentiles_ns[50.0] == 200.0  # 9 of 20 < 50 %: not the average 150
    partial = merge_latency([with_bins, without])
    assert partial is not None
    assert partial.percentiles_ns == {} and partial.bins == {}


def test_merge_latency_edge_cases() -> None:
    assert merge_latency([]) is None
    one = _lat(percentiles_ns={99.0: 7.0})
    assert merge_latency([one]) is one
    with pytest.raises(ValueError, match="latency kinds"):
        merge_latency([_lat("lat"), _lat("clat")])
    single_samples = merge_latency([_lat(samples=1, stddev_ns=0.0)] * 2)
    assert single_samples is not None and single_samples.stddev_ns == 0.0
    with pytest.raises(ValueError, match="I/O count"):  # no N: the I/Os must be given
        merge_latency([_lat(samples=0), _lat(samples=0)])


def test_without_sample_counts_the_ios_weigh() -> None:
    """Two groups of 3 and 1 samples without N: their I/O counts weigh the mean and the
    (large-n) pooled spread; given sample counts take precedence over them."""
    a = _lat(samples=0, mean_ns=2.0, stddev_ns=1.0)
    b = _lat(samples=0, mean_ns=6.0, stddev_ns=0.0)
    merged = merge_latency([a, b], [3.0, 1.0])
    assert merged is not None and merged.samples == 0
    assert merged.mean_ns == 3.0  # (3 x 2 + 1 x 6) / 4, not (2 + 6) / 2
    assert merged.stddev_ns == pytest.approx(math.sqrt((3 * (1 + 1) + 1 * (0 + 9)) / 4))
    counted = merge_latency([_lat(samples=3, mean_ns=2.0), _lat(samples=1, mean_ns=6.0)], [1, 1])
    assert counted is not None and counted.mean_ns == 3.0 and counted.samples == 4


def _direction(name: str, iops: float, runtime_ms: float, lat: LatencyStats | None) -> Any:
    return DirectionResult(
        direction=name,
        io_bytes=int(iops * 4096),
        runtime_ms=runtime_ms,
        iops=iops,
        bw_bytes_per_s=iops * 4096,
        total_ios=int(iops),
        latency=lat,
    )


def test_merge_directions() -> None:
    merged = merge_directions(
        [_direction("read", 10.0, 1000.0, _lat()), _direction("read", 30.0, 1200.0, None)]
    )
    assert merged.iops == 40.0
    assert merged.io_bytes == 40 * 4096
    assert merged.total_ios == 40
    assert merged.runtime_ms == 1200.0
    assert merged.latency == _lat()
    with pytest.raises(ValueError):
        merge_directions([_direction("read", 1.0, 1.0, None), _direction("write", 1.0, 1.0, None)])
    with pytest.raises(ValueError):
        merge_directions([])


def test_fios_window_statistics_are_kept_for_one_job() -> None:
    """One job's ``iops_min/max/mean/stddev`` are the test's (a plan reads a burst off
    them); several jobs' windows cannot be added up from their summaries."""
    stats = IopsSamples(600.0, 3000.0, 1282.0, 1080.0, 88)
    one = dataclasses.replace(_direction("read", 1282.0, 44_000.0, None), iops_samples=stats)
    assert merge_directions([one]).iops_samples == stats
    assert merge_directions([one, one]).iops_samples is None


def test_merge_jobs_requires_jobs() -> None:
    with pytest.raises(ValueError):
        merge_jobs("empty", [])
    assert math.isfinite(group_tests(_parse("randread_json.json"))[0].iops)
