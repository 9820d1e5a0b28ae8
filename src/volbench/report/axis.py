"""Axes a person reads: latency in the unit that fits, log axes with clean ticks.

A chart shows latency in µs, ms or s, whichever fits its largest value (a linear
axis of 0..300,000 µs reads as 0..300 ms). A log axis gets its ticks written out
here, each labelled in full: decades (1, 10, 100, 1k ... or 10 µs, 100 µs, 1 ms ...)
and, when the data span less than two decades, the 2 and 5 between them (200 µs,
500 µs): never plotly's bare minor labels "2" and "5". An axis of a few round
values (queue depths 1, 2, 4 ... 64; block sizes) is ticked at those values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeGuard

LATENCY_UNITS: dict[str, float] = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}
"""A latency unit's size in ns."""


def latency_unit(values_ns: Iterable[float | None]) -> tuple[str, float]:
    """The unit that fits the largest of ``values_ns`` and its size in ns: µs below
    1 ms, ms below 1 s, else s (µs when there is no value)."""
    top = max((float(v) for v in values_ns if v is not None), default=0.0)
    if top < 1e6:
        return "µs", 1e3
    if top < 1e9:
        return "ms", 1e6
    return "s", 1e9


def number_text(value: float) -> str:
    """A figure as a label: ``41190.5`` -> ``41,191``, ``288.93`` -> ``288.9``,
    ``0.0641`` -> ``0.0641``; no exponent."""
    size = abs(value)
    if size >= 1000 or value == 0:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:,.1f}"
    decimals = min(6, 2 - math.floor(math.log10(size)))
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def value_text(value: float, unit: str) -> str:
    """A plotted value with its unit (a latency in the unit that fits it)."""
    if unit in LATENCY_UNITS:
        return duration_text(value * LATENCY_UNITS[unit])
    return f"{number_text(value)} {unit}".rstrip()


def duration_text(ns: float) -> str:
    """A latency in ns in the unit that fits it: ``1550000`` -> ``1.55 ms``."""
    unit, size = latency_unit([abs(ns)])
    return f"{number_text(ns / size)} {unit}"


def _short(value: float) -> str:
    """A tick value in few characters: 1, 20, 500, 1k, 20k, 1M, 0.5, 0.01."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def tick_text(value: float, unit: str) -> str:
    """A log-axis tick's label: a latency with its unit (``500 µs``, ``2 ms``), a size
    in KiB in full (``1,024``: sizes are powers of two, never ``1.024k``), anything else
    short (``20k``)."""
    if unit == "KiB":
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"
    if unit in LATENCY_UNITS:
        ns = value * LATENCY_UNITS[unit]
        tick_unit, size = latency_unit([ns * 1.0001])
        return f"{_short(round(ns / size, 9))} {tick_unit}"
    return _short(value)


DATA_TICKS_AT_MOST = 12
"""A log axis of at most this many distinct values is ticked at each of them."""


def log_axis(
    values: Iterable[object], unit: str = "", *, at_values: bool = False
) -> dict[str, object]:
    """Plotly settings of a log axis over ``values``: ticks at decades (and at 2 and 5
    times them when the data span less than two decades), or at the values
    themselves (``at_values``, when there are few); each labelled in full."""
    present = sorted({float(v) for v in values if _positive(v)})
    settings: dict[str, object] = {"type": "log", "minor": {"showgrid": False, "ticks": ""}}
    if not present:
        return settings
    if at_values and len(present) <= DATA_TICKS_AT_MOST:
        ticks = present
    else:
        ticks = nice_ticks(present[0], present[-1])
    settings.update(tickmode="array", tickvals=ticks, ticktext=[tick_text(t, unit) for t in ticks])
    return settings


def nice_ticks(low: float, high: float) -> list[float]:
    """Round values from just below ``low`` to just above ``high`` (both > 0): decades,
    with 2 and 5 times them when the span is under two decades."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = (1,) if last - first > 2 else (1, 2, 5)
    ticks = [m * 10.0**e for e in range(first, last + 1) for m in steps]
    # one tick either side of the data, so the axis range shows a labelled end
    below = [t for t in ticks if t <= low]
    above = [t for t in ticks if t >= high]
    start = below[-1] if below else ticks[0]
    end = above[0] if above else ticks[-1]
    return [round(t, 12) for t in ticks if start <= t <= end]


def _positive(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def spans_decades(values: Sequence[float | None], ratio: float = 20.0) -> bool:
    """Whether the positive values span ``ratio`` or more (largest / smallest): then
    a log axis shows the small ones (QD 1 beside QD 64)."""
    present = [float(v) for v in values if v is not None and v > 0]
    return bool(present) and max(present) / min(present) >= ratio
