"""fio's JSON document: found in its stdout, decoded, and refused when fio cannot have
written it.

fio prints notes around its JSON ("note: both iodepth >= 1 and synchronous I/O engine
are selected ..."), so the document is the text from the first ``{`` to the last
``}`` (:func:`json_span`); positions in messages count from the start of the whole
text. Python's :mod:`json` decodes it, with hooks for what fio's json.c never prints:

* numbers: integers are C ``long long`` (fio json.h ``json_object_add_value_int``,
  printed with ``%lld``), so anything outside [-2^63, 2^63 - 1] is refused; floats
  are C doubles printed with ``%f`` (json.c ``json_print_value``), always finite, so
  ``NaN``, ``Infinity`` and literals that overflow a double (``1e400``) are refused;
* strings: fio's ``strdup_escape`` escapes only ``\\`` and ``"`` of C strings, so a
  decoded NUL (``\\u0000``) or an unpaired surrogate cannot come from fio;
* nesting: fio's deepest value is a latency bin (``jobs[0].read.clat_ns.bins.N``,
  depth 6); documents nested deeper than :data:`MAX_DEPTH` are refused before any
  recursion can overflow.
"""

from __future__ import annotations

import json
import math
from typing import Any

from volbench.errors import ParseError

LONG_LONG_MIN = -(2**63)
LONG_LONG_MAX = 2**63 - 1
"""Range of fio's JSON integers (C ``long long``, fio json.h)."""

MAX_DEPTH = 32
"""Deepest nesting accepted; fio's own output nests 6 deep."""

_MAX_INT_DIGITS = 20
"""Longer integer literals are beyond ``long long`` whatever their digits (and are not
converted: Python refuses int() of over 4,300 digits with a ValueError)."""


class _Refused:
    """A number decoded from the text that fio cannot have printed; found by the walk
    after decoding, which knows where it is."""

    def __init__(self, literal: str, why: str) -> None:
        self.literal = literal if len(literal) <= 24 else f"{literal[:20]}...({len(literal)} chars)"
        self.why = why


def _constant(name: str) -> _Refused:
    return _Refused(name, "not a finite number (fio prints C doubles with %f)")


def _float(literal: str) -> float | _Refused:
    value = float(literal)
    if math.isfinite(value):
        return value
    return _Refused(literal, "beyond a C double (fio prints finite doubles)")


def _int(literal: str) -> int | _Refused:
    if len(literal.lstrip("-")) <= _MAX_INT_DIGITS:
        value = int(literal)
        if LONG_LONG_MIN <= value <= LONG_LONG_MAX:
            return value
    return _Refused(literal, "beyond a 64-bit integer (fio prints C long long)")


def json_span(text: str) -> tuple[int, int]:
    """(start, end) of fio's JSON in ``text``: the first ``{`` to the last ``}``
    inclusive, as a slice; raises :class:`ParseError` when there is none."""
    start = text.find("{")
    if start < 0:
        head = " ".join(text.split())[:60]
        raise ParseError(f"fio output holds no JSON object (first 60 chars: {head!r})")
    end = text.rfind("}") + 1
    if end <= start:
        raise ParseError(f"the JSON ends early (after {_bytes(text, len(text))} bytes)")
    return start, end


def load(text: str) -> dict[str, Any]:
    """fio's JSON object in ``text``, decoded; :class:`ParseError` for anything fio
    cannot have printed (see the module docstring).

    Fast path first (a 20,000-job output is 90 MB): Python's decoder without number
    hooks, then one pass over the values that only says whether all is well
    (:func:`_plain`). Only a document it doubts (or that the decoder refuses) is
    decoded again with the hooks and walked with paths (:func:`_walk`), which names
    what is wrong and where."""
    start, end = json_span(text)
    body = text[start:end]
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return 0.0

    try:
        doc = json.loads(body, parse_constant=constant)
    except (json.JSONDecodeError, RecursionError):
        doc = None  # the careful decode below says where
    except ValueError:  # an integer literal of over 4,300 digits
        doc = None
    if isinstance(doc, dict) and not constants:
        strings = not (body.isascii() and "\\u" not in body)
        if _plain(doc, 0, strings):
            return doc
    return _careful(text, start, end)


