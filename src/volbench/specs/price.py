"""Price of a volume from the catalogue's price entries, per currency and billing.

Entries apply per unit: ``GB-month`` and ``GB-hour`` x size, ``disk-month`` once
(for sizes in its tier), ``IOPS-month`` x provisioned IOPS above the free
allowance (and up to ``to`` for a price band: AWS io2 bills 0-32,000,
32,001-64,000 and above at falling rates, src A11), ``MBps-month`` x
provisioned MB/s above it. ``million-requests`` entries (AWS magnetic) are
kept but not applied: a period does not say how many I/Os were made. Hours and months convert
with 730 hours per month (the convention of AWS and Azure price pages:
24 x 365 / 12). Currencies are never added together: one total per currency
and billing model (monthly subscription vs pay-as-you-go).

Dates: ``as_of`` keeps only the price entries known at that date (their own
date, else their sources'); a price seen in 2020 does not answer for 2016.

Price/performance (:func:`rate_cost`): a total's monthly cost divided by an
IOPS or MB/s (10^6 B/s) figure, in the total's own currency per month: per
provisioned figure (the catalogue's expectation at that size) or per measured
one (fio's figures of a run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from volbench.specs.catalogue import Price, Product

HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class CostLine:
    """One price entry applied: ``quantity`` units for ``months`` months."""

    price: Price
    quantity: float
    months: float

    @property
    def amount(self) -> float:
        """Cost in the price's currency over the period."""
        hours_factor = HOURS_PER_MONTH if self.price.per.endswith("hour") else 1.0
        return self.price.value * self.quantity * self.months * hours_factor


@dataclass(frozen=True)
class Total:
    """Total over one currency and billing model; ``monthly`` is per 730 h."""

    currency: str
    billing: str
    amount: float
    monthly: float
    lines: tuple[CostLine, ...]


def _quantity(price: Price, size: float, provisioned: Mapping[str, float]) -> float | None:
    if price.per.startswith("GB-"):
        return size
    if price.per == "disk-month":
        low = price.size_above if price.size_above is not None else float("-inf")
        high = price.size_to if price.size_to is not None else float("inf")
        return 1.0 if low < size <= high else None
    if price.per in ("IOPS-month", "MBps-month"):
        name = "provisioned_iops" if price.per == "IOPS-month" else "provisioned_mb_s"
        value = provisioned.get(name, price.above)
        if price.to is not None:
            value = min(value, price.to)
        return max(value - price.above, 0.0)
    return None  # million-requests: needs an I/O count, not a period


def cost(
    product: Product,
    size: float,
    months: float,
    provisioned: Mapping[str, float] | None = None,
    as_of: str | None = None,
) -> list[Total]:
    """Cost of ``product`` at ``size`` over ``months``: one total per currency
    and billing model, each from the entries that apply and are known at
    ``as_of`` (None: all); none: empty list."""
    groups: dict[tuple[str, str], list[CostLine]] = {}
    for price in product.prices_at(as_of):
        quantity = _quantity(price, size, provisioned or {})
        if quantity is None:
            continue
        key = (price.currency, price.billing)
        groups.setdefault(key, []).append(CostLine(price, quantity, months))
    totals = []
    for (currency, billing), lines in groups.items():
        amount = sum(line.amount for line in lines)
        totals.append(
            Total(currency, billing, amount, amount / months if months else 0.0, tuple(lines))
        )
    return totals


@dataclass(frozen=True)
class RateCost:
    """Monthly cost per unit of performance, in the total's currency per month:
    ``monthly / iops`` (per IOPS) and ``monthly / mb_s`` (per MB/s, 10^6 B/s);
    None where the figure is unknown or zero."""

    currency: str
    billing: str
    monthly: float
    iops: float | None
    mb_s: float | None

    @property
    def per_iops(self) -> float | None:
        return self.monthly / self.iops if self.iops else None

    @property
    def per_mb_s(self) -> float | None:
        return self.monthly / self.mb_s if self.mb_s else None


def rate_cost(total: Total, iops: float | None, mb_s: float | None) -> RateCost:
    """``total``'s monthly cost per ``iops`` IOPS and per ``mb_s`` MB/s."""
    return RateCost(total.currency, total.billing, total.monthly, iops, mb_s)
