"""One object of fio's JSON output, read with the types fio writes, and where it is.

fio's json.c writes counters as C ``long long`` (``%lld``) and rates, means and
percentages as C doubles (``%f``); every figure volbench reads is a count or a rate,
never negative (fio stat.c prints unsigned counters and ratios of them). A field that
is missing reads as its default, so outputs of older fio versions (no ``total_ios``,
no ``N``) still parse; a field that is present with the wrong type or a negative
value is refused with a :class:`ParseError` naming its JSON path. Range and
finiteness of every number were already checked by :mod:`volbench.fio.document`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from volbench.errors import ParseError
from volbench.fio.document import path
from volbench.store.limits import OPTION_CHARS


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "a whole number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def shown(value: float) -> str:
    """A number for a one-line message (long ones shortened)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{value:.6g}"


class Fields:
    """A JSON object of fio's output and its place (``trail``, see
    :func:`volbench.fio.document.path`)."""

    def __init__(self, obj: Mapping[str, Any], trail: Any = None) -> None:
        self._obj = obj
        self._trail = trail

    def at(self, key: str | int) -> str:
        """The JSON path of ``key`` in this object (for messages)."""
        return path((self._trail, key))

    def has(self, key: str) -> bool:
        return key in self._obj

    def raw(self, key: str) -> Any:
        return self._obj.get(key)

    def _wrong(self, key: str, want: str) -> ParseError:
        return ParseError(f"{_kind(self._obj[key])} where fio writes {want}", self.at(key))

    def count(self, key: str, default: int = 0) -> int:
        """A counter (fio ``%lld`` of an unsigned value): a whole number >= 0."""
        value = self._obj.get(key)
        if value is None and key not in self._obj:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(key, "a whole number")
        if value < 0:
            raise ParseError(f"negative count {value} (fio counts from 0)", self.at(key))
        return value

    def number(self, key: str, default: float = 0.0, *, limit: float | None = None) -> float:
        """A rate, mean or percentage (fio ``%f``, or ``%lld`` in older versions):
        finite, >= 0 and, with ``limit``, at most that."""
        value = self._obj.get(key)
        if value is None and key not in self._obj:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._wrong(key, "a number")
        if value < 0:
            raise ParseError(f"negative value {shown(value)} (fio writes none)", self.at(key))
        if limit is not None and value > limit:
            raise ParseError(
                f"{shown(value)} is more than fio can produce ({shown(limit)})", self.at(key)
            )
        return float(value)

    def text(self, key: str, limit: int = OPTION_CHARS) -> str | None:
        """A string field of at most ``limit`` characters (default: what volbench keeps
        of any text fio prints, :data:`~volbench.store.limits.OPTION_CHARS`); None when
        missing."""
        value = self._obj.get(key)
        if value is None and key not in self._obj:
            return None
        if not isinstance(value, str):
            raise self._wrong(key, "a string")
        if len(value) > limit:
            raise ParseError(
                f"a string of {len(value):,} characters, more than volbench keeps ({limit:,})",
                self.at(key),
            )
        return value

    def child(self, key: str) -> Fields | None:
        """A nested object; None when missing."""
        value = self._obj.get(key)
        if value is None and key not in self._obj:
            return None
        if not isinstance(value, dict):
            raise self._wrong(key, "an object")
        return Fields(value, (self._trail, key))

    def children(self, key: str) -> list[Fields]:
        """A list of objects (``jobs``, ``disk_util``); empty when missing."""
        value = self._obj.get(key)
        if value is None and key not in self._obj:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "a list")
        trail = (self._trail, key)
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise ParseError(f"{_kind(item)} where fio writes an object", path((trail, index)))
        return [Fields(item, (trail, index)) for index, item in enumerate(value)]

    def strings(self, key: str) -> dict[str, str]:
        """An object of strings (``job options``, :meth:`options`); empty when missing."""
        fields = self.child(key)
        return {} if fields is None else fields.options()

    def options(self, skip: Collection[str] = ()) -> dict[str, str]:
        """This object's fields but ``skip`` as fio options: strings, each name and value
        of at most :data:`~volbench.store.limits.OPTION_CHARS` characters (fio reads job
        files in lines of at most that, parse.h ``OPT_LEN_MAX``); a longer one (only a
        command line can give it) is left out, as not stated."""
        found = {}
        for name, value in self._obj.items():
            if name in skip:
                continue
            if not isinstance(value, str):
                raise self._wrong(name, "a string")
            if len(name) <= OPTION_CHARS and len(value) <= OPTION_CHARS:
                found[name] = value
        return found

    def items(self) -> list[tuple[str, Any]]:
        return list(self._obj.items())
