"""Signs of a rate limiter beyond one test's own figures (rule 5 of
analysis/limit_verdict.py): a limiter pacing a QD 1 test and a deeper one of the same
workload at one rate, and a mixed test whose reads or writes meet a cap of their own
direction. Pure functions over a :class:`MeasuredTest` and its :class:`Context`.

Pacing: Little's law (L = lambda x W, Little 1961) with lambda fixed by a limiter makes
the mean latency grow as L / lambda while IOPS stay flat from QD 1 on; a device that
serves several I/Os at once raises IOPS with more queue instead. A device that can serve
only one I/O at a time would look the same; no SSD, network volume or disk with NCQ is
one.
"""

from __future__ import annotations

from volbench.analysis import littles_law, scaling
from volbench.analysis.limit_evidence import Context, MeasuredTest, fmt_rate

CAP_MATCH = 0.10
"""A figure within 10 % of a known cap meets it: below, the AWS EBS user guide, "Amazon
EBS optimization" (volumes deliver at least 90 % of their provisioned IOPS); above, a
limiter's own window (blkio throttles in 100 ms slices and lets a new cgroup's first
slice through; QEMU's leaky bucket starts full): a 1 s PTS cell under a 1,000 IOPS
blkio read cap measured 1,062 reads/s."""


def meets(value: float, limit: float) -> bool:
    """``value`` is at ``limit`` within :data:`CAP_MATCH`; never for a zero limit."""
    return limit > 0 and abs(value - limit) <= CAP_MATCH * limit


PACED_MATCH = scaling.SAME_IOPS_TOLERANCE
"""A QD 1 test and a deeper one within this share of each other's IOPS ran at one rate
(5 %, scaling.py's "the same throughput"): a limiter paces both within a percent or two
(blkio, QEMU's throttling), while a device serving several I/Os at once (an SSD, a
network volume, a disk with NCQ) gains far more than 5 % from more queue."""

PACED_MAX_IO_BYTES = 65536
"""Pacing is told only for random I/O of up to 64 KiB: a device streams at its bandwidth
from QD 1 on with sequential or large requests (a disk's sequential rate), so flat IOPS
there may be the device's; small random I/O at QD 1 waits on one access at a time, which
more queue overlaps on any device that serves several at once."""


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.0f} µs" if ns < 1e6 else f"{ns / 1e6:,.2f} ms"


def _in_flight(test: MeasuredTest) -> float | None:
    if test.lat_mean_ns is None:
        return None
    return littles_law.implied_outstanding([(test.iops, test.lat_mean_ns)])


def paced(test: MeasuredTest, ctx: Context) -> list[str]:
    """A QD 1 test and a deeper one of the same workload at the same IOPS (within
    :data:`PACED_MATCH`; a deeper test that burst steadily: its baseline after), the
    deeper one's queue kept full (Little's law): more queue raised only latency. Random
    I/O of at most :data:`PACED_MAX_IO_BYTES` only."""
    if test.lat_mean_ns is None or test.iops <= 0 or test.sequential:
        return []
    if test.bw_bytes_per_s / test.iops > PACED_MAX_IO_BYTES:
        return []
    after = dict(ctx.after_bursts)
    if test.outstanding == 1:
        deeper = [n for n in ctx.neighbours if n.outstanding > 1 and _full(n)]
        pairs = [(test, n, after.get(n.name, n.iops)) for n in deeper]
    elif _full(test):
        own = ctx.burst.baseline if ctx.burst and ctx.burst.steady else test.iops
        shallow = [n for n in ctx.neighbours if n.outstanding == 1 and n.lat_mean_ns]
        pairs = [(n, test, own) for n in shallow]
    else:
        pairs = []
    same = [(one, deep, rate) for one, deep, rate in pairs if _same(one.iops, rate)]
    if not same:
        return sized(test, ctx)
    one, deep, rate = max(same, key=lambda p: p[1].outstanding)
    burst = " after its burst" if rate != deep.iops else ""
    return [
        f"QD 1 gave {one.iops:,.0f} IOPS and {deep.label} the same {rate:,.0f}{burst}"
        f" ({rate / one.iops - 1:+.1%}) with latency {_us(one.lat_mean_ns or 0)} ->"
        f" {_us(deep.outstanding / rate * 1e9)} (Little's law: {deep.outstanding} in flight /"
        f" {rate:,.0f} IOPS): a rate limiter paces the I/O at ~{one.iops:,.0f} IOPS, more"
        " queue only waits longer for it"
    ]


def sized(test: MeasuredTest, ctx: Context) -> list[str]:
    """The same rate as the same workload at another block size that a limiter was
    shown to pace (:attr:`Context.paced_sizes`), at the same queue, kept full: the
    bytes per I/O changed and the I/O rate did not, so I/Os, not bytes, are counted
    and capped. (A disk seeking between random I/Os also keeps its IOPS across small
    sizes, but it gains from the queue, so it is never shown paced.)"""
    if not _full(test):
        return []
    for other, rate in ctx.paced_sizes:
        if _same(rate, test.iops) and other.iops > 0:
            mine, theirs = test.bw_bytes_per_s / test.iops, other.bw_bytes_per_s / other.iops
            return [
                f"the same {test.iops:,.0f} IOPS as {other.name} ({_kib(theirs)}, paced by a"
                f" rate limiter at ~{rate:,.0f} IOPS) at {_kib(mine)} per I/O, {test.label}:"
                " the limiter counts I/Os, not bytes"
            ]
    return []


def _kib(size: float) -> str:
    return f"{size / 1024:,.0f} KiB"


def _full(test: MeasuredTest) -> bool:
    """fio kept the test's queue full (Little's law within its tolerance)."""
    implied = _in_flight(test)
    return implied is not None and not littles_law.LittleCheck(implied, test.outstanding).flagged


def _same(one: float, other: float) -> bool:
    return one > 0 and abs(other - one) <= PACED_MATCH * one


def direction_caps(test: MeasuredTest, ctx: Context) -> list[str]:
    """A mixed test with one direction at a cap of its own (a cgroup's, a promise's,
    a fitted model's, the same workload's read-only or write-only test of the run): in
    IOPS, or in MB/s (that direction's I/Os x the request size)."""
    found: list[str] = []
    if not test.mixed or test.iops <= 0:
        return found
    size = test.bs_bytes or test.bw_bytes_per_s / test.iops
    for cap in ctx.caps:
        iops = test.direction_iops(cap.direction or "")
        if cap.direction is None or not iops or cap.kind != "cap":
            continue
        for value, limit, unit, whole in (
            (iops, cap.iops, "IOPS", test.iops),
            (iops * size / 1e6, (cap.bw_bytes_per_s or 0) / 1e6, "MB/s", test.bw_bytes_per_s / 1e6),
        ):
            if limit and meets(value, limit):
                found.append(
                    f"the {cap.direction}s of this mix, {fmt_rate(value, unit)} of"
                    f" {fmt_rate(whole, unit)}, are {value / limit:.0%} of their own cap of"
                    f" {fmt_rate(limit, unit)} ({cap.label}): a rate limiter holds the"
                    f" {cap.direction}s"
                )
    return found
