"""Checking a catalogue document field by field before anything uses it.

The user's catalogue files (:mod:`volbench.specs.user_catalogue`) are hostile
input: every field is type-checked here, numbers must be finite, strings and
lists are bounded, ids are plain names, dates are ISO, and every formula is
parsed by :mod:`volbench.specs.formula` (an ``ast`` whitelist, never
``eval``) and may name only the variables of its place (``size`` and the
provisioned variables; ``iops`` in throughput formulas; ``burst_iops`` in burst
throughput formulas). The first problem is a :class:`UsageError` of one line
naming the place: ``FILE: product ID: editions[0].iops.expr: ...``.

The schema is the built-in one (CATALOGUE.md); in a user's file ``api_name``,
``iops_io_bytes`` (4096), ``count_unit_bytes``, ``io_quote``, ``rw_limits``
(``unknown``), ``rw_quote``, ``latency`` and ``prices`` may be left out, and a
product may say ``override: true`` to replace a built-in product of that id.

The built-in catalogue must source every figure (``quote``, ``st``, ``src``) and
label every edition. A user describing their own array has nothing to quote: in a
user's file (:class:`Checker` given ``user_source``) the provenance fields may be
left out (``quote`` empty, ``st`` U for the user's own statement, ``src`` the user's
file, shown as "the user's catalogue, FILE" where a source would be), as may an
edition's ``label`` (its ``from`` date) and a latency's ``text``.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

from volbench.errors import UsageError
from volbench.specs import formula

MAX_TEXT = 4000
MAX_FORMULA = 300
MAX_ITEMS = 500
MAX_NUMBER = 1e15
"""The largest number a catalogue field may hold: far above any size, IOPS or price,
and small enough that a price x size x period stays finite."""
PROVISIONED = frozenset({"provisioned_iops", "provisioned_mb_s", "extra_performance"})
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}\Z")
SOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}\Z")
PER = ("GB-month", "GB-hour", "disk-month", "IOPS-month", "MBps-month", "million-requests")
PROVENANCE = ("quote", "st", "src")
STATUSES = ("V", "VM", "S", "R", "D")
"""Sources' statuses: vendor document, mirror, secondary, request only, derived."""
USER_STATUS = "U"
"""The status of a figure the user states in their own catalogue, unsourced."""


class Place:
    """Where a value sits in the document, for the one-line error."""

    def __init__(self, prefix: str, path: str = "") -> None:
        self.prefix = prefix
        self.path = path

    def at(self, key: str | int) -> Place:
        step = f"[{key}]" if isinstance(key, int) else (f".{key}" if self.path else key)
        return Place(self.prefix, self.path + step)

    def fail(self, problem: str) -> UsageError:
        return UsageError(f"{self.prefix}{self.path or 'document'}: {problem}")


