"""Live samples from consecutive --status-interval documents (recorded stream).

Expected figures are computed here from the raw JSON: fio's documents are
cumulative, so an interval's figure is the difference of two documents.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from volbench.fio.live import LiveSample, LiveSampler

DIRECTIONS = ("read", "write", "trim")


def total(document: dict[str, Any], field: str) -> float:
    """``field`` of every direction of every job entry (clones included), added up."""
    return float(sum(job[d][field] for job in document["jobs"] for d in DIRECTIONS))


def lat_total(document: dict[str, Any]) -> tuple[float, int]:
    """(sum of mean x N, sum of N) of fio's total latency over all jobs and directions."""
    blocks = [job[d]["lat_ns"] for job in document["jobs"] for d in DIRECTIONS]
    return sum(b["mean"] * b["N"] for b in blocks), sum(b["N"] for b in blocks)


def samples(documents: list[dict[str, Any]]) -> list[LiveSample | None]:
    sampler = LiveSampler()
    return [sampler.sample(d) for d in documents]


def test_stream_has_two_clones_of_one_job(status_documents: list[dict[str, Any]]) -> None:
    for document in status_documents:
        assert [job["jobname"] for job in document["jobs"]] == ["status", "status"]


def test_first_document_gives_no_sample(status_documents: list[dict[str, Any]]) -> None:
    assert samples(status_documents)[0] is None


def test_iops_and_bandwidth_are_differences_over_time(
    status_documents: list[dict[str, Any]],
) -> None:
    found = samples(status_documents)
    for (before, after), sample in zip(pairwise(status_documents), found[1:], strict=True):
        assert sample is not None
        dt = (after["timestamp_ms"] - before["timestamp_ms"]) / 1000
        assert sample.job == "status"
        assert sample.interval_s == pytest.approx(dt)
        assert sample.iops == pytest.approx(
            (total(after, "total_ios") - total(before, "total_ios")) / dt
        )
        assert sample.bw_bytes_per_s == pytest.approx(
            (total(after, "io_bytes") - total(before, "io_bytes")) / dt
        )
        assert sample.iops > 0


def test_latency_is_the_mean_of_the_interval(status_documents: list[dict[str, Any]]) -> None:
    found = samples(status_documents)
    for (before, after), sample in zip(pairwise(status_documents), found[1:], strict=True):
        assert sample is not None
        (sum_after, n_after), (sum_before, n_before) = lat_total(after), lat_total(before)
        assert sample.lat_mean_ns == pytest.approx((sum_after - sum_before) / (n_after - n_before))


def test_the_same_document_twice_gives_no_sample(status_documents: list[dict[str, Any]]) -> None:
    sampler = LiveSampler()
    sampler.sample(status_documents[0])
    assert sampler.sample(status_documents[0]) is None
    assert sampler.sample(status_documents[1]) is not None


def doc(ms: int, **jobs: tuple[int, int, float]) -> dict[str, Any]:
    """A minimal status document: job name -> (read ios, lat N, lat mean ns)."""
    return {
        "timestamp_ms": ms,
        "jobs": [
            {
                "jobname": name,
                "read": {
                    "total_ios": ios,
                    "io_bytes": ios * 4096,
                    "lat_ns": {"N": n, "mean": mean},
                },
            }
            for name, (ios, n, mean) in jobs.items()
        ],
    }


def test_the_job_that_ran_in_the_interval_is_shown() -> None:
    # stonewalled jobs: "first" has finished, "second" runs now
    sampler = LiveSampler()
    sampler.sample(doc(1000, first=(5000, 5000, 100.0), second=(100, 100, 300.0)))
    sample = sampler.sample(doc(3000, first=(5000, 5000, 100.0), second=(2100, 2100, 200.0)))
    assert sample == LiveSample(
        job="second",
        iops=1000.0,
        bw_bytes_per_s=1000.0 * 4096,
        lat_mean_ns=(2100 * 200.0 - 100 * 300.0) / 2000,
        interval_s=2.0,
        io_bytes=2100 * 4096,  # since the job started: what a bar of bytes counts
    )


def test_no_progress_and_no_latency() -> None:
    sampler = LiveSampler()
    sampler.sample(doc(1000, only=(10, 0, 0.0)))
    assert sampler.sample(doc(2000, only=(10, 0, 0.0))) is None  # no new I/O
    sample = sampler.sample(doc(2500, only=(60, 0, 0.0)))  # I/O but no latency N
    assert sample is not None
    assert sample.iops == 100.0
    assert sample.lat_mean_ns is None
