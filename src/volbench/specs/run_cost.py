"""What a test run costs in the cloud before it starts: the volume's price for the run's
duration (the catalogue's price entries, :mod:`volbench.specs.price`) plus the VM's
hourly price the user gives. Seed 000's run stopped halfway when the account ran out
of balance: the estimate is printed before a run starts.

A run's duration is a range (adaptive plans stop when their results say so), so is
its cost. Currencies are never added together: the VM's price is added to the
volume's total of the same currency only (the VM's currency is the user's word; when
it gives none, the VM's cost is shown apart).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.specs.catalogue import Product
from volbench.specs.price import HOURS_PER_MONTH, cost

_AMOUNT = re.compile(r"^\s*(\d{1,40}(?:\.\d{1,40})?)\s*([A-Za-z]{3})?\s*\Z")
MAX_HOURLY = 1e9
"""The largest price per hour taken: a run's cost stays a finite number."""


@dataclass(frozen=True)
class HourlyCost:
    """The VM's price per hour, in ``currency`` (None: not said)."""

    amount: float
    currency: str | None = None


def parse_hourly_cost(text: str) -> HourlyCost:
    """``0.192`` or ``0.192USD`` (an ISO 4217 code after the amount)."""
    match = _AMOUNT.match(text)
    if not match or float(match.group(1)) > MAX_HOURLY:
        raise UsageError(
            f"invalid hourly cost {text[:40]!r}: use e.g. 0.192 or 0.192USD (at most"
            f" {MAX_HOURLY:g})"
        )
    currency = match.group(2).upper() if match.group(2) else None
    return HourlyCost(float(match.group(1)), currency)


@dataclass(frozen=True)
class CostEstimate:
    """The cost of ``low_s`` to ``high_s`` seconds in one currency and billing model
    (``billing`` "VM" for the VM alone)."""

    currency: str | None
    billing: str
    low: float
    high: float
    parts: tuple[str, ...]

    def text(self) -> str:
        amount = f"{self.low:,.4f}" + (f" to {self.high:,.4f}" if self.high > self.low else "")
        return f"{amount} {self.currency or '(your currency)'} ({'; '.join(self.parts)})"


def run_cost(
    low_s: float,
    high_s: float,
    product: Product | None = None,
    size: float | None = None,
    hourly: HourlyCost | None = None,
) -> list[CostEstimate]:
    """The cost of a run of ``low_s`` to ``high_s`` seconds: the volume ``product`` at
    ``size`` (its size unit) by the catalogue's prices, plus the VM's ``hourly`` price."""
    hours = (low_s / 3600, high_s / 3600)
    found: list[CostEstimate] = []
    vm_used = False
    if product is not None and size is not None:
        for low_total, high_total in zip(
            cost(product, size, hours[0] / HOURS_PER_MONTH),
            cost(product, size, hours[1] / HOURS_PER_MONTH),
            strict=True,
        ):
            parts = [
                f"{product.id} at {size:g} {product.size_unit}: {low_total.monthly:,.2f}/month"
            ]
            low, high = low_total.amount, high_total.amount
            if hourly is not None and hourly.currency == low_total.currency:
                low += hourly.amount * hours[0]
                high += hourly.amount * hours[1]
                parts.append(f"VM {hourly.amount:g}/hour")
                vm_used = True
            found.append(
                CostEstimate(low_total.currency, low_total.billing, low, high, tuple(parts))
            )
    if hourly is not None and not vm_used:
        found.append(
            CostEstimate(
                hourly.currency,
                "VM",
                hourly.amount * hours[0],
                hourly.amount * hours[1],
                (f"VM {hourly.amount:g}/hour",),
            )
        )
    return found
