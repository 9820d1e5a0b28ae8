"""Seed 000's chart: vendors' expected IOPS and throughput against disk size."""

from __future__ import annotations

from volbench.report.chart import Chart, Series, line_chart
from volbench.report.document import Document, Section
from volbench.report.sheet import Sheet


def curve_charts(sheet: Sheet) -> list[Chart]:
    """Expected IOPS and MB/s vs size, a line per product (the curve sheet's rows)."""
    products: dict[str, list[dict[str, object]]] = {}
    for row in sheet.rows:
        products.setdefault(str(row["product"]), []).append(dict(row))
    units = sorted({str(r["size_unit"]) for r in sheet.rows}) or ["GiB"]
    unit = units[0] if len(units) == 1 else " or ".join(units) + ", each product's own"
    charts = []
    for key, title, y_title in (
        ("iops", "Expected IOPS by size", "IOPS"),
        ("throughput_mb_s", "Expected throughput by size", "MB/s"),
    ):
        series = [
            Series(name, [r["size"] for r in rows], [r[key] for r in rows])  # type: ignore[misc]
            for name, rows in products.items()
            if any(r[key] is not None for r in rows)
        ]
        if series:
            charts.append(
                line_chart(
                    f"spec-{key}",
                    title,
                    series,
                    x_title=f"Size ({unit})",
                    y_title=y_title,
                    unit=y_title,
                    markers=None,
                )
            )
    return charts


def curve_document(sheet: Sheet, products: list[str]) -> Document:
    section = Section(
        "Expected performance by size", charts=tuple(curve_charts(sheet)), sheets=(sheet,)
    )
    return Document(
        title="volbench: vendors' promised performance by size",
        subtitle="products: " + ", ".join(products),
        sections=(section,),
    )
