"""Price of a volume from the catalogue's price entries, per currency and billing.

Entries apply per unit: ``GB-month`` and ``GB-hour`` x size, ``disk-month`` once
(for sizes in its tier), ``IOPS-month`` x provisioned IOPS above the free
allowance, ``MBps-month`` x provisioned MB/s above it. Hours and months convert
with 730 hours per month (the convention of AWS and Azure price pages:
24 x 365 / 12). Currencies are never added together: one total per currency
and billing model (monthly subscription vs pay-as-you-go).
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
    if price.per == "IOPS-month":
        value = provisioned.get("provisioned_iops", price.above)
        return max(value - price.above, 0.0)
    if price.per == "MBps-month":
        value = provisioned.get("provisioned_mb_s", price.above)
        return max(value - price.above, 0.0)
    return None


def cost(
    product: Product,
    size: float,
    months: float,
    provisioned: Mapping[str, float] | None = None,
) -> list[Total]:
    """Cost of ``product`` at ``size`` over ``months``: one total per currency
    and billing model, each from the entries that apply (none: empty list)."""
    groups: dict[tuple[str, str], list[CostLine]] = {}
    for price in product.prices:
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
