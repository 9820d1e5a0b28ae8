"""What a vendor promises for one product at one size: IOPS, throughput, burst,
and what an instance type lets the volume reach.

The figures come from the product's edition valid at ``as_of``; formulas are
evaluated by :mod:`volbench.specs.formula` with ``size`` in the product's own
size unit (GiB or GB, as the vendor states it), provisioned values from the
caller, and, for throughput formulas, ``iops`` = the promised IOPS.

Values outside what the vendor lets you provision at that date (size range,
IOPS and throughput bounds, per-GiB ratios: :mod:`volbench.specs.limits`) are
refused, naming the limit and its source. The latency is the edition's only if
its source was known at ``as_of`` (a 2023 statement does not answer for 2016).

Burst duration on a full bucket is ``bucket / (burst - baseline)`` (the AWS
formula, catalogue src A2 for gp2 I/O credits, A4 for st1/sc1 throughput
credits), capped by the vendor's longest burst (Azure: 30 minutes, Z3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.specs import formula, limits
from volbench.specs.catalogue import Burst, Edition, Figure, Latency, Product
from volbench.specs.instances import InstanceLimit

THROUGHPUT_UNIT_BYTES = {"MB/s": 1e6, "MiB/s": float(2**20)}
"""Bytes per second in one unit of a vendor's throughput figure."""


@dataclass(frozen=True)
class Expectation:
    """Promised performance of ``product`` at ``size`` (product's unit).

    ``throughput_bytes_per_s`` is converted from the vendor's unit
    (``throughput_value`` in ``throughput_unit``). Burst figures are None when
    the volume does not burst at this size; ``burst_seconds`` and
    ``burst_throughput_seconds`` are how long a full bucket lasts at the burst
    level (None when the bucket is not known).
    """

    product: Product
    edition: Edition
    size: float
    iops: float | None
    throughput_value: float | None
    throughput_unit: str
    throughput_bytes_per_s: float | None
    burst_iops: float | None
    burst_seconds: float | None
    latency: Latency | None
    variables: dict[str, float]
    burst_throughput_value: float | None = None
    burst_throughput_seconds: float | None = None
    read_iops: float | None = None  # per-direction caps (GCP pd-standard)
    write_iops: float | None = None
    as_of: str | None = None  # the date asked for (None: today)

    @property
    def throughput_mb_s(self) -> float | None:
        """The promised throughput in MB/s (10^6 B/s), whatever the vendor's unit."""
        return None if self.throughput_bytes_per_s is None else self.throughput_bytes_per_s / 1e6

    @property
    def burst_throughput_bytes_per_s(self) -> float | None:
        if self.burst_throughput_value is None:
            return None
        return self.burst_throughput_value * _unit_bytes(self.throughput_unit)


OPTION_NAMES = {
    "provisioned_iops": "--provisioned-iops",
    "provisioned_mb_s": "--provisioned-mbps",
    "extra_performance": "--extra-performance",
}
"""The command-line option giving each provisioned variable of a formula."""


def check_size(product: Product, size: float) -> None:
    """A :class:`UsageError` unless ``size`` is within the product's range."""
    if not product.min_size <= size <= product.max_size:
        high = "" if product.max_size == math.inf else f"{product.max_size:g}"
        raise UsageError(
            f"size {size:g} {product.size_unit} is outside {product.id}'s range"
            f" {product.min_size:g}-{high or '(no stated maximum)'} {product.size_unit}"
        )


def check_limits(
    product: Product, size: float, as_of: str | None, provisioned: Mapping[str, float]
) -> None:
    """A one-line :class:`UsageError` when ``size`` or a provisioned value is
    outside what the vendor allowed as of ``as_of`` (its edition's limits)."""
    check_size(product, size)
    edition = product.edition(as_of)
    unit = edition.throughput.unit if edition.throughput is not None else ""
    subject = limits.Subject(
        product.id, product.size_unit, unit, edition.from_date, edition.label, as_of
    )
    limits.check(edition.limits, subject, size, provisioned)


