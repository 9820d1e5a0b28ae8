"""Limit rules: the tests that name what set a test's figure, one function a limit.

Each rule takes the test's figures and its context and returns the evidence
sentences when it holds, none when it does not; :data:`RULES` lists them in the
order that decides (see :mod:`volbench.analysis.limit_verdict` for the verdict and
the meaning of each rule). The thresholds below are the rules' cut-offs; the host CPU
rule's are :mod:`volbench.analysis.cpu_starvation`'s (the validity mark "starved" is
the same test), re-exported here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from volbench.analysis import littles_law, scaling, throttle
from volbench.analysis.cpu_starvation import HOST_CPU_PCT as HOST_CPU_PCT
from volbench.analysis.cpu_starvation import JOB_CPU_PCT as JOB_CPU_PCT
from volbench.analysis.cpu_starvation import QUOTA_SHARE as QUOTA_SHARE
from volbench.analysis.cpu_starvation import RUNNABLE_SHARE as RUNNABLE_SHARE
from volbench.analysis.cpu_starvation import THROTTLED_PCT as THROTTLED_PCT
from volbench.analysis.cpu_starvation import WAIT_SHARE as WAIT_SHARE
from volbench.analysis.cpu_starvation import fio_load, shortages, waited
from volbench.analysis.limit_evidence import Context, KnownCap, Limit, MeasuredTest, fmt_rate
from volbench.analysis.limiter_signs import CAP_MATCH, direction_caps, meets, paced

STALL_S = 5.0
"""Seconds of device samples without a completion (requests in flight) that make a
stall: the stall watch's own 5 s (fio/stall.py, issue 6)."""
CACHE_GAP = 2.0
"""A buffered test at this multiple of its direct twin was served by the page cache."""
FIRST_TOUCH_GAP = 1.5
"""A second read of the same region at this multiple of the first: the first paid for
first access (a third lower or more)."""
IDLE_MIN_PCT = 40.0
"""longhorn/kbench README: CPU idleness "should be at least 40%" in latency tests."""
ABOVE_DEVICE_SHARE = 0.25
"""The device saw at most this share of fio's in-flight I/Os: the rest waited above it."""
CPU_STARVED_SHARE = 0.25
"""fio's threads waiting for a CPU over this share of their runnable time reap
completions late: I/Os then wait in fio, not in a limiter."""
DEVICE_BUSY_PCT = 95.0
"""io_ticks share that counts as a device busy all the time (iostat's %util ~100)."""
MEMORY_PSI_PCT = 10.0
"""PSI memory some avg10 worth a note: tasks stalled on memory that share of time."""


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.0f} µs" if ns < 1e6 else f"{ns / 1e6:,.2f} ms"


def applicable(test: MeasuredTest, ctx: Context) -> list[tuple[KnownCap, float, float, str, int]]:
    """The caps of ``ctx`` that bind ``test`` as a whole, each with the test's figure as
    it counts and the cap's (IOPS, or MB/s: bytes/s / 10^6), the unit and the I/Os it
    counts a request as: caps without a direction, and those of the one direction a
    test does (a mix's directions meet theirs: :func:`direction_caps`); a cap of one
    request size (:attr:`KnownCap.bs_bytes`) for tests of that size only, a cap measured
    at a deep queue for tests at least as deep (:attr:`KnownCap.least_outstanding`)."""
    found = []
    for cap in ctx.caps:
        if cap.direction is not None and (test.mixed or not test.direction_iops(cap.direction)):
            continue
        if cap.bs_bytes is not None and test.bs_bytes != cap.bs_bytes:
            continue
        if test.outstanding < cap.least_outstanding:
            continue
        iops, count = cap.counted(test)
        if cap.iops:
            found.append((cap, iops, cap.iops, "IOPS", count))
        if cap.bw_bytes_per_s:
            found.append((cap, test.bw_bytes_per_s / 1e6, cap.bw_bytes_per_s / 1e6, "MB/s", 1))
    return found


