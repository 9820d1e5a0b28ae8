"""Typed rows of sheets: each sheet's row is a frozen dataclass of its own.

A :class:`Row` is read by its fields where the type is known (``row.iops``), and by
its column keys where it is not: a sheet's columns, the CSV exporter and the JSON
documents read every row the same way, as the mapping of its fields in declared
order (``row["iops"]``, ``dict(row)``). A field is written to JSON and CSV as it is
stored; the numbers are in base units (bytes/s, ns) unless the field's name says.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import fields
from typing import ClassVar, TypeVar

R = TypeVar("R", bound="Row")

_KEYS: dict[type[Row], tuple[str, ...]] = {}
"""Each kind of row's keys, read once from its fields."""


class Row(Mapping[str, object]):
    """The base of a sheet's typed rows (each a frozen dataclass): its fields, in
    declared order, are the row's keys; ``hidden`` fields are the record's own and
    not part of the row (e.g. the stored result a result row is read from)."""

    hidden: ClassVar[frozenset[str]] = frozenset()

    def keys_of(self) -> tuple[str, ...]:
        """The row's keys, in the order JSON and CSV write them."""
        keys = _KEYS.get(type(self))
        if keys is None:
            names = (f.name for f in fields(self))  # type: ignore[arg-type]
            keys = _KEYS[type(self)] = tuple(n for n in names if n not in self.hidden)
        return keys

    def __getitem__(self, key: str) -> object:
        if key not in self.keys_of():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_of())

    def __len__(self) -> int:
        return len(self.keys_of())

    def document(self) -> dict[str, object]:
        """The row as JSON writes it: its keys and values, in order."""
        return {key: self[key] for key in self.keys_of()}


def documents(rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Rows as the JSON document lists them: each a plain dict, keys in order."""
    return [dict(row) for row in rows]


def rows_of(rows: Sequence[Mapping[str, object]], kind: type[R]) -> tuple[R, ...]:
    """A sheet's rows read back as the records its builder made (``kind``)."""
    typed = tuple(row for row in rows if isinstance(row, kind))
    if len(typed) != len(rows):
        raise TypeError(f"a sheet's rows are not all {kind.__name__}")
    return typed


def number(value: object) -> float:
    """A row's numeric value as a float (an int, a float, or a number's text)."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def optional_number(value: object) -> float | None:
    """:func:`number`, None kept."""
    return None if value is None else number(value)
