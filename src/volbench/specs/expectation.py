"""What a vendor promises for one product at one size: IOPS, throughput, burst.

The figures come from the product's edition valid at ``as_of``; formulas are
evaluated by :mod:`volbench.specs.formula` with ``size`` in the product's own
size unit (GiB or GB, as the vendor states it), provisioned values from the
caller, and, for throughput formulas, ``iops`` = the promised IOPS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.specs import formula
from volbench.specs.catalogue import Edition, Figure, Latency, Product

THROUGHPUT_UNIT_BYTES = {"MB/s": 1e6, "MiB/s": float(2**20)}
"""Bytes per second in one unit of a vendor's throughput figure."""


@dataclass(frozen=True)
class Expectation:
    """Promised performance of ``product`` at ``size`` (product's unit).

    ``throughput_bytes_per_s`` is converted from the vendor's unit
    (``throughput_value`` in ``throughput_unit``). ``burst_seconds`` is
    bucket / (burst - baseline), the AWS gp2 formula (catalogue src A2).
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


def check_size(product: Product, size: float) -> None:
    """A :class:`UsageError` unless ``size`` is within the product's range."""
    if not product.min_size <= size <= product.max_size:
        raise UsageError(
            f"size {size:g} {product.size_unit} is outside {product.id}'s range"
            f" {product.min_size:g}-{product.max_size:g} {product.size_unit}"
        )


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
    for figure in (edition.iops, edition.throughput):
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
    check_size(product, size)
    edition = product.edition(as_of)
    values = dict(provisioned or {})
    missing = needed_variables(product, as_of) - set(values)
    if missing:
        options = ", ".join(f"--{m.replace('_', '-')}" for m in sorted(missing))
        raise UsageError(f"{product.id} is provisioned: give {options}")
    iops = figure_value(edition.iops, size, values) if edition.iops else None
    throughput = None
    unit = ""
    if edition.throughput is not None:
        unit = edition.throughput.unit
        throughput = figure_value(edition.throughput, size, {**values, "iops": iops or 0.0})
    burst_iops = burst_seconds = None
    burst = edition.burst
    if (
        burst is not None
        and iops is not None
        and burst.iops > iops
        and (burst.up_to_size is None or size <= burst.up_to_size)
    ):
        burst_iops = burst.iops
        if burst.bucket_credits is not None:
            burst_seconds = burst.bucket_credits / (burst.iops - iops)
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
        latency=edition.latency,
        variables=values,
    )


def _unit_bytes(unit: str) -> float:
    try:
        return THROUGHPUT_UNIT_BYTES[unit]
    except KeyError:
        raise UsageError(f"unknown throughput unit {unit!r} in the catalogue") from None


def curve_sizes(product: Product, max_size: float, points: int) -> list[float]:
    """``points`` sizes evenly spread from the product's minimum to ``max_size``
    (capped at its maximum), whole units, plus every tier boundary in range."""
    high = min(max_size, product.max_size)
    if high < product.min_size:
        raise UsageError(
            f"--max-size {max_size:g} is below {product.id}'s minimum"
            f" {product.min_size:g} {product.size_unit}"
        )
    step = (high - product.min_size) / max(points - 1, 1)
    sizes = {float(round(product.min_size + i * step)) for i in range(points)}
    for edition in product.editions:
        for figure in (edition.iops, edition.throughput):
            tiers = figure.tiers if figure is not None else ()
            sizes |= {s for s, _ in tiers if product.min_size <= s <= high}
    return sorted(s for s in sizes if product.min_size <= s <= high)