def _careful(text: str, start: int, end: int) -> dict[str, Any]:
    """:func:`load` with every number checked as decoded and every value walked with
    its path: the first thing fio cannot have printed is a ParseError naming where."""
    try:
        doc = json.loads(
            text[start:end], parse_constant=_constant, parse_float=_float, parse_int=_int
        )
    except json.JSONDecodeError as exc:
        if exc.pos >= end - start or exc.msg.startswith("Unterminated string"):
            # the decoder wanted more text than there is: a truncated file
            raise ParseError(
                f"the JSON ends early (after {_bytes(text, len(text))} bytes)"
            ) from None
        raise ParseError(
            f"fio output is not valid JSON: {exc.msg}", _position(text, start + exc.pos)
        ) from None
    except RecursionError:
        raise ParseError(f"the JSON nests more than {MAX_DEPTH} levels deep") from None
    if not isinstance(doc, dict):
        raise ParseError("fio output is not a JSON object")
    _walk(doc)
    return doc


def _plain(container: dict[str, Any] | list[Any], depth: int, strings: bool) -> bool:
    """Whether ``container`` (decoded without hooks) holds only what fio prints: no
    nesting beyond MAX_DEPTH, integers of C ``long long``, finite floats and (with
    ``strings``: the text holds non-ASCII or ``\\u`` escapes) strings without NUL or
    lone surrogates. Recursion is bounded by MAX_DEPTH."""
    if depth >= MAX_DEPTH:
        return False
    if type(container) is dict:
        if strings and not all(_plain_string(key) for key in container):
            return False
        values: Any = container.values()
    else:
        values = container
    try:  # all numbers (json+ bins, percentiles) or all strings: checked at C speed
        low, high = min(values), max(values)
    except (TypeError, ValueError):  # of several kinds, or none
        low = high = None
    kind = type(low)
    if kind is str and type(high) is str:
        return not strings or all(_plain_string(value) for value in values)
    if kind in _NUMBERS and type(high) in _NUMBERS:
        # integers first: math.isfinite of one beyond a double raises OverflowError
        return LONG_LONG_MIN <= low <= high <= LONG_LONG_MAX or (
            _finite_ints(values) and math.isfinite(low) and math.isfinite(high)
        )
    for value in values:
        kind = type(value)
        if kind is dict or kind is list:
            if not _plain(value, depth + 1, strings):
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind is int:
            if not LONG_LONG_MIN <= value <= LONG_LONG_MAX:
                return False
        elif kind is str and strings and not _plain_string(value):
            return False
    return True


_NUMBERS = (int, float, bool)


def _finite_ints(values: Any) -> bool:
    """Whether the integers among finite numbers beyond [LONG_LONG_MIN, LONG_LONG_MAX]
    are none (a float may be that large, an integer may not)."""
    return all(type(v) is not int or LONG_LONG_MIN <= v <= LONG_LONG_MAX for v in values)


def _plain_string(value: str) -> bool:
    if value.isascii():
        return "\x00" not in value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


def _bytes(text: str, index: int) -> int:
    """UTF-8 length of ``text[:index]``: a character offset as a byte offset."""
    head = text[:index]
    return len(head) if head.isascii() else len(head.encode("utf-8", "surrogatepass"))


def _position(text: str, index: int) -> str:
    """``line L column C (byte B)`` of a character offset, from the start of ``text``."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line} column {column} (byte {_bytes(text, index)})"


def _walk(doc: dict[str, Any]) -> None:
    """Refuse refused numbers, strings fio cannot print and nesting beyond MAX_DEPTH,
    without recursion. Paths are built only for the value refused."""
    stack: list[tuple[Any, int, Any]] = [(doc, 0, None)]
    while stack:
        value, depth, trail = stack.pop()
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        elif isinstance(value, str):
            _check_string(value, trail)
            continue
        elif isinstance(value, _Refused):
            raise ParseError(f"{value.literal} is {value.why}", path(trail))
        else:
            continue
        if depth >= MAX_DEPTH:
            raise ParseError(f"the JSON nests more than {MAX_DEPTH} levels deep", path(trail))
        for key, item in items:
            if isinstance(key, str):
                _check_string(key, (trail, key))
            stack.append((item, depth + 1, (trail, key)))


def _check_string(value: str, trail: Any) -> None:
    if value.isascii() and "\x00" not in value:
        return
    if "\x00" in value:
        raise ParseError("a NUL character (fio prints C strings)", path(trail))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ParseError("an unpaired UTF-16 surrogate (fio prints none)", path(trail)) from None


def path(trail: Any) -> str:
    """A JSON path (``jobs[0].read.iops``) from a trail ``(parent_trail, key)``."""
    parts: list[str] = []
    while trail is not None:
        trail, key = trail
        parts.append(_step(key))
    text = "".join(reversed(parts)).lstrip(".")
    return text or "the top level"


def _step(key: str | int) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    if key.isidentifier() and key.isascii():
        return f".{key}"
    shown = key if len(key) <= 24 else f"{key[:20]}..."
    return f"[{json.dumps(shown)}]"
