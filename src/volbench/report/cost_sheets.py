"""The sheet of ``volbench cost``: price entries applied to one volume, with totals.

Each line names the catalogue price entry (value, currency, unit, region, date,
status, sources); totals are per currency and billing model, never mixed.
"""

from __future__ import annotations

from typing import Any

from volbench.report.sheet import Column, Sheet
from volbench.specs.catalogue import Product
from volbench.specs.price import Total


def _num(value: Any) -> str:
    return f"{float(value):,.6g}"


def cost_sheet(product: Product, size: float, months: float, totals: list[Total]) -> Sheet:
    """Each applied price entry and one total per currency and billing model."""
    rows: list[dict[str, Any]] = []
    for total in totals:
        for line in total.lines:
            p = line.price
            rows.append(
                {
                    "item": f"{p.value:g} {p.currency} per {p.per}"
                    + (f" above {p.above:g}" if p.above else "")
                    + (f" up to {p.to:g}" if p.to is not None else ""),
                    "quantity": line.quantity,
                    "amount": line.amount,
                    "currency": p.currency,
                    "billing": p.billing,
                    "region": p.region,
                    "date": p.date,
                    "status": p.status,
                    "sources": ", ".join(p.sources),
                }
            )
        rows.append(
            {
                "item": f"total ({total.billing}), per month {total.monthly:,.2f}",
                "amount": total.amount,
                "currency": total.currency,
                "billing": total.billing,
            }
        )
    columns = (
        Column("item", "price entry"),
        Column("quantity", "quantity", _num, numeric=True),
        Column("amount", "amount", lambda v: f"{float(v):,.4f}", numeric=True),
        Column("currency", "currency"),
        Column("region", "region"),
        Column("date", "dated"),
        Column("status", "st"),
        Column("sources", "src"),
    )
    notes = ("currencies and billing models are never added together; 1 month = 730 hours",)
    document = {
        "product": product.id,
        "size": size,
        "size_unit": product.size_unit,
        "months": months,
        "totals": [
            {
                "currency": t.currency,
                "billing": t.billing,
                "amount": t.amount,
                "monthly": t.monthly,
            }
            for t in totals
        ],
        "lines": rows,
    }
    title = f"Cost of {product.id} at {size:g} {product.size_unit} for {months:g} month(s)"
    return Sheet(title, columns, tuple(rows), document, notes)
