"""The sheet of ``volbench cost``: price entries applied to one volume, with totals.

Each line names the catalogue price entry (value, currency, unit, region, date,
status, sources); totals are per currency and billing model, never mixed. Each
total also gives its monthly cost per provisioned IOPS and per provisioned MB/s
(10^6 B/s): the catalogue's expectation at that size
(:func:`volbench.specs.price.rate_cost`), in the total's currency.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet
from volbench.specs.catalogue import Product
from volbench.specs.expectation import Expectation
from volbench.specs.price import Total, rate_cost


def _num(value: object) -> str:
    return f"{number(value):,.6g}"


def _per(value: object) -> str:
    return f"{number(value):,.4f}"


@dataclass(frozen=True, eq=False)
class CostLineRow(Row):
    """One price entry applied: the entry (value, currency, unit, bounds), the
    quantity it is applied to, the amount over the period, and its region, date,
    status and source ids."""

    item: str
    quantity: float
    amount: float
    currency: str
    billing: str
    region: str
    date: str
    status: str
    sources: str


@dataclass(frozen=True, eq=False)
class CostTotalRow(Row):
    """A total in one currency and billing model over the period, with its monthly
    cost per provisioned IOPS and per MB/s (10^6 B/s), None when not known."""

    item: str
    amount: float
    currency: str
    billing: str
    per_provisioned_iops: float | None
    per_provisioned_mb_s: float | None


def cost_sheet(
    product: Product,
    size: float,
    months: float,
    totals: list[Total],
    expectation: Expectation | None = None,
    missing: str = "",
) -> Sheet:
    """Each applied price entry and one total per currency and billing model,
    with its monthly cost per provisioned IOPS and MB/s when ``expectation``
    (the product's figures at ``size``) is known; ``missing`` says why not."""
    iops = expectation.iops if expectation else None
    mb_s = expectation.throughput_mb_s if expectation else None
    rows: list[CostLineRow | CostTotalRow] = []
    performance = [rate_cost(total, iops, mb_s) for total in totals]
    for total, per in zip(totals, performance, strict=True):
        for line in total.lines:
            p = line.price
            rows.append(
                CostLineRow(
                    item=f"{p.value:g} {p.currency} per {p.per}"
                    + (f" above {p.above:g}" if p.above else "")
                    + (f" up to {p.to:g}" if p.to is not None else ""),
                    quantity=line.quantity,
                    amount=line.amount,
                    currency=p.currency,
                    billing=p.billing,
                    region=p.region,
                    date=p.date,
                    status=p.status,
                    sources=", ".join(p.sources),
                )
            )
        rows.append(
            CostTotalRow(
                item=f"total ({total.billing}), per month {total.monthly:,.2f}",
                amount=total.amount,
                currency=total.currency,
                billing=total.billing,
                per_provisioned_iops=per.per_iops,
                per_provisioned_mb_s=per.per_mb_s,
            )
        )
    currencies = {t.currency for t in totals}
    money = currencies.pop() if len(currencies) == 1 else "currency"
    columns = (
        Column("item", "price entry"),
        Column("quantity", "quantity", _num, numeric=True),
        Column("amount", "amount", lambda v: f"{number(v):,.4f}", numeric=True),
        Column("currency", "currency"),
        Column("per_provisioned_iops", f"{money}/month per prov. IOPS", _per, numeric=True),
        Column("per_provisioned_mb_s", f"{money}/month per prov. MB/s", _per, numeric=True),
        Column("region", "region"),
        Column("date", "dated"),
        Column("status", "st"),
        Column("sources", "src"),
    )
    if expectation is None:
        provisioned = f"no cost per provisioned IOPS or MB/s: {missing or 'no expected figures'}"
    else:
        e = expectation
        throughput = (
            "no throughput figure"
            if mb_s is None
            else f"{mb_s:,.1f} MB/s (10^6 B/s; {e.throughput_value:g} {e.throughput_unit})"
        )
        provisioned = (
            f"provisioned at {size:g} {product.size_unit}: "
            + ("no IOPS figure" if iops is None else f"{iops:,.0f} IOPS")
            + f", {throughput}; formulas {e.edition.label!r} (from {e.edition.from_date});"
            " per IOPS and per MB/s = monthly total / that figure, in the total's currency"
        )
    notes = (
        "currencies and billing models are never added together; 1 month = 730 hours",
        provisioned,
    )
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
                "provisioned_iops": per.iops,
                "provisioned_mb_s": per.mb_s,
                "per_provisioned_iops": per.per_iops,
                "per_provisioned_mb_s": per.per_mb_s,
            }
            for t, per in zip(totals, performance, strict=True)
        ],
        "lines": documents(rows),
        "notes": list(notes),
    }
    title = f"Cost of {product.id} at {size:g} {product.size_unit} for {months:g} month(s)"
    return Sheet(title, columns, tuple(rows), document, notes)