def figure_value(figure: Figure, size: float, values: Mapping[str, float]) -> float:
    """A figure's value at ``size``: its formula, or the first tier >= size."""
    if figure.expr is not None:
        return formula.evaluate(figure.expr, {**figure.defaults, **values, "size": size})
    for tier_size, value in figure.tiers:
        if size <= tier_size:
            return value
    raise UsageError(f"size {size:g} is above the largest tier {figure.tiers[-1][0]:g}")


def needed_variables(product: Product, as_of: str | None) -> frozenset[str]:
    """Provisioned variables (beyond size and iops) the product's formulas need."""
    edition = product.edition(as_of)
    names: set[str] = set()
    for figure in (edition.iops, edition.read_iops, edition.write_iops, edition.throughput):
        if figure is not None and figure.expr is not None:
            names |= formula.variables(figure.expr) - set(figure.defaults)
    return frozenset(names - {"size", "iops"})


def expect(
    product: Product,
    size: float,
    as_of: str | None = None,
    provisioned: Mapping[str, float] | None = None,
) -> Expectation:
    """The promised figures of ``product`` at ``size`` as of ``as_of`` (ISO date)."""
    values = dict(provisioned or {})
    check_limits(product, size, as_of, values)
    edition = product.edition(as_of)
    missing = needed_variables(product, as_of) - set(values)
    if missing:
        options = ", ".join(
            OPTION_NAMES.get(m, f"--{m.replace('_', '-')}") for m in sorted(missing)
        )
        raise UsageError(f"{product.id} is provisioned: give {options}")
    iops = figure_value(edition.iops, size, values) if edition.iops else None
    read_iops = figure_value(edition.read_iops, size, values) if edition.read_iops else None
    write_iops = figure_value(edition.write_iops, size, values) if edition.write_iops else None
    throughput = None
    unit = ""
    if edition.throughput is not None:
        unit = edition.throughput.unit
        throughput = figure_value(edition.throughput, size, {**values, "iops": iops or 0.0})
    burst_iops = burst_seconds = burst_tput = burst_tput_seconds = None
    burst = edition.burst
    if burst is not None and (burst.up_to_size is None or size <= burst.up_to_size):
        burst_iops = _above(_burst_value(burst.iops, size, values), iops)
        if burst_iops is not None:
            assert iops is not None
            burst_seconds = _duration(burst, burst.bucket_credits, burst_iops - iops)
        tput_values = {**values, "iops": iops or 0.0, "burst_iops": burst_iops or iops or 0.0}
        burst_tput = _above(_burst_value(burst.throughput, size, tput_values), throughput)
        if burst_tput is not None:
            assert throughput is not None
            bucket = _burst_value(burst.throughput_bucket, size, tput_values)
            burst_tput_seconds = _duration(burst, bucket, burst_tput - throughput)
    return Expectation(
        product=product,
        edition=edition,
        size=size,
        iops=iops,
        throughput_value=throughput,
        throughput_unit=unit,
        throughput_bytes_per_s=None if throughput is None else throughput * _unit_bytes(unit),
        burst_iops=burst_iops,
        burst_seconds=burst_seconds,
        latency=product.latency_at(edition, as_of),
        variables=values,
        burst_throughput_value=burst_tput,
        burst_throughput_seconds=burst_tput_seconds,
        read_iops=read_iops,
        write_iops=write_iops,
        as_of=as_of,
    )


def _burst_value(figure: Figure | None, size: float, values: Mapping[str, float]) -> float | None:
    """A burst ceiling at ``size``; None when it has none (beyond its last tier)."""
    if figure is None or (figure.tiers and size > figure.tiers[-1][0]):
        return None
    return figure_value(figure, size, values)


def _above(ceiling: float | None, baseline: float | None) -> float | None:
    """The burst ceiling when it is above the baseline, else None (no burst)."""
    if ceiling is None or baseline is None or ceiling <= baseline:
        return None
    return ceiling


def _duration(burst: Burst, bucket: float | None, drain_per_s: float) -> float | None:
    """Seconds a full bucket lasts: bucket / (burst - baseline), at most max_minutes."""
    longest = None if burst.max_minutes is None else burst.max_minutes * 60
    if bucket is None:
        return longest
    seconds = bucket / drain_per_s
    return seconds if longest is None else min(seconds, longest)


def _unit_bytes(unit: str) -> float:
    try:
        return THROUGHPUT_UNIT_BYTES[unit]
    except KeyError:
        raise UsageError(f"unknown throughput unit {unit!r} in the catalogue") from None


