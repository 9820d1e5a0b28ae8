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
    """The base of a sheet's typed rows (each a frozen dataclass, ``eq=False``: a row
    equals any mapping of the same keys and values, a plain dict too): its fields, in
    declared order, are the row's keys; ``hidden`` fields are the record's own and
    not part of the row (e.g. the stored result a result row is read from)."""

    hidden: ClassVar[frozenset[str]] = frozenset()
    extends: ClassVar[str | None] = None
    """The field holding the row this one extends (its keys first, then this row's
    own; a key of both is this row's, at the first place), None for none."""
    optional: ClassVar[frozenset[str]] = frozenset()
    """Fields that are not keys of the row while None (figures a row has only when
    measured, e.g. fio's IOPS samples)."""
    renamed: ClassVar[Mapping[str, str]] = {}
    """Fields whose key is another name (``from_date`` as ``from``, a Python keyword;
    ``round_values`` as ``values``: a field never takes a mapping's method names, keys,
    values, items, get)."""

    def keys_of(self) -> tuple[str, ...]:
        """The row's keys, in the order JSON and CSV write them."""
        keys = _KEYS.get(type(self))
        if keys is None:
            names = [f.name for f in fields(self)]  # type: ignore[arg-type]
            own = [self.renamed.get(n, n) for n in names if n not in self.hidden | {self.extends}]
            base = self._base()
            keys = tuple(dict.fromkeys([*(base.keys_of() if base else ()), *own]))
            _KEYS[type(self)] = keys
        if self.optional:
            return tuple(k for k in keys if k not in self.optional or self._own(k) is not None)
        return keys

    def _base(self) -> Row | None:
        base = getattr(self, self.extends) if self.extends else None
        if base is not None and not isinstance(base, Row):
            raise TypeError(f"{type(self).__name__}.{self.extends} is not a Row")
        return base

    def _own(self, key: str) -> object:
        name = next((f for f, k in self.renamed.items() if k == key), key)
        return getattr(self, name)

    def __getitem__(self, key: str) -> object:
        if key not in self.keys_of():
            raise KeyError(key)
        base = self._base()
        if base is not None and key in base.keys_of() and key not in self._names():
            return base[key]
        return self._own(key)

    def _names(self) -> frozenset[str]:
        """The keys of this row's own fields."""
        own = self.__dataclass_fields__  # type: ignore[attr-defined]
        return frozenset(self.renamed.get(n, n) for n in own if n not in self.hidden)

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
