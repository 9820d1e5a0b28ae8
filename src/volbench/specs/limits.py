"""What a vendor lets you provision at a date: size range, IOPS and throughput bounds.

A product's formulas clamp (``min(provisioned_iops, 500 * size, 16000)``) so
they always give a figure; the vendor itself refuses a volume outside its
limits. Each edition of ``catalogue.json`` may carry ``limits``: one entry per
variable (``size`` in the product's unit, ``provisioned_iops``,
``provisioned_mb_s`` in the product's throughput unit, ``extra_performance``),
with a ``min`` and/or ``max`` (a number or a formula of ``size`` and the other
provisioned variables, evaluated by :mod:`volbench.specs.formula`) and/or
``size_above`` (the variable may only be given on volumes larger than that,
Tencent's extra performance above 460 GiB, src T7), quoted from its source.

E.g. AWS gp3 (src A2, A19, A20): 2023, 3,000 <= IOPS <= min(500 x GiB, 16,000);
from 2025-09-26, min(500 x GiB, 80,000), throughput <= min(0.25 x IOPS, 2,000)
MiB/s and sizes up to 65,536 GiB. :func:`check` refuses a value outside them in
one line naming the limit, the edition and the source.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volbench.errors import UsageError
from volbench.specs import formula

VARIABLES = ("size", "provisioned_iops", "provisioned_mb_s", "extra_performance")
"""The variables a limit may bound."""

OPTIONS = {
    "size": "--size",
    "provisioned_iops": "--provisioned-iops",
    "provisioned_mb_s": "--provisioned-mbps",
    "extra_performance": "--extra-performance",
}


@dataclass(frozen=True)
class Limit:
    """Bounds on one variable: ``low <= value <= high`` (formulas or numbers as
    text), given only above ``size_above``; ``defaults`` stand in for
    provisioned variables not given (gp3: 3,000 IOPS)."""

    variable: str
    low: str | None
    high: str | None
    size_above: float | None
    quote: str
    status: str
    sources: tuple[str, ...]
    defaults: Mapping[str, float] = field(default_factory=dict)


def parse_limit(data: Mapping[str, Any]) -> Limit:
    """One entry of an edition's ``limits`` (schema in CATALOGUE.md)."""
    quote = data["quote"]

    def bound(key: str) -> str | None:
        value = data.get(key)
        return None if value is None else value if isinstance(value, str) else f"{value:g}"

    return Limit(
        variable=data["variable"],
        low=bound("min"),
        high=bound("max"),
        size_above=None if data.get("size_above") is None else float(data["size_above"]),
        quote=quote if isinstance(quote, str) else " | ".join(quote),
        status=data["st"],
        sources=tuple(data["src"]),
        defaults={k: float(v) for k, v in data.get("default", {}).items()},
    )


@dataclass(frozen=True)
class Subject:
    """What is being checked: the product's id and units, the edition's date
    and label, and the date asked for (None: today)."""

    product_id: str
    size_unit: str
    throughput_unit: str
    edition_from: str
    edition_label: str
    as_of: str | None


def _unit(variable: str, subject: Subject) -> str:
    return {
        "size": subject.size_unit,
        "provisioned_iops": "IOPS",
        "provisioned_mb_s": subject.throughput_unit or "MB/s",
        "extra_performance": "MB/s",
    }[variable]


def _number(value: float) -> str:
    """``16,000`` or ``0.25`` (any float, also one that is not finite)."""
    return f"{value:,.0f}" if math.isfinite(value) and value == int(value) else f"{value:,.6g}"


def _value(text: str, values: Mapping[str, float]) -> float:
    return formula.evaluate(text, values)


def _where(limit: Limit, subject: Subject) -> str:
    when = f"as of {subject.as_of}" if subject.as_of else "today"
    quoted = f"{limit.quote!r} " if limit.quote else ""  # the user's own limit quotes none
    return (
        f"{subject.product_id} {when} (formulas {subject.edition_label!r}, from"
        f" {subject.edition_from}): {quoted}[{limit.status} {', '.join(limit.sources)}]"
    )


def check(
    limits: Sequence[Limit], subject: Subject, size: float, given: Mapping[str, float]
) -> None:
    """A :class:`UsageError` (one line: value, limit, edition, quote, source)
    when ``size`` or a provisioned value in ``given`` is outside ``limits``."""
    for limit in limits:
        value = size if limit.variable == "size" else given.get(limit.variable)
        if value is None:
            continue
        option = OPTIONS.get(limit.variable, limit.variable)
        unit = _unit(limit.variable, subject)
        if limit.size_above is not None and value and size <= limit.size_above:
            raise UsageError(
                f"{option} {_number(value)} is not allowed at {size:g} {subject.size_unit}:"
                f" only above {limit.size_above:g} {subject.size_unit}"
                f" for {_where(limit, subject)}"
            )
        values = {**limit.defaults, **given, "size": size}
        for text, above in ((limit.high, True), (limit.low, False)):
            if text is None:
                continue
            bound = _value(text, values)
            if (value > bound + 1e-9) if above else (value < bound - 1e-9):
                side = "above the most" if above else "below the least"
                shown = text if text.replace(".", "").isdigit() else f"{text} = {_number(bound)}"
                at = "" if limit.variable == "size" else f" at {size:g} {subject.size_unit}"
                raise UsageError(
                    f"{option} {_number(value)} {unit} is {side} allowed{at},"
                    f" {shown} {unit}, for {_where(limit, subject)}"
                )


def size_range(limits: Sequence[Limit], low: float, high: float) -> tuple[float, float]:
    """The size range an edition allows: its ``size`` limit (numbers only) within
    the product's ``low``-``high`` (``high`` may be inf)."""
    for limit in limits:
        if limit.variable != "size":
            continue
        if limit.low is not None:
            low = max(low, _value(limit.low, {}))
        if limit.high is not None:
            high = min(high, _value(limit.high, {}))
    return low, high
