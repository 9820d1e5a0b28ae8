"""Typed records to and from the JSON the store keeps (cattrs).

A run's settings, its planned workloads and each plan's options are frozen
dataclasses in volbench and JSON objects in the store and in bundles. One
converter turns them into JSON-ready data (tuples as lists; volbench's enums are
``StrEnum``, which JSON writes as their values) and back, checking every value
against the field's type. Keys a record does not know are left out, so runs stored
by an older volbench still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import cattrs

from volbench.errors import StoreError

T = TypeVar("T")

converter = cattrs.Converter(forbid_extra_keys=False, unstruct_collection_overrides={tuple: list})


def _exactly(kind: type[Any], *accepted: type[Any]) -> None:
    """Structure ``kind`` from JSON values of the ``accepted`` types only (cattrs
    would turn 5 into "5" and "no" into True)."""

    def check(value: Any, wanted: type[Any]) -> Any:  # wanted: kind or a subclass (an enum)
        if (isinstance(value, bool) and bool not in accepted) or not isinstance(value, accepted):
            raise ValueError(f"not {wanted.__name__}")
        return wanted(value)

    converter.register_structure_hook(kind, check)


_exactly(str, str)
_exactly(int, int)
_exactly(float, int, float)
_exactly(bool, bool)


class RecordError(StoreError):
    """A stored JSON record that does not fit its type (the store or a bundle was
    changed by something else than volbench): ``str()`` is one line naming ``what``
    and, in ``problem``, the value and where (``... @ $.planned[0].iodepth``)."""

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"{what}: {problem}")
        self.what = what
        self.problem = problem


def structure(value: Any, kind: type[T], what: str) -> T:
    """``value`` (JSON data) as a ``kind``; RecordError naming ``what`` when it does not fit."""
    try:
        return converter.structure(value, kind)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as error:
        found = (
            cattrs.transform_error(error)
            if isinstance(error, cattrs.BaseValidationError)
            else [str(error)]
        )
        raise RecordError(what, found[0] if found else "does not fit its type") from None


def section(options: Mapping[str, Any], key: str, kind: type[T]) -> T | None:
    """The record stored under ``key`` of a plan's options (``settings.options``) as a
    ``kind`` (None: none stored); RecordError when it does not fit."""
    value = options.get(key)
    return None if value is None else structure(value, kind, f"settings.{key}")


def unstructure(value: Any) -> Any:
    """``value`` as JSON-ready data (every field, defaults too: a later volbench may
    change a default, and a stored record must still say what ran)."""
    return converter.unstructure(value)


def json_object(value: Any) -> dict[str, Any]:
    """``value`` (a dataclass) as a JSON object."""
    data = unstructure(value)
    if not isinstance(data, Mapping):
        raise TypeError(f"{type(value).__name__} is not a record")
    return dict(data)
