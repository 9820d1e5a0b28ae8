"""Sheets: what a command shows, before it is rendered to a format.

A Sheet holds raw rows (numbers in base units: bytes/s, ns), the columns a
person sees (header + formatter), footnotes, and the JSON document that
``--format json`` writes. Exporters turn a Sheet into bytes; the terminal table
is rendered from the same columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volbench.report.rows import number
from volbench.visible_text import visible

Formatter = Callable[[Any], str]
"""A cell's text from its value (the value a row holds under the column's key)."""


@dataclass(frozen=True)
class Column:
    """One column a person sees: ``row[key]`` through ``format``; ``shown``, when
    given, picks the value shown from the whole row instead (the row itself, which
    JSON and CSV write, keeps the stored value)."""

    key: str
    header: str
    format: Formatter = str
    numeric: bool = False
    shown: Callable[[Mapping[str, object]], object] | None = None

    def value(self, row: Mapping[str, object]) -> object:
        return self.shown(row) if self.shown is not None else row.get(self.key)


@dataclass(frozen=True)
class Sheet:
    """A table: its rows (typed rows, :class:`volbench.report.rows.Row`, or plain
    mappings), the columns shown of them and the JSON document that stands for it.

    ``row_tests``: the stored tests each row's figures rest on, by row, each named as the
    run stores it (a row of a test's own names it under ``"test"`` and needs none; a row
    of a plan's own sheet, an access spec at a worker count, a zone, a tenant, a fitted
    cap, names them here): whether those figures are the volume's is read from them
    (:func:`volbench.report.validity_sheets.with_marks`). Empty: every row names its own
    test, or none."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, Any], ...]
    document: Mapping[str, Any]
    notes: tuple[str, ...] = ()
    flagged_rows: frozenset[int] = field(default_factory=frozenset)
    row_tests: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.row_tests and len(self.row_tests) != len(self.rows):
            raise ValueError(
                f"{self.title}: {len(self.row_tests)} rows' tests for {len(self.rows)} rows"
            )

    def cells(self) -> list[list[str]]:
        """The human-readable cells, row by row, each one line with its control
        characters shown as escapes (:func:`volbench.visible_text.visible`: a job name
        from a file is printed, never obeyed)."""
        return [
            [
                visible(c.format(c.value(row))) if c.value(row) is not None else "-"
                for c in self.columns
            ]
            for row in self.rows
        ]


def fmt_count(value: object) -> str:
    """An I/O rate or count with thousands separators: 103812.4 -> ``103,812``."""
    return f"{number(value):,.0f}"


def fmt_rate(value: object) -> str:
    """A bandwidth already in MB/s or MiB/s, to 1 decimal."""
    return f"{number(value):,.1f}"


def fmt_latency(value: object) -> str:
    """A latency in ns as µs below 1 ms, ms below 10 s, else s."""
    ns = number(value)
    if ns < 1e6:
        return f"{ns / 1e3:,.1f} µs"
    if ns < 1e10:
        return f"{ns / 1e6:,.2f} ms"
    return f"{ns / 1e9:,.1f} s"


def fmt_duration(value: object) -> str:
    """A run's length in s: ``3725`` -> ``1 h 02 min``, ``95`` -> ``1 min 35 s``,
    ``7.24`` -> ``7.2 s``."""
    seconds = number(value)
    if seconds < 60:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def fmt_labels(value: object) -> str:
    if isinstance(value, Mapping):
        return " ".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value)
