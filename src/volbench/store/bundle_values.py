"""The values of a bundle checked one by one: text, numbers in a store column's
range, times, run ids, JSON objects, each failing with a :class:`BundleError` that
names the file, the JSON path and what to do (:mod:`volbench.store.bundle_reader`
builds the records from them).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any, NoReturn, TypeVar

from volbench.errors import UsageError
from volbench.records import RecordError
from volbench.store import rows
from volbench.store.limits import TEXT_CHARS, order_problem, stored_time_problem, too_long

T = TypeVar("T")

AGAIN = "export the runs again with `volbench export RUN... -o FILE.vbundle`"
_DAMAGED = f"the bundle is damaged or was changed after volbench wrote it: {AGAIN}"
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1
"""The largest values a bundle's integers may take (the store's SQL integer columns)."""
_MAX_NESTING = 64


class BundleError(UsageError):
    """A file that cannot be imported as a bundle (exit 2), in one line."""


class ValueReader:
    """Checks a bundle's values one by one, failing with where and what."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, where: str, problem: str) -> NoReturn:
        where = where if len(where) <= 100 else where[:97] + "..."
        raise BundleError(f"cannot import {self.name}: {where or 'it'} {problem}")

    def damaged(self, where: str, problem: str) -> NoReturn:
        """Fail on a value volbench cannot have written (the bundle was changed)."""
        self.fail(where, f"{problem} ({_DAMAGED})")

    # -- one run

    def known_round(self, number: int, at: str, rounds: Collection[int]) -> None:
        if number not in rounds:
            self.damaged(at, f"is {number}, a round the run's rounds do not hold")

    def keys(
        self, item: Mapping[str, Any], at: str, required: set[str], optional: set[str]
    ) -> None:
        missing = sorted(required - set(item))
        if missing:
            self.damaged(f"{at}.{missing[0]}".lstrip("."), "is missing")
        unknown = sorted(set(item) - required - optional)
        if unknown:
            self.damaged(
                f"{at}.{unknown[0]}".lstrip("."), "is not a field of a bundle of its version"
            )

    def mapping(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.damaged(at, f"is {kind(value)}, not an object")
        return value

    def items(self, item: Mapping[str, Any], key: str, at: str) -> list[Any]:
        value = item.get(key, [])
        if not isinstance(value, list):
            self.damaged(f"{at}.{key}" if at else key, f"is {kind(value)}, not a list")
        return value

    def json_object(self, value: Any, at: str) -> dict[str, Any]:
        """A JSON object stored as it is (target, host, settings, a workload): its
        strings storable, its numbers finite, a few levels deep."""
        found = self.mapping(value, at)
        stack: list[tuple[Any, str, int]] = [(found, at, 1)]
        while stack:
            item, where, depth = stack.pop()
            if isinstance(item, dict | list) and depth > _MAX_NESTING:
                self.damaged(where, f"nests more than {_MAX_NESTING} levels deep")
            if isinstance(item, dict):
                for key, inner in item.items():
                    self._storable(key, f"{where} (a key)")
                    self._within(key, f"{where} (a key)", TEXT_CHARS)
                    stack.append((inner, f"{where}.{key}", depth + 1))
            elif isinstance(item, list):
                stack += [(inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(item)]
            elif isinstance(item, str):
                self._storable(item, where)
                self._within(item, where, TEXT_CHARS)
            elif isinstance(item, float) and not math.isfinite(item):
                self.damaged(where, "is a number beyond what JSON can hold")
            elif type(item) is int and not -INT64_MAX - 1 <= item <= INT64_MAX:
                self.damaged(where, f"{shown(item)} is beyond a 64-bit integer")
        return found

    def typed(self, value: Any, at: str, read: Callable[[dict[str, Any], str], T]) -> T:
        """A run's target, host or settings: a JSON object whose values fit their types."""
        found = self.json_object(value, at)
        try:
            return read(found, at)
        except RecordError as error:
            self.damaged(at, error.problem)

    def text(self, value: Any, at: str, limit: int | None = None, empty: bool = True) -> str:
        if not isinstance(value, str):
            self.damaged(at, f"is {kind(value)}, not text")
        if limit is not None:
            self._within(value, at, limit)
        if not empty and not value:
            self.damaged(at, "is empty")
        return self._storable(value, at)

    def _within(self, value: str, at: str, limit: int) -> None:
        """Refuse a text longer than the store keeps (:mod:`volbench.store.limits`):
        volbench writes none (it refuses them at the input), so the bundle was changed."""
        problem = too_long(value, limit)
        if problem:
            self.damaged(at, problem)

    def _storable(self, value: str, at: str) -> str:
        if "\x00" in value:
            self.damaged(at, "holds a NUL character, which no store keeps")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.damaged(at, "holds a lone UTF-16 surrogate, which is not text")
        return value

    def integer(self, value: Any, at: str, low: int, high: int) -> int:
        if type(value) is not int:
            self.damaged(at, f"is {kind(value)}, not a whole number")
        if not low <= value <= high:
            self.damaged(at, f"{shown(value)} is not between {low} and {high}")
        return value

    def number(self, value: Any, at: str) -> float:
        if type(value) is int:
            if abs(value) > INT64_MAX:
                self.damaged(at, f"{shown(value)} is beyond the numbers a store keeps")
            return float(value)
        if type(value) is not float:
            self.damaged(at, f"is {kind(value)}, not a number")
        if not math.isfinite(value):
            self.damaged(at, "is a number beyond what JSON can hold")
        return value

    def boolean(self, value: Any, at: str) -> bool:
        if type(value) is not bool:
            self.damaged(at, f"is {kind(value)}, not true or false")
        return value

    def time(self, value: Any, at: str) -> str:
        """An ISO 8601 time with a zone, as stored (UTC), within fio's lifetime."""
        text = self.text(value, at, 40)
        try:
            stored = rows.timestamp(text)
        except ValueError:
            self.damaged(at, f"is {shown(text)}, not an ISO 8601 time with a time zone")
        problem = stored_time_problem(stored)
        if problem:
            self.fail(
                at,
                f"{stored} {problem}: no fio ran then, and no store keeps it (a bundle"
                " changed, or a store's clock not set: give it the time the run had)",
            )
        return stored

    def in_order(self, started: str | None, ended: str | None, at: str) -> None:
        """Refuse a span (stored times) that ends before it starts."""
        problem = order_problem(started, ended)
        if problem:
            self.fail(
                at,
                f"says the span {problem}: no store keeps that (a bundle changed, or a run"
                " an older volbench imported so: give it an end from its start on)",
            )

    def run_uuid(self, value: Any, at: str) -> str:
        text = self.text(value, at, 36)
        try:
            canonical = str(uuid.UUID(text))
        except ValueError:
            canonical = ""
        if canonical != text:
            self.damaged(at, f"is {shown(text)}, not a UUID (8-4-4-4-12 lowercase hex digits)")
        return text

    def optional(self, value: Any, at: str, check: Callable[..., Any], *args: Any) -> Any:
        return None if value is None else check(value, at, *args)


def no_constant(name: str) -> NoReturn:
    """``json.loads``'s ``parse_constant``: NaN and infinities are not JSON."""
    raise ValueError(f"{name} is not a JSON number")


def kind(value: Any) -> str:
    """What a JSON value is, as a message says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return f"the number {shown(value)}"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def shown(value: Any) -> str:
    """A value as a message shows it: its JSON, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
