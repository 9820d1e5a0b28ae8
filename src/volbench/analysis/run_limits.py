"""The limit verdict of every test of a run (analysis/limit_verdict.py), each with what
else the run knows of it: the same workload at other queue depths and job counts (its
neighbours), a buffered test's direct twin, the stalls of its round, and what was
sampled while it ran (analysis/host_series.py: host and device samples, the cgroup's
CPU quota and how often it throttled, block I/O caps, the drive's temperatures), the
burst of its per-second series, and for a mixed test the same workload's read-only and
write-only tests (the caps of each direction).

Pure: the caller gives each test's :class:`FactsOfTest`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis import scaling
from volbench.analysis.burst_series import Burst
from volbench.analysis.host_series import RoundHost
from volbench.analysis.limit_evidence import Context, KnownCap, MeasuredTest, Verdict
from volbench.analysis.limit_verdict import verdict
from volbench.analysis.limiter_signs import paced
from volbench.model import BUFFERED_PREFIX

Family = tuple[object, ...]
"""A workload apart from its queue depth and job count (rw, block sizes, mix, ...)."""


@dataclass(frozen=True)
class FactsOfTest:
    """One stored test: its round, fio's figures, its workload family, the writes and
    reads it did (for the caps that apply), the longest stall seen in it (s) and its
    round's host samples (None: not sampled), and the test that read the same region
    again, if any."""

    round: int
    measured: MeasuredTest
    family: Family
    reads: bool = True
    writes: bool = False
    stall_s: float = 0.0
    host: RoundHost | None = None
    read_again: str | None = None
    """The test that read the same region again (a first-touch run's second pass)."""
    burst: Burst | None = None
    """The burst of its per-second series (analysis/stored_bursts.py), if any."""
    alone: tuple[Family, Family] | None = None
    """A mixed test's workload reading alone and writing alone (the run's read-only and
    write-only tests of it are the caps each direction of the mix may meet)."""
    rate: tuple[float | None, float | None] = (None, None)
    """fio's own rate limit on the test (``rate_iops``, ``rate`` in bytes/s), if set."""


@dataclass(frozen=True)
class TestVerdict:
    facts: FactsOfTest
    verdict: Verdict
    context: Context


def recorded_caps(facts: FactsOfTest) -> tuple[KnownCap, ...]:
    """The block I/O caps of fio's cgroup on the target's device that bind ``facts``'
    direction (a test that both reads and writes meets two caps at once, each with the
    I/O of its own direction: :func:`direction_caps`)."""
    host = facts.host
    if host is None or facts.reads == facts.writes:
        return ()
    prefix = "cap_r" if facts.reads else "cap_w"
    iops = host.facts.get(prefix + "iops")
    bw = host.facts.get(prefix + "bps")
    if iops is None and bw is None:
        return ()
    what = "read" if facts.reads else "write"
    return (KnownCap(f"fio's cgroup ({what} limit on the device)", iops, bw),)


def own_rate(facts: FactsOfTest) -> tuple[KnownCap, ...]:
    """fio's own rate limit on the test (its job's ``rate_iops`` or ``rate``): the test
    asked to be held there (a rest between burst probes, a QoS tenant's planned rate)."""
    iops, bw = facts.rate
    if iops is None and bw is None:
        return ()
    return (KnownCap("fio's own rate option (rate_iops, rate)", iops, bw),)


def direction_caps(facts: FactsOfTest) -> tuple[KnownCap, ...]:
    """The read and the write IOPS caps of fio's cgroup, each for its own direction, of
    a test that both reads and writes."""
    host = facts.host
    found: list[KnownCap] = []
    if not (facts.reads and facts.writes):
        return ()
    for direction, key in (("read", "cap_riops"), ("write", "cap_wiops")):
        iops = host.facts.get(key) if host else None
        if iops is not None:
            label = f"fio's cgroup, {direction} limit on the device"
            found.append(KnownCap(label, iops, None, direction))
    return tuple(found)


def alone_caps(
    test: FactsOfTest, points: dict[Family, dict[tuple[int, int], MeasuredTest]]
) -> tuple[KnownCap, ...]:
    """For a mixed test: the IOPS of the same workload's read-only and write-only tests
    at the same iodepth x numjobs, as caps of that direction, where the mix did more in
    all than that direction alone (more than :data:`scaling.SAME_IOPS_TOLERANCE`): one
    direction of the mix at its figure alone while the other adds to it is held at a
    cap of its own, not by a budget both share."""
    measured = test.measured
    if test.alone is None or not measured.mixed:
        return ()
    found = []
    key = (measured.iodepth, measured.numjobs)
    for direction, family in zip(("read", "write"), test.alone, strict=True):
        alone = points.get(family, {}).get(key)
        if alone is None or alone.iops <= 0:
            continue
        if measured.iops > (1 + scaling.SAME_IOPS_TOLERANCE) * alone.iops:
            label = f"the {direction}-only test {alone.name}, {direction}s alone"
            found.append(KnownCap(label, alone.iops, None, direction))
    return tuple(found)


def _points(tests: Sequence[FactsOfTest]) -> dict[Family, dict[tuple[int, int], MeasuredTest]]:
    """Each family's tests by (iodepth, numjobs), in the order first seen; of repeated
    points, the latest. One pass: a 20,000-test run compares no pair of tests."""
    found: dict[Family, dict[tuple[int, int], MeasuredTest]] = {}
    for test in tests:
        key = (test.measured.iodepth, test.measured.numjobs)
        found.setdefault(test.family, {})[key] = test.measured
    return found


def _neighbours(
    test: FactsOfTest, points: dict[Family, dict[tuple[int, int], MeasuredTest]]
) -> tuple[MeasuredTest, ...]:
    """The same family at other iodepth x numjobs (``points``: :func:`_points`)."""
    own = (test.measured.iodepth, test.measured.numjobs)
    return tuple(m for key, m in points[test.family].items() if key != own)


def run_verdicts(
    tests: Sequence[FactsOfTest],
    caps: Sequence[KnownCap] = (),
    min_latency_ns: float | None = None,
) -> list[TestVerdict]:
    """Each test's verdict, in the order given; ``caps`` (a catalogue product's, an
    instance's) apply to every test, beside those recorded with its round."""
    by_name = {t.measured.name: t.measured for t in tests}
    bursts = {
        t.measured.name: t.burst.baseline
        for t in tests
        if t.burst and t.burst.unit == "IOPS" and t.burst.steady
    }
    points = _points(tests)
    found = []
    contexts: list[Context] = []
    for test in tests:
        name = test.measured.name
        twin = (
            by_name.get(name[len(BUFFERED_PREFIX) :]) if name.startswith(BUFFERED_PREFIX) else None
        )
        host = test.host
        around = _neighbours(test, points)
        context = Context(
            host=host.readings if host else (),
            neighbours=around,
            direct_twin=twin,
            temperatures=host.temperatures() if host else None,
            stall_s=test.stall_s,
            cpu_quota_cores=host.cpu_quota_cores if host else None,
            throttled_pct=host.throttled_pct if host else None,
            caps=(
                *own_rate(test),
                *recorded_caps(test),
                *direction_caps(test),
                *alone_caps(test, points),
                *caps,
            ),
            min_latency_ns=min_latency_ns,
            read_again=by_name.get(test.read_again) if test.read_again else None,
            burst=test.burst,
            after_bursts=tuple((n.name, bursts[n.name]) for n in around if n.name in bursts),
        )
        contexts.append(context)
    paced_at = _paced_sizes(tests, contexts)
    for test, context in zip(tests, contexts, strict=True):
        sizes = tuple(
            (other, rate)
            for other, rate in paced_at.get(_sized_key(test), ())
            if other.name != test.measured.name
        )
        context = dataclasses.replace(context, paced_sizes=sizes) if sizes else context
        found.append(TestVerdict(test, verdict(test.measured, context), context))
    return found


def _sized_key(test: FactsOfTest) -> tuple[object, ...]:
    """A test's workload and queue, its block size left out."""
    family = list(test.family)  # (rw, block size, ...): report/limit_sheets._family
    if len(family) > 1:
        family[1] = None
    return (*family, test.measured.iodepth, test.measured.numjobs)


def _paced_sizes(
    tests: Sequence[FactsOfTest], contexts: Sequence[Context]
) -> dict[tuple[object, ...], list[tuple[MeasuredTest, float]]]:
    """The tests a limiter was shown to pace (:func:`limiter_signs.paced`), with the
    rate (a burst's baseline after it), by workload and queue without the block size."""
    found: dict[tuple[object, ...], list[tuple[MeasuredTest, float]]] = {}
    for test, context in zip(tests, contexts, strict=True):
        if paced(test.measured, context):
            burst = test.burst
            rate = burst.baseline if burst and burst.steady else test.measured.iops
            found.setdefault(_sized_key(test), []).append((test.measured, rate))
    return found
