"""Merge fio job results into test results: sums for rates, pooled moments for latency,
and percentiles recomputed from merged json+ bins (never averaged).

All functions are pure and take the model's dataclasses.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from volbench.analysis.percentiles import (
    REPORTED_PERCENTILES,
    merge_bins,
    percentiles_from_bins,
)
from volbench.fio.job_text import opened_file
from volbench.model import DirectionResult, FioOutput, JobResult, LatencyStats, TestResult


def merge_latency(
    stats: Sequence[LatencyStats], ios: Sequence[float] | None = None
) -> LatencyStats | None:
    """Latency of several jobs' I/Os taken together; ``None`` for no input.

    ``ios`` gives each input's I/O count (:func:`io_weights`, in the order of ``stats``),
    used where fio printed no sample count.

    * min = min of mins, max = max of maxes, samples N = sum of N.
    * mean = weighted by each job's I/Os: sum(n_i x m_i) / sum(n_i), n_i fio's sample
      count ``N`` where every input has one (fio >= 3.18 prints it, json+ bins count the
      same), else ``ios``. fio weighs the same way when it sums jobs (stat.c
      ``sum_stat``: ``(m_src x n_src + m_dst x n_dst) / (n_src + n_dst)``).
    * stddev: pooled sample standard deviation by the parallel-variance formula of
      Chan, Golub & LeVeque ("Updating formulae and a pairwise algorithm for computing
      sample variances", 1979), generalised to k groups:
      M2 = sum((n_i - 1) s_i^2 + n_i (m_i - mean)^2), s = sqrt(M2 / (N - 1)).
      fio's own stddev is the sample one, sqrt(S / (n - 1)) (fio stat.c ``calc_lat``),
      so the result is what fio would print for the union of the samples. Without
      sample counts, its large-n form weighted by ``ios``:
      sqrt(sum(w_i (s_i^2 + (m_i - mean)^2)) / sum(w_i)).
    * bins are summed; percentiles are recomputed from the merged bins (fio's
      algorithm, :mod:`volbench.analysis.percentiles`) for every percentile any input
      listed plus :data:`REPORTED_PERCENTILES`. If any input has no bins the
      percentiles cannot be merged and are left empty (as are the bins).
    * N is reported as 0 (unknown) when an input's is.

    A single input is returned unchanged. Raises ``ValueError`` when the inputs mix
    latency kinds (``lat`` with ``clat``): they measure different intervals; and when
    an input's sample count is unknown and ``ios`` does not give each one's I/Os.
    """
    if not stats:
        return None
    kinds = {s.kind for s in stats}
    if len(kinds) > 1:
        raise ValueError(f"cannot merge different latency kinds: {sorted(kinds)}")
    if len(stats) == 1:
        return stats[0]
    known = all(s.samples > 0 for s in stats)
    if known:
        weights = [float(s.samples) for s in stats]
    elif ios is None or len(ios) != len(stats) or not all(w > 0 for w in ios):
        raise ValueError("latency without sample counts: each job's I/O count is needed")
    else:
        weights = [float(w) for w in ios]
    total_weight = sum(weights)
    mean = sum(w * s.mean_ns for w, s in zip(weights, stats, strict=True)) / total_weight
    stddev = _pooled_stddev(stats, weights, mean, known)
    bins: dict[int, int] = {}
    percentiles: dict[float, float] = {}
    if all(s.bins for s in stats):
        bins = merge_bins(*(s.bins for s in stats))
        wanted = set(REPORTED_PERCENTILES).union(*(s.percentiles_ns for s in stats))
        percentiles = percentiles_from_bins(bins, wanted)
    return LatencyStats(
        kind=stats[0].kind,
        min_ns=min(s.min_ns for s in stats),
        max_ns=max(s.max_ns for s in stats),
        mean_ns=mean,
        stddev_ns=stddev,
        samples=sum(s.samples for s in stats) if known else 0,
        percentiles_ns=percentiles,
        bins=bins,
    )


def _pooled_stddev(
    stats: Sequence[LatencyStats], weights: Sequence[float], mean: float, known: bool
) -> float:
    """Chan et al. parallel variance (see :func:`merge_latency`); with unknown sample
    counts, the large-n form sqrt(sum(w_i (s_i^2 + (m_i - mean)^2)) / sum(w_i))."""
    pairs = list(zip(weights, stats, strict=True))
    total = sum(weights)
    if known:
        m2 = sum((w - 1.0) * s.stddev_ns**2 + w * (s.mean_ns - mean) ** 2 for w, s in pairs)
        return math.sqrt(m2 / (total - 1.0)) if total > 1.0 else 0.0
    spread = sum(w * (s.stddev_ns**2 + (s.mean_ns - mean) ** 2) for w, s in pairs)
    return math.sqrt(spread / total)


def io_weights(results: Sequence[DirectionResult]) -> list[float]:
    """Each job's I/Os in one direction, to weigh its means by (in the order given):
    fio's ``total_ios`` where every job has it (fio >= 2.1.14), else its bytes.

    fio before 2.1.14 printed no I/O count (nor a sample count, nor, without job
    options, the block size): bytes are then in proportion to the I/Os when the jobs
    share a block size, as the entries of one test do (one job's clones, the same job on
    every host of a client/server run). Its IOPS would not do: fio 2.1 printed them as
    a whole number (``1000 x ios / runtime`` truncated), so IOPS x runtime misses up to
    one I/O per second of runtime. Jobs that moved no bytes and counted no I/O between
    them (no fio prints that) weigh the same.
    """
    if all(r.total_ios > 0 for r in results):
        return [float(r.total_ios) for r in results]
    if all(r.io_bytes > 0 for r in results):
        return [float(r.io_bytes) for r in results]
    return [1.0] * len(results)


def merge_directions(results: Sequence[DirectionResult]) -> DirectionResult:
    """One direction of several concurrent jobs: IOPS, bandwidth (B/s), bytes and I/O
    counts are summed; runtime (ms) is the longest; latency by :func:`merge_latency`
    over the jobs that have one, weighted by their I/Os (:func:`io_weights`); the mean
    total latency by :func:`merge_total_mean`; fio's IOPS window statistics kept for one
    job (several jobs' windows cannot be added up from their summaries).

    Raises ``ValueError`` for no input or inputs of different directions.
    """
    if not results:
        raise ValueError("merge_directions needs at least one DirectionResult")
    names = {r.direction for r in results}
    if len(names) > 1:
        raise ValueError(f"cannot merge different directions: {sorted(names)}")
    measured = [r for r in results if r.latency is not None]
    return DirectionResult(
        direction=results[0].direction,
        io_bytes=sum(r.io_bytes for r in results),
        runtime_ms=max(r.runtime_ms for r in results),
        iops=sum(r.iops for r in results),
        bw_bytes_per_s=sum(r.bw_bytes_per_s for r in results),
        total_ios=sum(r.total_ios for r in results),
        latency=merge_latency(
            [r.latency for r in measured if r.latency is not None], io_weights(measured)
        ),
        lat_mean_ns=merge_total_mean(results),
        iops_samples=results[0].iops_samples if len(results) == 1 else None,
    )


def merge_total_mean(results: Sequence[DirectionResult]) -> float | None:
    """Mean total latency (ns) of several jobs' I/Os taken together: weighted by each
    job's I/Os (:func:`io_weights`: sum(n_i x m_i) / sum(n_i), as
    :func:`merge_latency`). None when a job that did I/O gave none: a mean over some of
    the jobs is not the test's."""
    active = [r for r in results if r.active]
    if not active or any(r.lat_mean_ns is None for r in active):
        return None
    means = [float(r.lat_mean_ns or 0.0) for r in active]
    weights = io_weights(active)
    return sum(w * m for w, m in zip(weights, means, strict=True)) / sum(weights)


def merge_jobs(name: str, jobs: Sequence[JobResult]) -> TestResult:
    """Merge the fio entries of one test (clones of a job, or hosts of a client run).

    Directions are merged by :func:`merge_directions` (in the order fio lists them);
    CPU usr/sys (%) is the mean of the jobs' values (each job's share of one CPU);
    runtime (ms) is the longest; ``error`` is the first non-zero job error; the
    hostname is kept when all jobs share it. ``jobs`` counts fio entries merged.
    """
    if not jobs:
        raise ValueError("merge_jobs needs at least one JobResult")
    names: list[str] = []
    for job in jobs:
        names.extend(d for d in job.directions if d not in names)
    directions = {
        d: merge_directions([job.directions[d] for job in jobs if d in job.directions])
        for d in names
    }
    hostnames = {job.hostname for job in jobs}
    return TestResult(
        name=name,
        directions=directions,
        usr_cpu_pct=sum(job.usr_cpu_pct for job in jobs) / len(jobs),
        sys_cpu_pct=sum(job.sys_cpu_pct for job in jobs) / len(jobs),
        runtime_ms=max(job.runtime_ms for job in jobs),
        jobs=len(jobs),
        error=next((job.error for job in jobs if job.error), 0),
        hostname=hostnames.pop() if len(hostnames) == 1 else None,
    )


def group_tests(output: FioOutput) -> list[TestResult]:
    """Group ``output.jobs`` into tests by (groupid, jobname, hostname), in order of
    first appearance, and merge each group with :func:`merge_jobs`.

    fio prints one entry per clone when ``numjobs`` > 1 without ``group_reporting``
    (same jobname and groupid), and one entry per group with it; a stonewalled job
    starts a new groupid. fio's "All clients" aggregate (``output.all_clients``) is
    not included: it is fio's own sum over hosts and has no bins.
    """
    groups: dict[tuple[int, str, str | None], list[JobResult]] = {}
    for job in output.jobs:
        groups.setdefault((job.groupid, job.name, job.hostname), []).append(job)
    return [merge_jobs(key[1], members) for key, members in groups.items()]


def place_label(job: JobResult) -> str | None:
    """Where a job of a multi-target run ran, as :attr:`volbench.model.Place.label`:
    ``HOST:PATH`` (client/server), ``PATH`` (local), from fio's hostname and the
    file the job opened (:func:`~volbench.fio.job_text.opened_file`); None when the
    job names no file."""
    path = opened_file(job.options)
    if path is None:
        return job.hostname
    return f"{job.hostname}:{path}" if job.hostname else path


def place_tests(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
    """A multi-target run's tests: (aggregate, per place).

    Each test is one stonewall group repeated on every place (one section per
    target, on every host). The aggregate merges every job of a test over all
    places with :func:`merge_jobs`: IOPS and bandwidth summed, latency merged from
    the json+ bins (hostname None). Per-place tests merge the clones of one place
    and carry its label in ``hostname``.
    """
    tests: dict[tuple[int, str], list[JobResult]] = {}
    places: dict[tuple[int, str, str | None], list[JobResult]] = {}
    for job in output.jobs:
        tests.setdefault((job.groupid, job.name), []).append(job)
        places.setdefault((job.groupid, job.name, place_label(job)), []).append(job)
    aggregate = [
        dataclasses.replace(merge_jobs(name, jobs), hostname=None)
        for (_, name), jobs in tests.items()
    ]
    per_place = [
        dataclasses.replace(merge_jobs(name, jobs), hostname=label)
        for (_, name, label), jobs in places.items()
    ]
    return aggregate, per_place
