"""The guest disk's limits as QEMU's throttle group sets them, from hand-given
figures or from a catalogue product's promise (:class:`~volbench.specs.expectation.Expectation`).

QEMU (docs/throttle.txt, "The Leaky Bucket algorithm") limits each of six figures
(IOPS and bytes/s; total, read, write) with a leaky bucket: it leaks at the base
rate (``iops-total``), I/O fills it, and I/O waits once it is full. With a burst
(``iops-total-max`` = B, ``iops-total-max-length`` = L s) the bucket holds B x L
and I/O may enter it at up to B per second: from empty, the guest runs at B until
the bucket is full, which takes B x L / (B - base) seconds (the I/O keeps leaking
at the base rate meanwhile), then at the base rate.

A cloud's credit bucket (AWS gp2, catalogue source A2: 5.4 million I/O credits,
spent per I/O, earned at the baseline) lasts credits / (burst - baseline) seconds
at the burst rate. The two are the same bucket when B x L = credits, so the lab
sets ``L = credits / B`` (rounded: QEMU takes whole seconds), and the burst then
lasts as the catalogue says. ``iops-total`` and ``iops-read``/``-write`` exclude
each other (a budget reads and writes share, or one each). ``iops-size`` is the
I/O unit: a larger request counts as size / unit I/Os, proportionally (QEMU),
where AWS counts ceil(size / 256 KiB) (catalogue ``count_unit_bytes``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from volbench.errors import UsageError

if TYPE_CHECKING:
    from volbench.specs.expectation import Expectation


MB = 1_000_000
"""--mbps is in MB/s: 10^6 bytes per second."""


@dataclass(frozen=True)
class Bucket:
    """One of QEMU's buckets: ``rate`` per second for good, ``burst`` per second
    (0: none) while its bucket of ``burst`` x ``length`` lasts (``length`` s)."""

    rate: int
    burst: int = 0
    length: int = 1

    @property
    def credits(self) -> int:
        """What a full bucket lets pass above the base rate (QEMU: burst x length)."""
        return self.burst * self.length if self.burst else 0

    @property
    def burst_seconds(self) -> float | None:
        """Seconds at ``burst`` from a full bucket: credits / (burst - rate)."""
        return self.credits / (self.burst - self.rate) if self.burst > self.rate else None


@dataclass(frozen=True)
class Limits:
    """A throttle group's figures: IOPS and bytes/s buckets (None: no limit) and the
    I/O unit in bytes (0: every request counts as one)."""

    iops_total: Bucket | None = None
    iops_read: Bucket | None = None
    iops_write: Bucket | None = None
    bps_total: Bucket | None = None
    bps_read: Bucket | None = None
    bps_write: Bucket | None = None
    iops_size: int = 0
    in_guest: bool = False
    """The guest kernel's cgroup v2 ``io.max`` holds them, not QEMU
    (:mod:`volbench.lab.io_max`: each direction's IOPS and bytes only)."""

    def qemu(self) -> Limits:
        """What QEMU's throttle group holds: these, or none when the guest's kernel does."""
        return Limits() if self.in_guest else self

    def properties(self) -> dict[str, int]:
        """QEMU's ``limits`` of a throttle group (``iops-total``, ``iops-total-max``,
        ``iops-total-max-length``, ..., ``iops-size``): set ones only."""
        found: dict[str, int] = {}
        for field in fields(self):
            bucket = getattr(self, field.name)
            key = field.name.replace("_", "-")
            if isinstance(bucket, Bucket):
                found[key] = bucket.rate
                if bucket.burst:
                    found[f"{key}-max"] = bucket.burst
                    found[f"{key}-max-length"] = bucket.length
        if self.iops_size:
            found["iops-size"] = self.iops_size
        return found

    def every_property(self) -> dict[str, int]:
        """Every figure of QEMU's ``limits``, unset ones as 0 (no limit) and lengths
        of 1 s: what replaces a throttle group's limits whole (``qom-set`` changes only
        the figures given)."""
        found: dict[str, int] = {}
        for field in fields(self):
            if field.name in ("iops_size", "in_guest"):
                continue
            key = field.name.replace("_", "-")
            found |= {key: 0, f"{key}-max": 0, f"{key}-max-length": 1}
        return found | {"iops-size": 0} | self.properties()

    def text(self) -> str:
        """One line: ``iops-total 1,000 (burst 3,000 for 15 s, 30,000 credits), I/O unit
        256 KiB``; throughput in MB/s (10^6 B/s)."""
        parts = []
        for field in fields(self):
            bucket = getattr(self, field.name)
            if isinstance(bucket, Bucket):
                iops = field.name.startswith("iops")
                unit, name = (1, field.name) if iops else (MB, "MB/s" + field.name[3:])
                part = f"{name.replace('_', '-')} {bucket.rate / unit:,.{0 if iops else 1}f}"
                if bucket.burst and bucket.burst_seconds is not None:
                    part += (
                        f" (burst {bucket.burst / unit:,.{0 if iops else 1}f} for"
                        f" {bucket.burst_seconds:,.0f} s"
                        + (
                            f", {bucket.credits:,} credits)"
                            if iops
                            else f", {bucket.credits / MB:,.1f} MB)"
                        )
                    )
                parts.append(part)
        if self.iops_size:
            parts.append(f"I/O unit {self.iops_size / 1024:g} KiB")
        if parts and self.in_guest:
            parts.append("by the guest kernel's io.max")
        return ", ".join(parts) or "unlimited"


def bucket(rate: float, burst: float | None = None, credits: float | None = None) -> Bucket:
    """A bucket of ``rate``/s bursting to ``burst``/s with ``credits`` in a full
    bucket (length = credits / burst, at least 1 s); rates rounded to whole units."""
    base = max(1, round(rate))
    if not burst or burst <= base:
        return Bucket(base)
    top = round(burst)
    length = max(1, round((credits or top) / top))
    return Bucket(base, top, length)


@dataclass(frozen=True)
class HandLimits:
    """``lab up`` options: IOPS (total or per direction), MB/s, a burst of IOPS and its
    bucket in I/Os, a burst of MB/s and its bucket in MB, the I/O unit in bytes (None:
    not given)."""

    iops_total: float | None = None
    iops_read: float | None = None
    iops_write: float | None = None
    mbps: float | None = None
    mbps_read: float | None = None
    mbps_write: float | None = None
    burst_iops: float | None = None
    burst_credits: float | None = None
    burst_mbps: float | None = None
    """MB/s while the bytes bucket has credits (QEMU ``bps-*-max`` of each MB/s cap)."""
    burst_mb: float | None = None
    """MB (10^6 bytes) in a full bytes bucket (``bps-*-max`` x ``bps-*-max-length``)."""
    io_unit: int | None = None
    io_max: bool = False
    """Set by the guest kernel's cgroup v2 ``io.max``, not QEMU (``--io-max``)."""


def from_hand(given: HandLimits) -> Limits:
    """The limits of hand-set options; UsageError for ones QEMU cannot combine."""
    if given.iops_total and (given.iops_read or given.iops_write):
        raise UsageError("give --iops-total or --iops-read/--iops-write, not both (QEMU)")
    if given.mbps and (given.mbps_read or given.mbps_write):
        raise UsageError("give --mbps or --mbps-read/--mbps-write, not both (QEMU)")
    if (given.burst_iops is None) != (given.burst_credits is None):
        raise UsageError("--burst-iops and --burst-credits go together (the bucket, in I/Os)")
    if given.burst_iops and not (given.iops_total or given.iops_read or given.iops_write):
        raise UsageError("--burst-iops needs a baseline: --iops-total or --iops-read/--iops-write")
    for rate in (given.iops_total, given.iops_read, given.iops_write):
        if rate and given.burst_iops and given.burst_iops <= rate:
            raise UsageError(f"--burst-iops {given.burst_iops:g} must be above {rate:g}")
    if (given.burst_mbps is None) != (given.burst_mb is None):
        raise UsageError("--burst-mbps and --burst-mb go together (the bucket, in MB)")
    if given.burst_mbps and not (given.mbps or given.mbps_read or given.mbps_write):
        raise UsageError("--burst-mbps needs a baseline: --mbps or --mbps-read/--mbps-write")
    for rate in (given.mbps, given.mbps_read, given.mbps_write):
        if rate and given.burst_mbps and given.burst_mbps <= rate:
            raise UsageError(f"--burst-mbps {given.burst_mbps:g} must be above {rate:g}")

    def iops(rate: float | None) -> Bucket | None:
        return bucket(rate, given.burst_iops, given.burst_credits) if rate else None

    def bps(rate: float | None) -> Bucket | None:
        if not rate:
            return None
        if given.burst_mbps and given.burst_mb:
            return bucket(rate * MB, given.burst_mbps * MB, given.burst_mb * MB)
        return bucket(rate * MB)

    return Limits(
        iops(given.iops_total),
        iops(given.iops_read),
        iops(given.iops_write),
        bps(given.mbps),
        bps(given.mbps_read),
        bps(given.mbps_write),
        given.io_unit or 0,
        in_guest=given.io_max,
    )


def from_expectation(promise: Expectation) -> Limits:
    """The limits that keep ``promise``: its baseline IOPS and throughput, its burst
    ceiling with the bucket that lasts ``burst_seconds`` (credits = seconds x (burst
    - baseline)), one budget for reads and writes or one each (per-direction figures,
    or ``rw_limits: separate``), its I/O counting unit (``count_unit_bytes``)."""
    separate = (
        promise.read_iops is not None
        or promise.write_iops is not None
        or promise.product.rw_limits == "separate"
    )
    burst = promise.burst_iops if promise.burst_seconds else None

    def iops(rate: float | None) -> Bucket | None:
        if rate is None:
            return None
        credits = None
        if burst and promise.burst_seconds and promise.iops:
            credits = promise.burst_seconds * (burst - promise.iops)
        return bucket(rate, burst, credits)

    tput = promise.throughput_bytes_per_s
    bps = None
    if tput is not None:
        top = promise.burst_throughput_bytes_per_s
        seconds = promise.burst_throughput_seconds
        spare = seconds * (top - tput) if top and seconds else None
        bps = bucket(tput, top if spare else None, spare)
    unit = promise.product.count_unit_bytes or 0
    if separate:
        read = iops(promise.read_iops if promise.read_iops is not None else promise.iops)
        write = iops(promise.write_iops if promise.write_iops is not None else promise.iops)
        return Limits(None, read, write, None, bps, bps, unit)
    return Limits(iops(promise.iops), None, None, bps, None, None, unit)