def mean_of(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def _in_flight(test: MeasuredTest) -> float | None:
    if test.lat_mean_ns is None:
        return None
    return littles_law.implied_outstanding([(test.iops, test.lat_mean_ns)])


def _stall(test: MeasuredTest, ctx: Context) -> list[str]:
    if test.iops <= 0:
        return ["fio completed no I/O in the test"]
    if ctx.stall_s > 0:
        return [f"0 IOPS for {ctx.stall_s:,.0f} s with I/O outstanding (fio's stall watch)"]
    run, longest = 0, 0
    for s in ctx.host:
        run = run + 1 if s.iops == 0 and (s.in_flight or 0) > 0 else 0
        longest = max(longest, run)
    if longest >= STALL_S:
        return [f"the device completed nothing for {longest} s with requests in flight"]
    return []


def _cache(test: MeasuredTest, ctx: Context) -> list[str]:
    found = []
    twin = ctx.direct_twin
    if not test.direct and twin and twin.iops > 0 and test.iops >= CACHE_GAP * twin.iops:
        found.append(
            f"buffered {test.iops:,.0f} IOPS vs {twin.iops:,.0f} direct"
            f" ({test.iops / twin.iops:,.1f}x): the page cache served it, not the device"
        )
    again = ctx.read_again
    first = test.bw_bytes_per_s
    if again and first > 0 and again.bw_bytes_per_s >= FIRST_TOUCH_GAP * first:
        found.append(
            f"the same region read again gave {again.bw_bytes_per_s / 1e6:,.1f} MB/s,"
            f" {again.bw_bytes_per_s / first:,.1f}x this first read's {first / 1e6:,.1f} MB/s:"
            " a first-touch penalty (blocks initialized or fetched on first access)"
        )
    low = ctx.min_latency_ns
    if low and test.lat_mean_ns is not None and test.lat_mean_ns < low:
        found.append(
            f"mean latency {_us(test.lat_mean_ns)} is below the {_us(low)} this kind of"
            " target can give: a cache answered"
        )
    return found


def _thermal(test: MeasuredTest, ctx: Context) -> list[str]:
    t = ctx.temperatures
    if t is None:
        return []
    found = []
    if t.throttle_events:
        found.append(f"the drive counted {t.throttle_events} thermal throttling transitions")
    start = t.warning_c if t.warning_c is not None else t.critical_c
    if start is not None and t.after_c is not None and t.after_c >= start:
        since = f"from {t.before_c:.0f} °C " if t.before_c is not None else ""
        found.append(
            f"temperature went {since}to {t.after_c:.0f} °C, in the drive's throttling"
            f" range (from {start:.0f} °C)"
        )
    return found


def _fio_load(ctx: Context) -> tuple[float, float] | None:
    """(mean cores fio's processes used, mean threads of them waiting for a CPU) over
    the samples that measured fio; None when none did."""
    return fio_load(ctx.host)


def _starved(load: tuple[float, float], test: MeasuredTest, share: float) -> bool:
    """fio's threads wanted a CPU and waited for one ``share`` of that time."""
    return waited(load, test.numjobs, share)


def _host_cpu(test: MeasuredTest, ctx: Context) -> list[str]:
    found = [
        s.sentence
        for s in shortages(
            test.job_cpu_pct, test.numjobs, ctx.host, ctx.cpu_quota_cores, ctx.throttled_pct
        )
    ]
    busy = mean_of([mean_of(s.cpu_busy_pct) for s in ctx.host])
    if not found:
        found += _below_device(test, ctx, busy)
    fewer = [n for n in ctx.neighbours if n.iodepth == test.iodepth and n.numjobs < test.numjobs]
    if found and fewer:
        base = max(fewer, key=lambda n: n.iops)
        if test.iops <= (1 + scaling.SAME_IOPS_TOLERANCE) * base.iops:
            found.append(
                f"more jobs did not help: {base.numjobs} gave {base.iops:,.0f} IOPS,"
                f" {test.numjobs} gave {test.iops:,.0f}"
            )
    return found


def _below_device(test: MeasuredTest, ctx: Context, busy: float | None) -> list[str]:
    """A test well under the device's own rate at its request size (a limits run that
    found no limiter measured it, at least as deep as its plateau) while every CPU was
    busy, or under a rate that was the host's CPUs' itself (:attr:`KnownCap.cpu_bound`:
    the limits run's fio was short of CPU there): the host's CPUs held it (a device that
    needs them, a loop device or a guest's emulated disk, or fio's share of them)."""
    busy_all = busy is not None and busy >= HOST_CPU_PCT
    below = [
        f"{fmt_rate(value, unit)} is {value / limit:.0%} of {cap.phrase(fmt_rate(limit, unit))}"
        + (
            f", while all CPUs were {busy:.0f}% busy on average: the host's CPUs held it"
            if busy_all
            else ", itself the host's CPUs' rate (fio was short of CPU in the limits run):"
            " the CPUs held this test too"
        )
        for cap, value, limit, unit, _ in applicable(test, ctx)
        if cap.kind == "ceiling"
        and cap.bs_bytes is not None
        and value < (1 - CAP_MATCH) * limit
        and (busy_all or cap.cpu_bound)
    ]
    return below[:1]


def _rate_limiter(test: MeasuredTest, ctx: Context) -> list[str]:
    found = [ctx.burst.sentence()] if ctx.burst and ctx.burst.steady else []
    points = [
        throttle.Point(t.outstanding, t.iops, t.lat_mean_ns, t.name)
        for t in (test, *ctx.neighbours)
        if t.lat_mean_ns is not None
    ]
    shape = throttle.fingerprint(points) if len(points) >= 3 else None
    if shape and shape.limited and test.outstanding in {p.outstanding for p in shape.plateau}:
        found.append(shape.reason)
    unmet = []
    for cap, value, limit, unit, count in applicable(test, ctx):
        if cap.kind == "ceiling":
            continue  # the device's own: rule :func:`_device`
        if meets(value, limit):
            each = f" ({count} I/Os per request as it counts)" if count > 1 else ""
            found.append(
                f"{fmt_rate(value, unit)}{each} is {value / limit:.0%} of"
                f" {cap.phrase(fmt_rate(limit, unit))}"
            )
        elif value < limit and cap.kind == "cap" and not cap.fitted:  # another fitted cap binds
            unmet.append(
                f"{cap.label} caps it at {fmt_rate(limit, unit)} ({value / limit:.0%} reached)"
            )
    found += paced(test, ctx) + direction_caps(test, ctx)
    fio_flight = _in_flight(test) or 0.0
    averaged = [s.queue_length for s in ctx.host if s.queue_length is not None]
    device_flight = mean_of(averaged) if averaged else mean_of([s.in_flight for s in ctx.host])
    busy = mean_of([s.device_busy_pct for s in ctx.host])
    waited = device_flight is not None and device_flight <= ABOVE_DEVICE_SHARE * fio_flight
    load = _fio_load(ctx)  # fio short of CPU reaps completions late: they wait in fio
    starved = load is not None and _starved(load, test, CPU_STARVED_SHARE)
    if (
        test.direct
        and fio_flight >= 2
        and waited
        and busy is not None
        and busy < 50
        and not starved
    ):
        found.append(
            f"fio kept {fio_flight:,.1f} I/Os in flight but the device saw {device_flight:,.1f}"
            f" (busy {busy:.0f}%): they waited above it, in a limiter such as a blkio cgroup"
        )
    return [*found, *unmet] if found else []


def _queue(test: MeasuredTest, ctx: Context) -> list[str]:
    found = []
    implied = _in_flight(test)
    if implied is not None and littles_law.LittleCheck(implied, test.outstanding).ratio < (
        1 - littles_law.TOLERANCE
    ):
        found.append(
            f"fio kept {implied:,.1f} of {test.outstanding} configured I/Os in flight (Little's"
            f" law: {test.iops:,.0f} IOPS x {_us(test.lat_mean_ns or 0)}): the engine or the"
            " submitting threads did not keep the queue full"
        )
    if test.outstanding == 1 and test.lat_mean_ns:
        found.append(
            f"1 I/O in flight at a time: IOPS = 1 / latency ({_us(test.lat_mean_ns)} ->"
            f" {test.iops:,.0f}); this test measures latency, more queue depth raises IOPS"
        )
    if test.iops <= 0:
        return found  # nothing completed: rule :func:`_stall`
    deeper = [n for n in ctx.neighbours if n.outstanding > test.outstanding]
    after = dict(ctx.after_bursts)  # a burst raised the average, not the queue
    better = [
        n
        for n in deeper
        if after.get(n.name, n.iops) > (1 + scaling.SAME_IOPS_TOLERANCE) * test.iops
    ]
    if better:
        top = max(better, key=lambda n: n.iops)
        found.append(
            f"more queue raised IOPS: {top.label} gave {top.iops:,.0f}"
            f" (+{top.iops / test.iops - 1:.0%})"
        )
    points = [
        scaling.ScalingPoint(t.iodepth, t.numjobs, t.iops, t.bw_bytes_per_s, t.lat_mean_ns, None)
        for t in (test, *ctx.neighbours)
    ]
    sentence = scaling.saturation_sentence(points) if len(points) > 1 else None
    if sentence and test.outstanding > scaling.knee(points).outstanding and not better:
        found.append(sentence)
    return found


def _device(test: MeasuredTest, ctx: Context) -> list[str]:
    busy = mean_of([s.device_busy_pct for s in ctx.host])
    shallower = [n for n in ctx.neighbours if n.outstanding < test.outstanding and n.lat_mean_ns]
    if busy is None or busy < DEVICE_BUSY_PCT or not shallower or test.lat_mean_ns is None:
        return []
    base = min(shallower, key=lambda n: n.outstanding)
    rise = test.lat_mean_ns / (base.lat_mean_ns or 1)
    if rise <= 1 or base.iops <= 0 or test.iops <= (1 + scaling.SAME_IOPS_TOLERANCE) * base.iops:
        return []
    return [
        f"the device was busy {busy:.0f}% of the time; from {base.label} to {test.label}"
        f" latency rose {rise:,.1f}x and IOPS {test.iops / base.iops - 1:+.0%}, with no flat top"
    ]


def _device_ceiling(test: MeasuredTest, ctx: Context) -> list[str]:
    """At the device's own ceiling that a limits run measured where it found no limiter:
    more queue would not raise it (the ladder levelled there)."""
    return [
        f"{fmt_rate(value, unit)} is {value / limit:.0%} of {cap.phrase(fmt_rate(limit, unit))}"
        for cap, value, limit, unit, _ in applicable(test, ctx)
        if cap.kind == "ceiling" and meets(value, limit)
    ]


RULES = (
    (Limit.STALL, _stall),
    (Limit.CACHE, _cache),
    (Limit.DEVICE_THERMAL, _thermal),
    (Limit.HOST_CPU, _host_cpu),
    (Limit.RATE_LIMITER, _rate_limiter),
    (Limit.DEVICE, _device_ceiling),
    (Limit.QUEUE, _queue),
    (Limit.DEVICE, _device),
)