def mapping(
    value: Any, place: Place, required: tuple[str, ...], optional: tuple[str, ...]
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise place.fail(f"must be a mapping, not {type(value).__name__}")
    unknown = sorted(str(k) for k in value if k not in required + optional)
    if unknown:
        raise place.fail(f"unknown field {unknown[0]!r} (known: {', '.join(required + optional)})")
    for key in required:
        if key not in value:
            raise place.fail(f"missing field {key!r}")
    return value


def text(value: Any, place: Place, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise place.fail(f"must be text, not {type(value).__name__}")
    if len(value) > limit:
        raise place.fail(f"longer than {limit} characters")
    return value


def number(value: Any, place: Place, positive: bool = False) -> float:
    """A finite number of at most :data:`MAX_NUMBER` (a bigger int is not converted)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise place.fail(f"must be a number, not {value!r}"[:200])
    if isinstance(value, int) and abs(value) > MAX_NUMBER:
        raise place.fail(f"must be a number up to {MAX_NUMBER:g}")
    if not math.isfinite(value) or abs(value) > MAX_NUMBER:
        raise place.fail(f"must be a number up to {MAX_NUMBER:g}, not {value!r}")
    if positive and value <= 0:
        raise place.fail(f"must be positive, not {value:g}")
    if value < 0:
        raise place.fail(f"must not be negative, not {value:g}")
    return float(value)


def date(value: Any, place: Place) -> str:
    if isinstance(value, datetime.date):
        return value.isoformat()
    try:
        return datetime.date.fromisoformat(text(value, place, 10)).isoformat()
    except ValueError:
        raise place.fail(f"must be a date YYYY-MM-DD, not {value!r}") from None


def items(value: Any, place: Place, limit: int = MAX_ITEMS) -> list[Any]:
    if not isinstance(value, list):
        raise place.fail(f"must be a list, not {type(value).__name__}")
    if len(value) > limit:
        raise place.fail(f"more than {limit} entries")
    return value


def choice(value: Any, place: Place, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise place.fail(f"must be one of {', '.join(allowed)}, not {value!r}"[:300])
    return str(value)


def expression(value: Any, place: Place, allowed: frozenset[str]) -> str | float:
    """A number, or a formula in the allowed grammar naming only ``allowed``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value, place)
    source = text(value, place, MAX_FORMULA)
    try:
        names = formula.variables(source)
    except UsageError as exc:
        raise place.fail(str(exc)) from None
    unknown = sorted(names - allowed)
    if unknown:
        raise place.fail(
            f"formula {source!r} names {unknown[0]!r}: use {', '.join(sorted(allowed))}"
        )
    return source


class Checker:
    """Checks one product's fields against the schema and the known sources.

    ``user_source``: the product is the user's (a catalogue file), and figures without
    provenance are the user's own statements, sourced to ``user_source``; None: the
    built-in catalogue, where every figure is quoted from a source."""

    def __init__(
        self, sources: Mapping[str, str], place: Place, user_source: str | None = None
    ) -> None:
        self.sources = sources
        self.place = place
        self.user_source = user_source

    def fields(
        self, required: tuple[str, ...], optional: tuple[str, ...]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The required and optional fields of a place that takes provenance: in a
        user's file the provenance fields are optional."""
        if self.user_source is None:
            return (*required, *PROVENANCE), optional
        return required, (*optional, *PROVENANCE)

    def provenance(self, data: dict[str, Any], place: Place) -> None:
        if self.user_source is not None:  # the user's own figure: their file is its source
            data.setdefault("quote", "")
            data.setdefault("st", USER_STATUS)
            data.setdefault("src", [self.user_source])
        quote = data["quote"]
        if isinstance(quote, list):
            for index, part in enumerate(items(quote, place.at("quote"), 20)):
                text(part, place.at("quote").at(index))
        else:
            text(quote, place.at("quote"))
        statuses = STATUSES if self.user_source is None else (*STATUSES, USER_STATUS)
        choice(data["st"], place.at("st"), statuses)
        for index, source in enumerate(items(data["src"], place.at("src"), 20)):
            if not isinstance(source, str) or not (
                source == self.user_source or source in self.sources
            ):
                raise (
                    place.at("src")
                    .at(index)
                    .fail(f"unknown source {source!r}: list it under sources")
                )

    def figure(self, value: Any, place: Place, allowed: frozenset[str]) -> None:
        data = mapping(value, place, *self.fields((), ("expr", "tiers", "unit", "default")))
        if ("expr" in data) == ("tiers" in data):
            raise place.fail("give either expr or tiers")
        if "expr" in data:
            data["expr"] = str(expression(data["expr"], place.at("expr"), allowed))
        for index, row in enumerate(items(data.get("tiers", []), place.at("tiers"))):
            pair = items(row, place.at("tiers").at(index), 2)
            if len(pair) != 2:
                raise place.at("tiers").at(index).fail("must be [size, value]")
            for side, part in enumerate(pair):
                number(part, place.at("tiers").at(index).at(side))
        if "unit" in data:
            choice(data["unit"], place.at("unit"), ("MB/s", "MiB/s", "MB", "MiB", ""))
        self.defaults(data.get("default", {}), place.at("default"))
        self.provenance(data, place)

    def defaults(self, value: Any, place: Place) -> None:
        data = mapping(value, place, (), tuple(sorted(PROVISIONED)))
        for key, part in data.items():
            number(part, place.at(key))

    def latency(self, value: Any, place: Place) -> None:
        """A stated latency; its ``text`` is its quote (the user's: "at most N ms")."""
        sourced = ("st", "src")
        if self.user_source is None:
            data = mapping(value, place, ("max_ms", "text", *sourced), ("min_ms", "from"))
        else:
            data = mapping(value, place, ("max_ms",), ("text", *sourced, "min_ms", "from"))
        maximum = number(data["max_ms"], place.at("max_ms"), positive=True)
        if data.get("min_ms") is not None:
            number(data["min_ms"], place.at("min_ms"))
        if "from" in data:
            data["from"] = date(data["from"], place.at("from"))
        data.setdefault("text", f"at most {maximum:g} ms")
        text(data["text"], place.at("text"))
        stated = {**data, "quote": data["text"]}
        self.provenance(stated, place)
        data.update(st=stated["st"], src=stated["src"])

    def limit(self, value: Any, place: Place) -> None:
        data = mapping(
            value, place, *self.fields(("variable",), ("min", "max", "size_above", "default"))
        )
        variable = choice(data["variable"], place.at("variable"), ("size", *sorted(PROVISIONED)))
        allowed = frozenset({"size"} | PROVISIONED) - {variable}
        for key in ("min", "max"):
            if key in data:
                data[key] = expression(data[key], place.at(key), allowed)
        if "size_above" in data:
            number(data["size_above"], place.at("size_above"))
        self.defaults(data.get("default", {}), place.at("default"))
        self.provenance(data, place)

    def burst(self, value: Any, place: Place) -> None:
        keys = ("iops", "throughput", "bucket_credits", "throughput_bucket", "max_minutes")
        data = mapping(value, place, *self.fields((), (*keys, "up_to_size")))
        base = frozenset({"size"} | PROVISIONED)
        if isinstance(data.get("iops"), dict):
            self.figure(data["iops"], place.at("iops"), base)
        elif "iops" in data:
            number(data["iops"], place.at("iops"))
        for key, extra in (
            ("throughput", {"iops", "burst_iops"}),
            ("throughput_bucket", {"iops", "burst_iops"}),
        ):
            if key in data:
                self.figure(data[key], place.at(key), base | extra)
        for key in ("bucket_credits", "max_minutes", "up_to_size"):
            if key in data:
                number(data[key], place.at(key))
        self.provenance(data, place)

    def edition(self, value: Any, place: Place) -> None:
        figures = ("iops", "read_iops", "write_iops", "throughput")
        optional = (*figures, "burst", "latency", "limits")
        if self.user_source is None:
            data = mapping(value, place, ("from", "label"), optional)
        else:  # the user's edition may go unnamed: its date names it
            data = mapping(value, place, ("from",), ("label", *optional))
        data["from"] = date(data["from"], place.at("from"))
        data.setdefault("label", data["from"])
        text(data["label"], place.at("label"), 200)
        base = frozenset({"size"} | PROVISIONED)
        for key in figures:
            if key in data:
                allowed = base | {"iops"} if key == "throughput" else base
                self.figure(data[key], place.at(key), allowed)
        if "burst" in data:
            self.burst(data["burst"], place.at("burst"))
        if "latency" in data:
            self.latency(data["latency"], place.at("latency"))
        for index, limit in enumerate(items(data.get("limits", []), place.at("limits"), 20)):
            self.limit(limit, place.at("limits").at(index))

    def price(self, value: Any, place: Place) -> None:
        optional = ("above", "to", "size_above", "size_to", "region", "date", "billing")
        data = mapping(value, place, *self.fields(("value", "currency", "per"), optional))
        number(data["value"], place.at("value"))
        text(data["currency"], place.at("currency"), 8)
        choice(data["per"], place.at("per"), PER)
        for key in ("above", "to", "size_above", "size_to"):
            if data.get(key) is not None:
                number(data[key], place.at(key))
        for key in ("region", "billing"):
            if key in data:
                text(data[key], place.at(key), 100)
        if "date" in data:
            data["date"] = (
                str(data["date"])
                if not isinstance(data["date"], datetime.date)
                else data["date"].isoformat()
            )
        self.provenance(data, place)

    def capacity(self, value: Any, place: Place) -> None:
        data = mapping(value, place, *self.fields(("min", "max"), ()))
        low = number(data["min"], place.at("min"))
        if data["max"] is not None and number(data["max"], place.at("max")) < low:
            raise place.at("max").fail(f"is below min {low:g}")
        self.provenance(data, place)


def product(
    value: Any, place: Place, sources: Mapping[str, str], user_source: str | None = None
) -> dict[str, Any]:
    """One product, checked, with the optional fields filled in; ``user_source``: a
    product of the user's file, its figures sourced there when they name no source
    (see :class:`Checker`)."""
    required = ("id", "vendor", "name", "size_unit", "capacity", "editions")
    optional = (
        "api_name",
        "iops_io_bytes",
        "count_unit_bytes",
        "io_quote",
        "rw_limits",
        "rw_quote",
        "latency",
        "prices",
        "override",
    )
    ident = text(mapping(value, place, ("id",), required + optional)["id"], place.at("id"), 64)
    if not _ID.match(ident):
        raise place.at("id").fail(f"{ident!r} must be lower-case letters, digits, . _ - (a name)")
    place = Place(f"{place.prefix}product {ident}: ")
    data = mapping(value, place, required, optional)
    for key in ("vendor", "name"):
        text(data[key], place.at(key), 200)
    data.setdefault("api_name", ident)
    text(data["api_name"], place.at("api_name"), 64)
    choice(data["size_unit"], place.at("size_unit"), ("GiB", "GB"))
    check = Checker(sources, place, user_source)
    check.capacity(data["capacity"], place.at("capacity"))
    data["iops_io_bytes"] = int(
        number(data.get("iops_io_bytes", 4096), place.at("iops_io_bytes"), True)
    )
    if data.get("count_unit_bytes") is not None:
        data["count_unit_bytes"] = int(
            number(data["count_unit_bytes"], place.at("count_unit_bytes"), True)
        )
    data.setdefault("count_unit_bytes", None)
    for key in ("io_quote", "rw_quote"):
        data[key] = text(data.get(key, ""), place.at(key))
    data["rw_limits"] = choice(
        data.get("rw_limits", "unknown"), place.at("rw_limits"), ("combined", "separate", "unknown")
    )
    if data.get("latency") is not None:
        check.latency(data["latency"], place.at("latency"))
    data.setdefault("latency", None)
    editions = items(data["editions"], place.at("editions"), 50)
    if not editions:
        raise place.at("editions").fail("needs at least one dated edition")
    for index, edition in enumerate(editions):
        check.edition(edition, place.at("editions").at(index))
    for index, price in enumerate(items(data.setdefault("prices", []), place.at("prices"), 50)):
        check.price(price, place.at("prices").at(index))
    if not isinstance(data.get("override", False), bool):
        raise place.at("override").fail("must be true or false")
    return data
