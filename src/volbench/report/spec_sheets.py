"""Sheets of the vendor catalogue: product list, one product, expected figures, curve.

Every row names the catalogue edition, status (V, VM, S, R, D) and source ids
of the figure it shows, so each number traces back to the source document.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from volbench.report.figure_rows import (
    EditionRow,
    add_burst_rows,
    burst_rows,
    figure_basis,
    figure_text,
)
from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.specs.catalogue import Product
from volbench.specs.expectation import Expectation
from volbench.specs.price import HOURS_PER_MONTH, Total, cost


def size_range(product: Product) -> str:
    """``min-max unit``; an unstated maximum is said so."""
    high = "(no stated maximum)" if product.max_size == math.inf else f"{product.max_size:g}"
    return f"{product.min_size:g}-{high} {product.size_unit}"


def _num(value: object) -> str:
    return f"{number(value):,.6g}" if abs(number(value)) < 1e6 else fmt_count(value)


@dataclass(frozen=True, eq=False)
class ProductRow(Row):
    """A product of the catalogue: id, vendor, name, size range, whether reads and
    writes share the limits, the dates of its formulas and where it comes from."""

    id: str
    vendor: str
    name: str
    api_name: str
    size_range: str
    rw_limits: str
    editions: str
    origin: str


@dataclass(frozen=True, eq=False)
class ExpectedRow(Row):
    """One figure promised at a size: its value in ``unit``, how it was found
    (formula, tier or source text), status and source ids."""

    metric: str
    value: float
    unit: str
    basis: str
    status: str
    sources: str


@dataclass(frozen=True, eq=False)
class PriceRow(ExpectedRow):
    """The monthly price at a size in one currency and billing model, with the regions
    and dates of the price entries behind it."""

    currency: str
    billing: str
    regions: list[str]
    dates: list[str]


@dataclass(frozen=True, eq=False)
class CurveRow(Row):
    """Expected IOPS and MB/s (10^6 B/s) of a product at one size."""

    product: str
    size: float
    size_unit: str
    edition_from: str
    iops: float | None
    throughput_mb_s: float | None


def products_sheet(products: list[Product]) -> Sheet:
    """One row per product: id, vendor, name, size range, read/write limits, and
    its origin (built-in, or the user's catalogue file)."""
    rows = tuple(
        ProductRow(
            id=p.id,
            vendor=p.vendor,
            name=p.name,
            api_name=p.api_name,
            size_range=size_range(p),
            rw_limits=p.rw_limits,
            editions=", ".join(e.from_date for e in p.editions),
            origin=p.origin,
        )
        for p in products
    )
    columns = (
        Column("id", "product"),
        Column("vendor", "vendor"),
        Column("name", "name"),
        Column("size_range", "sizes"),
        Column("rw_limits", "read/write limits"),
        Column("editions", "formulas dated"),
        Column("origin", "from"),
    )
    return Sheet("Vendor catalogue", columns, rows, {"products": documents(rows)})


def product_sheet(product: Product, sources: dict[str, str]) -> Sheet:
    """Every formula edition and price of one product, with quote and sources."""
    rows: list[EditionRow] = []
    for edition in product.editions:
        for metric, figure in (
            ("IOPS", edition.iops),
            ("read IOPS", edition.read_iops),
            ("write IOPS", edition.write_iops),
            ("throughput", edition.throughput),
        ):
            if figure is None:
                continue
            rows.append(
                EditionRow(
                    edition.from_date,
                    edition.label,
                    metric,
                    figure_text(figure),
                    figure.unit or "IOPS",
                    figure.status,
                    ", ".join(figure.sources),
                    figure.quote,
                )
            )
        if edition.burst is not None:
            rows += burst_rows(edition.from_date, edition.label, edition.burst)
        for limit in edition.limits:
            bounds = [
                f"{name} {text}"
                for name, text in (("min", limit.low), ("max", limit.high))
                if text is not None
            ]
            if limit.size_above is not None:
                bounds.append(f"only above size {limit.size_above:g}")
            rows.append(
                EditionRow(
                    edition.from_date,
                    edition.label,
                    f"limit {limit.variable}",
                    ", ".join(bounds),
                    "",
                    limit.status,
                    ", ".join(limit.sources),
                    limit.quote,
                )
            )
    for price in product.prices:
        rows.append(
            EditionRow(
                price.date,
                f"price ({price.billing}, {price.region})",
                "price",
                f"{price.value:g}"
                + (f" above {price.above:g}" if price.above else "")
                + (f" up to {price.to:g}" if price.to is not None else ""),
                f"{price.currency} per {price.per}",
                price.status,
                ", ".join(price.sources),
                price.quote,
            )
        )
    columns = (
        Column("from", "from"),
        Column("edition", "edition"),
        Column("metric", "metric"),
        Column("value", "formula / value"),
        Column("unit", "unit"),
        Column("status", "st"),
        Column("sources", "src"),
    )
    latency = product.latency
    notes = (
        f"sizes {size_range(product)}"
        + (f" ({product.capacity_quote})" if product.capacity_quote else ""),
        f"IOPS defined at {product.iops_io_bytes // 1024} KiB I/O"
        + (
            f"; an I/O counts as ceil(size / {product.count_unit_bytes // 1024} KiB) I/Os"
            if product.count_unit_bytes
            else ""
        )
        + (f" ({product.io_quote})" if product.io_quote else ""),
        f"read/write limits: {product.rw_limits}"
        + (f" ({product.rw_quote})" if product.rw_quote else ""),
        f"latency: {latency.text} [{latency.status} {', '.join(latency.sources)}]"
        if latency
        else "latency: not stated",
        *(_source_line(s, sources.get(s, "?")) for s in _used_sources(product)),
    )
    document = {"product": product.id, "vendor": product.vendor, "name": product.name}
    return Sheet(
        f"{product.vendor} {product.name} ({product.id})",
        columns,
        tuple(rows),
        {**document, "figures": documents(rows), "notes": list(notes)},
        notes,
    )


def _source_line(source: str, text: str) -> str:
    """``A3: the page's title``; a source whose id says what it is once (the user's
    own catalogue file, :func:`volbench.specs.user_catalogue.user_source`)."""
    return source if text == source else f"{source}: {text}"


def _used_sources(product: Product) -> list[str]:
    seen: list[str] = []
    for edition in product.editions:
        items = (edition.iops, edition.read_iops, edition.write_iops, edition.throughput)
        for item in (*items, edition.burst, edition.latency):
            for source in item.sources if item is not None else ():
                if source not in seen:
                    seen.append(source)
    for price in product.prices:
        seen += [s for s in price.sources if s not in seen]
    for edition in product.editions:
        seen += [s for limit in edition.limits for s in limit.sources if s not in seen]
    return seen


def _price_basis(total: Total) -> str:
    """How a monthly total is made: quantity x price of each entry, with each
    entry's region and date (GB-hour prices x 730 hours)."""
    parts = []
    for line in total.lines:
        p = line.price
        hours = f" x {HOURS_PER_MONTH:g} h" if p.per.endswith("hour") else ""
        above = f" above {p.above:g}" if p.above else ""
        parts.append(
            f"{line.quantity:g} x {p.value:g} {p.currency} per {p.per}{above}{hours}"
            f" ({p.region}, {p.date})"
        )
    return " + ".join(parts)


def _price_rows(e: Expectation) -> list[PriceRow]:
    """One row per currency and billing model: the monthly price at the size."""
    rows = []
    for total in cost(e.product, e.size, 1.0, e.variables, e.as_of):
        prices = [line.price for line in total.lines]
        rows.append(
            PriceRow(
                metric=f"price ({total.billing})",
                value=total.monthly,
                unit=f"{total.currency}/month",
                basis=_price_basis(total),
                status=", ".join(sorted({p.status for p in prices})),
                sources=", ".join(sorted({s for p in prices for s in p.sources})),
                currency=total.currency,
                billing=total.billing,
                regions=sorted({p.region for p in prices}),
                dates=sorted({p.date for p in prices}),
            )
        )
    return rows


def expectation_sheet(expectation: Expectation) -> Sheet:
    """The promised figures of one product at one size, one row per metric."""
    e = expectation
    edition = e.edition
    rows: list[ExpectedRow] = []

    def add(metric: str, value: float | None, unit: str, basis: str, st: str, src: str) -> None:
        if value is not None:
            rows.append(ExpectedRow(metric, value, unit, basis, st, src))

    if edition.iops is not None:
        add(
            "IOPS",
            e.iops,
            "IOPS",
            figure_basis(edition.iops, e.size),
            edition.iops.status,
            ", ".join(edition.iops.sources),
        )
    for metric, figure, value in (
        ("read IOPS", edition.read_iops, e.read_iops),
        ("write IOPS", edition.write_iops, e.write_iops),
    ):
        if figure is not None:
            basis = figure_basis(figure, e.size)
            add(metric, value, "IOPS", basis, figure.status, ", ".join(figure.sources))
    if edition.throughput is not None:
        t = edition.throughput
        src = ", ".join(t.sources)
        add(
            "throughput",
            e.throughput_value,
            e.throughput_unit,
            figure_basis(t, e.size),
            t.status,
            src,
        )
        if e.throughput_unit != "MB/s" and e.throughput_bytes_per_s is not None:
            add(
                "throughput",
                e.throughput_bytes_per_s / 1e6,
                "MB/s",
                f"{e.throughput_value:g} x 1.048576",
                "D",
                src,
            )
    if edition.burst is not None:
        add_burst_rows(add, e, edition.burst)
    if e.latency is not None:
        lat = e.latency
        add("latency (max)", lat.max_ms, "ms", lat.text, lat.status, ", ".join(lat.sources))
    prices = _price_rows(e)
    rows += prices
    columns = (
        Column("metric", "metric"),
        Column("value", "expected", _num, numeric=True),
        Column("unit", "unit"),
        Column("basis", "formula / source text"),
        Column("status", "st"),
        Column("sources", "src"),
    )
    variables = ", ".join(f"{k}={v:g}" for k, v in sorted(e.variables.items()))
    title = (
        f"{e.product.id} at {e.size:g} {e.product.size_unit}: {edition.label}"
        f" (from {edition.from_date})" + (f", {variables}" if variables else "")
    )
    document: dict[str, object] = {
        "product": e.product.id,
        "size": e.size,
        "size_unit": e.product.size_unit,
        "edition": edition.label,
        "edition_from": edition.from_date,
        "provisioned": e.variables,
        "iops": e.iops,
        "throughput": e.throughput_value,
        "throughput_unit": e.throughput_unit,
        "throughput_bytes_per_s": e.throughput_bytes_per_s,
        "burst_iops": e.burst_iops,
        "burst_seconds": e.burst_seconds,
        "burst_throughput": e.burst_throughput_value,
        "burst_throughput_seconds": e.burst_throughput_seconds,
        "read_iops": e.read_iops,
        "write_iops": e.write_iops,
        "latency_max_ms": e.latency.max_ms if e.latency else None,
        "prices": documents(prices),
        "figures": documents(rows),
    }
    when = f"as of {e.as_of}" if e.as_of else "today"
    notes: tuple[str, ...] = (f"every figure is the one in force {when}",)
    if e.latency is None and edition.latency is not None:
        notes += (f"latency: not known at {e.as_of} (first stated {edition.latency.from_date})",)
    if not prices and cost(e.product, e.size, 1.0, e.variables):
        notes += (f"price: not known at {e.as_of} (the catalogue's prices are later)",)
    elif not prices:
        notes += (
            f"price: the catalogue has none for {e.product.id} at {e.size:g} {e.product.size_unit}",
        )
    document["notes"] = list(notes)
    return Sheet(title, columns, tuple(rows), document, notes)


def curve_sheet(expectations: list[Expectation]) -> Sheet:
    """Expected IOPS and throughput against size (the data of seed 000's chart)."""
    rows = tuple(
        CurveRow(
            product=e.product.id,
            size=e.size,
            size_unit=e.product.size_unit,
            edition_from=e.edition.from_date,
            iops=e.iops,
            throughput_mb_s=None
            if e.throughput_bytes_per_s is None
            else e.throughput_bytes_per_s / 1e6,
        )
        for e in expectations
    )
    columns = (
        Column("product", "product"),
        Column("size", "size", lambda v: f"{number(v):,.0f}", numeric=True),
        Column("size_unit", "unit"),
        Column("edition_from", "formula from"),
        Column("iops", "IOPS", fmt_count, numeric=True),
        Column("throughput_mb_s", "MB/s", lambda v: f"{number(v):,.1f}", numeric=True),
    )
    notes = ("throughput in MB/s (10^6 B/s), converted from MiB/s where the vendor uses it",)
    return Sheet("Expected performance by size", columns, rows, {"points": documents(rows)}, notes)
