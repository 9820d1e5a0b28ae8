"""Provenance check: every catalogue figure is quoted verbatim from its source.

``catalogue.json`` was written by hand from ``disk-catalogue.yaml``, the user's
source posts and, for the 2025-2026 editions the YAML does not hold, the
vendor-page excerpts kept in ``excerpts.json`` (each with its address, title,
publisher, date and status, as retrieved). Each figure carries the ``quote``
it was read from; this module checks that the quote occurs in one of those
texts (whitespace-normalised) and that every number of the figure's formula,
tier table, price value, burst ceiling, bucket, instance cap or provisioning
limit appears in that quote (tiers: in one line of the source). For an
excerpt this proves the figure matches the text kept in the repository, not
that the live page still says so: the excerpt's date says when it was read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.text_file import read_text

_NUMBER = re.compile(r"\d+(?:\.\d+)?")

UNIT_CONSTANTS = frozenset({0.0, 1.0, 1000.0, 1024.0})
"""Numbers a formula may hold without quoting them: kB per MB, KiB per MiB."""


def _squash(text: str) -> str:
    return " ".join(text.split())


_SCALED = re.compile(r"(\d+(?:\.\d+)?)([kM])\b")


def numbers(text: str) -> set[float]:
    """The numbers written in ``text`` (thousands separators removed; ``18k``
    and ``1.2M`` also count as 18,000 and 1,200,000)."""
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    found = {float(n) for n in _NUMBER.findall(plain)}
    scale = {"k": 1e3, "M": 1e6}
    return found | {round(float(n) * scale[s], 6) for n, s in _SCALED.findall(plain)}


CLAIMED_KEYS = (
    "value",
    "iops",
    "bucket_credits",
    "max_minutes",
    "iops_baseline",
    "read_iops",
    "write_iops",
    "throughput",
    "throughput_baseline",
    "read_throughput",
    "write_throughput",
    "burst_minutes",
)
"""Keys whose plain numbers (prices, flat burst ceilings, bucket sizes, instance
caps) must be written in the quote."""


def _figures(product: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield f"{product['id']} capacity", product["capacity"]
    for edition in product["editions"]:
        for key in ("iops", "read_iops", "write_iops", "throughput", "burst"):
            if key in edition:
                yield f"{product['id']} {edition['from']} {key}", edition[key]
        for key, figure in edition.get("burst", {}).items():
            if isinstance(figure, dict):  # burst ceilings and bucket with their own quotes
                yield f"{product['id']} {edition['from']} burst {key}", figure
        for limit in edition.get("limits", ()):
            yield f"{product['id']} {edition['from']} limit {limit['variable']}", limit
    for index, price in enumerate(product["prices"]):
        yield f"{product['id']} price {index}", price


def _claimed(figure: Mapping[str, Any]) -> set[float]:
    if "variable" in figure:  # a provisioning limit: its bounds (numbers or formulas)
        bounds = [figure.get(k) for k in ("min", "max", "size_above")]
        return {n for b in bounds if b is not None for n in numbers(str(b))}
    if "expr" in figure:
        return numbers(figure["expr"])
    if "tiers" in figure:
        return set()  # a tier table is checked row by row against the quote's table
    return {float(figure[key]) for key in CLAIMED_KEYS if isinstance(figure.get(key), int | float)}


def problems(document: Mapping[str, Any], texts: Mapping[str, str]) -> list[str]:
    """What does not match: quotes not found in any source text, and numbers of
    a formula or price missing from its quote. ``texts`` maps a name (``yaml``,
    ``seed-000`` ...) to a source's full text."""
    squashed = {name: _squash(text) for name, text in texts.items()}
    lines = [numbers(line) for text in texts.values() for line in text.splitlines()]
    found: list[str] = []
    every = [pair for product in document["products"] for pair in _figures(product)]
    every += [(f"instance {row['instance']}", row) for row in document.get("instances", ())]
    for where, figure in every:
        quotes = [figure["quote"]] if isinstance(figure["quote"], str) else figure["quote"]
        absent = [q for q in quotes if not any(_squash(q) in t for t in squashed.values())]
        if absent:
            found.append(f"{where}: quote not in any source: {absent[0]!r}")
            continue
        quote = _squash(" ".join(quotes))
        missing = _claimed(figure) - numbers(quote) - UNIT_CONSTANTS
        for size, value in figure.get("tiers", ()):
            if not any({float(size), float(value)} <= line for line in lines):
                found.append(f"{where}: no source line holds tier ({size}, {value})")
        if missing:
            found.append(f"{where}: {sorted(missing)} not in quote {figure['quote']!r}")
    return found


def excerpts() -> dict[str, Any]:
    """``excerpts.json``: source id -> title, publisher, address, date, status, text."""
    text = resources.files(__package__).joinpath("excerpts.json").read_text(encoding="utf-8")
    found: dict[str, Any] = json.loads(text)["excerpts"]
    return found


MAX_SOURCE_BYTES = 16 << 20
"""The largest source text read (16 MiB; the catalogue's YAML is under 1 MiB)."""


def _text(path: Path) -> str:
    """A source's text: UTF-8, at most :data:`MAX_SOURCE_BYTES`; else one line."""
    return read_text(path, MAX_SOURCE_BYTES, "catalogue source")


def source_texts(yaml_path: Path, seeds_dir: Path | None) -> dict[str, str]:
    """The texts quotes may come from: the YAML, each source post (``seed-NNN``
    internally) and each kept vendor-page excerpt (``excerpt-ID``)."""
    if not yaml_path.is_file():
        raise UsageError(f"no catalogue source at {yaml_path}: give the disk-catalogue.yaml path")
    texts = {"yaml": _text(yaml_path)}
    for seed in sorted(seeds_dir.glob("*.txt")) if seeds_dir is not None else ():
        texts[f"seed-{seed.name[:3]}"] = _text(seed)
    for source, excerpt in excerpts().items():
        texts[f"excerpt-{source}"] = "\n".join(excerpt["text"])
    return texts
