"""The vendor catalogue: products, dated formula editions, prices, sources.

The data is ``catalogue.json`` beside this module (schema in CATALOGUE.md),
with the instance-side limit table of :mod:`volbench.specs.instances`,
built from ``../shared/data/disk-catalogue.yaml``, the user's source posts and
the vendor-page excerpts of ``excerpts.json``. Every figure keeps the verbatim
``quote`` of its source, its status (``st``: V, VM, S, R, D) and source ids
(``src``), so every expected number can be traced back. The user's own
products (:mod:`volbench.specs.user_catalogue`) join them with their origin.

Dates: an edition is in force from its ``from`` date; a latency or price is
known from the date of its sources (``source_dates``; an undated source from
the day it was seen, 2026-11-22), so an answer ``as of`` a date uses only what
was known then.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from volbench.errors import UsageError
from volbench.specs import vendors
from volbench.specs.instances import InstanceLimit, parse_instance
from volbench.specs.limits import Limit, parse_limit, size_range

DATE_SEEN = "2026-11-22"
"""When the undated sources were seen (disk-catalogue.yaml's compile date)."""

BUILT_IN = "built-in"


@dataclass(frozen=True)
class Figure:
    """One promised figure: a formula (``expr``) or a tier table, with its source.

    ``tiers`` are (size, value) pairs: a size is rounded up to the next tier.
    ``unit`` is ``MB/s`` (10^6 B/s) or ``MiB/s`` (2^20 B/s) for throughput, empty
    for IOPS. ``defaults`` give values for provisioned variables not set.
    """

    expr: str | None
    tiers: tuple[tuple[float, float], ...]
    unit: str
    quote: str
    status: str
    sources: tuple[str, ...]
    defaults: dict[str, float]


@dataclass(frozen=True)
class Latency:
    """A stated latency range in milliseconds (``min_ms`` may be unknown)."""

    max_ms: float
    min_ms: float | None
    text: str
    status: str
    sources: tuple[str, ...]
    from_date: str = DATE_SEEN  # known from the date of its sources


@dataclass(frozen=True)
class Burst:
    """What a volume may do above its baseline while it has credits.

    ``iops`` and ``throughput`` are the burst ceilings (formulas or tiers of
    size; a size beyond the last tier does not burst). The bucket is
    ``bucket_credits`` I/O credits (AWS gp2: 5.4 million, one per I/O) and/or
    ``throughput_bucket``, a formula in the throughput unit x seconds (AWS
    st1: 1 TiB of credits per TiB of size, i.e. ``size * 1024`` MiB);
    ``max_minutes`` caps one burst (Azure credit-based bursting: 30 minutes).
    Only sizes up to ``up_to_size`` burst, when given.
    """

    iops: Figure | None
    throughput: Figure | None
    bucket_credits: float | None
    throughput_bucket: Figure | None
    max_minutes: float | None
    up_to_size: float | None
    quote: str
    status: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Edition:
    """The formulas valid from a date (``from_date`` ISO) until the next edition."""

    from_date: str
    label: str
    iops: Figure | None
    throughput: Figure | None
    burst: Burst | None
    latency: Latency | None
    read_iops: Figure | None = None  # per-direction caps where the vendor gives them apart
    write_iops: Figure | None = None
    limits: tuple[Limit, ...] = ()  # what may be provisioned (volbench.specs.limits)


@dataclass(frozen=True)
class Price:
    """A price entry: ``value`` ``currency`` per ``per`` (GB-month, GB-hour,
    disk-month, IOPS-month, MBps-month, million-requests), above a free
    allowance ``above`` and up to ``to`` (IOPS or MB/s price bands), for
    sizes in (``size_above``, ``size_to``] when the price is per tier."""

    value: float
    currency: str
    per: str
    region: str
    date: str
    billing: str
    above: float
    to: float | None
    size_above: float | None
    size_to: float | None
    quote: str
    status: str
    sources: tuple[str, ...]
    from_date: str = DATE_SEEN  # known from: its ISO ``date``, else its sources' date


@dataclass(frozen=True)
class Product:
    """A vendor's block-storage product and everything promised about it."""

    id: str
    vendor: str
    name: str
    api_name: str
    size_unit: str
    min_size: float
    max_size: float  # inf when the vendor states no maximum
    capacity_quote: str
    iops_io_bytes: int
    count_unit_bytes: int | None
    io_quote: str
    rw_limits: str  # combined | separate | unknown
    rw_quote: str
    latency: Latency | None
    editions: tuple[Edition, ...]
    prices: tuple[Price, ...]
    sources: tuple[str, ...]
    origin: str = BUILT_IN  # "built-in" or the user's catalogue file it came from

    def size_range(self, as_of: str | None = None) -> tuple[float, float]:
        """Sizes allowed as of ``as_of``: the edition's ``size`` limit within the
        product's capacity (AWS gp3: up to 16,384 GiB in 2023, 65,536 from 2025-09-26)."""
        return size_range(self.edition(as_of).limits, self.min_size, self.max_size)

    def prices_at(self, as_of: str | None) -> tuple[Price, ...]:
        """The price entries known at ``as_of`` (all of them when None)."""
        return tuple(p for p in self.prices if as_of is None or p.from_date <= as_of)

    def latency_at(self, edition: Edition, as_of: str | None) -> Latency | None:
        """``edition``'s stated latency if known at ``as_of`` (a 2023 statement
        does not answer for 2016), else None."""
        latency = edition.latency
        if latency is None or as_of is None or latency.from_date <= as_of:
            return latency
        return None

    def edition(self, as_of: str | None = None) -> Edition:
        """The newest edition dated on or before ``as_of`` (ISO date; None = today)."""
        valid = [e for e in self.editions if as_of is None or e.from_date <= as_of]
        if not valid:
            first = self.editions[0].from_date
            raise UsageError(
                f"{self.id} has no formula as of {as_of}: the oldest known is from {first}"
            )
        return valid[-1]


@dataclass(frozen=True)
class Catalogue:
    products: tuple[Product, ...]
    sources: dict[str, str]
    built_from: str
    instances: tuple[InstanceLimit, ...] = ()
    source_dates: Mapping[str, str] | None = None

    def of_vendor(self, text: str) -> list[Product]:
        """Products whose vendor matches ``text``: id prefix (``aliyun``), vendor
        name (any case, substring) or a common alias (qcloud, gcp ...)."""
        return [p for p in self.products if vendors.matches(text, p.id, p.vendor)]

    def find(self, name: str) -> Product:
        """The product whose id or api_name is ``name`` (case-insensitive); an
        unknown name is a :class:`UsageError` suggesting close names."""
        wanted = name.strip().lower()
        for product in self.products:
            if wanted in (product.id, product.api_name.lower()):
                return product
        ids = [p.id for p in self.products]
        close = difflib.get_close_matches(wanted, ids, n=3, cutoff=0.4)
        close += [i for i in ids if wanted and wanted in i and i not in close]
        hint = f"did you mean {', '.join(close[:3])}?" if close else "see `volbench spec list`"
        raise UsageError(f"unknown product {name!r}: {hint}")


def quote_text(quote: str | list[str]) -> str:
    """A figure's quote (one string, or several joined with `` | ``)."""
    return quote if isinstance(quote, str) else " | ".join(quote)


def source_date(sources: Any, dates: Mapping[str, str]) -> str:
    """When a figure from ``sources`` is known to hold: its earliest source's
    date; undated sources count from the day they were seen."""
    return min((dates.get(s, DATE_SEEN) for s in sources), default=DATE_SEEN)


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _figure(data: dict[str, Any] | None) -> Figure | None:
    if data is None:
        return None
    return Figure(
        expr=data.get("expr"),
        tiers=tuple((float(s), float(v)) for s, v in data.get("tiers", ())),
        unit=data.get("unit", ""),
        quote=quote_text(data["quote"]),
        status=data["st"],
        sources=tuple(data["src"]),
        defaults={k: float(v) for k, v in data.get("default", {}).items()},
    )


def _latency(data: dict[str, Any] | None, dates: Mapping[str, str]) -> Latency | None:
    if data is None:
        return None
    sources = tuple(data["src"])
    known = data.get("from") or source_date(sources, dates)
    return Latency(data["max_ms"], data.get("min_ms"), data["text"], data["st"], sources, known)


def _burst(data: dict[str, Any] | None) -> Burst | None:
    if data is None:
        return None
    iops = data.get("iops")
    if isinstance(iops, int | float):  # a flat ceiling, quoted by the burst's own quote
        iops = {"expr": f"{iops:g}", "quote": data["quote"], "st": data["st"], "src": data["src"]}
    return Burst(
        iops=_figure(iops),
        throughput=_figure(data.get("throughput")),
        bucket_credits=data.get("bucket_credits"),
        throughput_bucket=_figure(data.get("throughput_bucket")),
        max_minutes=data.get("max_minutes"),
        up_to_size=data.get("up_to_size"),
        quote=quote_text(data["quote"]),
        status=data["st"],
        sources=tuple(data["src"]),
    )


def _price(data: dict[str, Any], dates: Mapping[str, str]) -> Price:
    date = str(data.get("date", ""))
    known = date if _ISO.match(date) else source_date(data["src"], dates)
    return Price(
        value=float(data["value"]),
        currency=data["currency"],
        per=data["per"],
        region=data.get("region", "not stated"),
        date=data.get("date", "undated"),
        billing=data.get("billing", "monthly" if data["per"].endswith("month") else "hourly"),
        above=float(data.get("above", 0)),
        to=data.get("to"),
        size_above=data.get("size_above"),
        size_to=data.get("size_to"),
        quote=data["quote"],
        status=data["st"],
        sources=tuple(data["src"]),
        from_date=known,
    )


def _product(data: dict[str, Any], dates: Mapping[str, str], origin: str) -> Product:
    product_latency = _latency(data["latency"], dates)
    editions = tuple(
        Edition(
            from_date=e["from"],
            label=e["label"],
            iops=_figure(e.get("iops")),
            throughput=_figure(e.get("throughput")),
            burst=_burst(e.get("burst")),
            latency=_latency(e["latency"], dates) if "latency" in e else product_latency,
            read_iops=_figure(e.get("read_iops")),
            write_iops=_figure(e.get("write_iops")),
            limits=tuple(parse_limit(limit) for limit in e.get("limits", ())),
        )
        for e in sorted(data["editions"], key=lambda e: str(e["from"]))
    )
    capacity = data["capacity"]
    return Product(
        id=data["id"],
        vendor=data["vendor"],
        name=data["name"],
        api_name=data["api_name"],
        size_unit=data["size_unit"],
        min_size=float(capacity["min"]),
        max_size=math.inf if capacity["max"] is None else float(capacity["max"]),
        capacity_quote=capacity["quote"],
        iops_io_bytes=int(data["iops_io_bytes"]),
        count_unit_bytes=data["count_unit_bytes"],
        io_quote=data["io_quote"],
        rw_limits=data["rw_limits"],
        rw_quote=data["rw_quote"],
        latency=product_latency,
        editions=editions,
        prices=tuple(_price(p, dates) for p in data["prices"]),
        sources=tuple(capacity["src"]),
        origin=origin,
    )


def parse_catalogue(document: dict[str, Any], origin: str = BUILT_IN) -> Catalogue:
    """A catalogue from its JSON document (see CATALOGUE.md for the schema)."""
    if document.get("schema_version") != 1:
        raise UsageError("catalogue schema_version must be 1")
    dates = dict(document.get("source_dates", {}))
    return Catalogue(
        products=tuple(_product(p, dates, origin) for p in document["products"]),
        sources=dict(document["sources"]),
        built_from=document["built_from"],
        instances=tuple(parse_instance(i) for i in document.get("instances", ())),
        source_dates=dates,
    )


@cache
def built_in() -> Catalogue:
    """volbench's own catalogue (``catalogue.json`` in this package)."""
    text = resources.files(__package__).joinpath("catalogue.json").read_text(encoding="utf-8")
    return parse_catalogue(json.loads(text))


def merged(base: Catalogue, extra: Catalogue) -> Catalogue:
    """``base`` with ``extra``'s products and sources. A product of ``extra``
    whose id (or api_name) is already known replaces it only when marked
    ``override``: the caller passes those ids in ``extra`` products' origin
    check (see :mod:`volbench.specs.user_catalogue`)."""
    ids = {p.id for p in extra.products}
    kept = tuple(p for p in base.products if p.id not in ids)
    dates = {**(base.source_dates or {}), **(extra.source_dates or {})}
    return replace(
        base,
        products=kept + extra.products,
        sources={**base.sources, **extra.sources},
        source_dates=dates,
    )


_GIVEN: ContextVar[tuple[str, ...]] = ContextVar("catalogue_files", default=())
"""The ``--catalogue`` files of the command running (:func:`using`)."""


@contextlib.contextmanager
def using(user_files: tuple[str, ...]) -> Iterator[None]:
    """Within the block, every :func:`load` also reads ``user_files``: a command's
    ``--catalogue`` reaches what it calls deep down (the cost estimate, the summary's
    check against the promise) without each layer passing it on."""
    token = _GIVEN.set((*_GIVEN.get(), *user_files))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def given_files() -> tuple[str, ...]:
    """The ``--catalogue`` files in force (:func:`using`)."""
    return _GIVEN.get()


def load(user_files: tuple[str, ...] = ()) -> Catalogue:
    """The built-in catalogue with the user's products: the files given (``--catalogue``,
    here or through :func:`using`), ``VOLBENCH_CATALOGUE`` and the config folder
    (:func:`volbench.specs.user_catalogue.paths`)."""
    from volbench.specs import user_catalogue  # reads YAML only when asked to

    return user_catalogue.with_user_products(built_in(), (*user_files, *_GIVEN.get()))