def curve_sizes(
    product: Product, max_size: float, points: int, as_of: str | None = None
) -> list[float]:
    """``points`` sizes evenly spread from the product's minimum to ``max_size``
    (capped at its maximum as of ``as_of``), whole units, plus every tier
    boundary in range."""
    low, top = product.size_range(as_of)
    high = min(max_size, top)
    if high < low:
        raise UsageError(
            f"--max-size {max_size:g} is below {product.id}'s minimum {low:g} {product.size_unit}"
        )
    step = (high - low) / max(points - 1, 1)
    sizes = {float(round(low + i * step)) for i in range(points)}
    for edition in product.editions:
        for figure in (edition.iops, edition.throughput):
            tiers = figure.tiers if figure is not None else ()
            sizes |= {s for s, _ in tiers if low <= s <= high}
    return sorted(s for s in sizes if low <= s <= high)


@dataclass(frozen=True)
class InstanceCaps:
    """Instance-side caps applied by ``volbench check``: sustained levels and, for
    burstable instance types, the maximum held ``burst_minutes``; per direction
    where the vendor caps reads and writes apart. Throughput in bytes/s."""

    source: str
    iops: float | None
    iops_burst: float | None
    read_iops: float | None
    write_iops: float | None
    bw: float | None
    bw_burst: float | None
    read_bw: float | None
    write_bw: float | None
    burst_minutes: float | None

    def rates(
        self, read_share: float
    ) -> tuple[float | None, float | None, float | None, float | None]:
        """(sustained IOPS, burst IOPS, sustained bytes/s, burst bytes/s) for a test
        whose reads are ``read_share`` of its I/O (1 read-only, 0 write-only):
        with separate read and write caps, ``min(read / r, write / (1 - r))``."""
        iops = directional_cap(self.iops, self.read_iops, self.write_iops, read_share)
        bw = directional_cap(self.bw, self.read_bw, self.write_bw, read_share)
        iops_burst = directional_cap(self.iops_burst, self.read_iops, self.write_iops, read_share)
        bw_burst = directional_cap(self.bw_burst, self.read_bw, self.write_bw, read_share)
        return iops, iops_burst or iops, bw, bw_burst or bw


def directional_cap(
    total: float | None, read: float | None, write: float | None, read_share: float
) -> float | None:
    """The cap of a test with ``read_share`` reads under a total cap and/or separate
    read and write caps: ``min(total, read / r, write / (1 - r))`` (None: no cap)."""
    caps = [] if total is None else [total]
    if read is not None and read_share > 0:
        caps.append(read / read_share)
    if write is not None and read_share < 1:
        caps.append(write / (1 - read_share))
    return min(caps) if caps else None


def instance_caps(limit: InstanceLimit) -> InstanceCaps:
    """The caps of one row of the catalogue's instance table."""
    unit = _unit_bytes(limit.unit)

    def rate(value: float | None) -> float | None:
        return None if value is None else value * unit

    burstable = limit.iops_baseline is not None or limit.throughput_baseline is not None
    return InstanceCaps(
        source=f"{limit.instance} [{limit.status} {', '.join(limit.sources)}]",
        iops=limit.iops_baseline if limit.iops_baseline is not None else limit.iops,
        iops_burst=limit.iops if limit.iops_baseline is not None else None,
        read_iops=limit.read_iops,
        write_iops=limit.write_iops,
        bw=rate(
            limit.throughput_baseline if limit.throughput_baseline is not None else limit.throughput
        ),
        bw_burst=rate(limit.throughput) if limit.throughput_baseline is not None else None,
        read_bw=rate(limit.read_throughput),
        write_bw=rate(limit.write_throughput),
        burst_minutes=limit.burst_minutes if burstable else None,
    )


def given_caps(iops: float | None, mb_s: float | None) -> InstanceCaps | None:
    """Caps given on the command line (``--instance-limit-iops/-mbps``, MB/s = 10^6 B/s)."""
    if iops is None and mb_s is None:
        return None
    bw = None if mb_s is None else mb_s * 1e6
    return InstanceCaps("given", iops, None, None, None, bw, None, None, None, None)
