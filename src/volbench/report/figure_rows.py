"""Catalogue figures as sheet rows: formulas, tiers and burst ceilings with their sources.

Shared by the sheets of ``volbench spec show`` and ``spec expect``
(:mod:`volbench.report.spec_sheets`): every row keeps the figure's status and
source ids so each number traces back to its source document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from volbench.report.rows import Row
from volbench.specs.catalogue import Burst, Figure
from volbench.specs.expectation import Expectation

AddRow = Callable[[str, float | None, str, str, str, str], None]
"""Adds one row (metric, value, unit, basis, status, sources) to a sheet."""


def figure_text(figure: Figure) -> str:
    if figure.expr is not None:
        return figure.expr
    return ", ".join(f"<={s:g}: {v:g}" for s, v in figure.tiers)


def figure_basis(figure: Figure, size: float) -> str:
    """The formula, or the one tier a size falls in (rounded up to the next tier)."""
    for tier_size, value in figure.tiers:
        if size <= tier_size:
            return f"tier up to {tier_size:g}: {value:g} (size rounded up to the next tier)"
    return figure_text(figure)


@dataclass(frozen=True, eq=False)
class EditionRow(Row):
    """One dated figure of a product (a formula, tier list, limit, burst or price) as
    the catalogue states it: from when, its text and unit, status and source ids."""

    from_date: str
    edition: str
    metric: str
    value: str
    unit: str
    status: str
    sources: str
    quote: str

    renamed: ClassVar[Mapping[str, str]] = {"from_date": "from"}


def burst_rows(from_date: str, label: str, burst: Burst) -> list[EditionRow]:
    """The burst ceilings and bucket of one edition, each with its own source."""
    rows = []
    limits = [f"up to {burst.up_to_size:g}"] if burst.up_to_size is not None else []
    limits += [f"at most {burst.max_minutes:g} min"] if burst.max_minutes is not None else []
    extra = f" ({', '.join(limits)})" if limits else ""
    for metric, figure in (
        ("burst IOPS", burst.iops),
        ("burst throughput", burst.throughput),
        ("burst bucket", burst.throughput_bucket),
    ):
        if figure is None:
            continue
        unit = figure.unit or "IOPS"
        if metric == "burst bucket":
            unit = f"{figure.unit} (throughput unit x s)"
        rows.append(
            EditionRow(
                from_date,
                label,
                metric,
                figure_text(figure) + extra,
                unit,
                figure.status,
                ", ".join(figure.sources),
                figure.quote,
            )
        )
    if burst.bucket_credits is not None:
        rows.append(
            EditionRow(
                from_date,
                label,
                "burst bucket",
                f"{burst.bucket_credits:,.0f}",
                "I/O credits",
                burst.status,
                ", ".join(burst.sources),
                burst.quote,
            )
        )
    return rows


def add_burst_rows(add: AddRow, e: Expectation, b: Burst) -> None:
    """Rows of the burst ceilings at this size and how long a full bucket lasts."""
    src = ", ".join(b.sources)
    longest = f", at most {b.max_minutes:g} min" if b.max_minutes is not None else ""
    if e.burst_iops is not None and b.iops is not None:
        f = b.iops
        add(
            "burst IOPS",
            e.burst_iops,
            "IOPS",
            figure_basis(f, e.size),
            f.status,
            ", ".join(f.sources),
        )
        if e.burst_seconds is not None:
            if b.bucket_credits is not None:
                basis = f"{b.bucket_credits:,.0f} credits / ({e.burst_iops:g} - {e.iops or 0:g})"
            else:
                basis = b.quote
            add("burst duration", e.burst_seconds, "s", basis + longest, "D", src)
    if e.burst_throughput_value is not None and b.throughput is not None:
        f = b.throughput
        srcs = ", ".join(f.sources)
        unit = e.throughput_unit
        add(
            "burst throughput",
            e.burst_throughput_value,
            unit,
            figure_basis(f, e.size),
            f.status,
            srcs,
        )
        seconds = e.burst_throughput_seconds
        if seconds is not None:
            if b.throughput_bucket is not None:
                basis = (
                    f"bucket {b.throughput_bucket.expr} {unit.split('/')[0]} /"
                    f" ({e.burst_throughput_value:g} - {e.throughput_value or 0:g} {unit})"
                )
            else:
                basis = b.quote
            add("burst throughput duration", seconds, "s", basis + longest, "D", srcs)
