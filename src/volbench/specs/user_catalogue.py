"""The user's own products: private clouds, on-premises arrays, a vendor not catalogued.

Files (YAML, the built-in schema of CATALOGUE.md, checked by
:mod:`volbench.specs.validation`; only what defines a product is needed: provenance
and edition labels may be left out) are read, in this order, from:

1. ``--catalogue FILE`` (may be given more than once),
2. ``VOLBENCH_CATALOGUE`` (one path, or several separated by ``:``),
3. the config folder: ``$XDG_CONFIG_HOME/volbench/catalogue.yaml`` and every
   ``catalogue.d/*.yaml`` there (``~/.config/volbench`` by default), by name.

A file or folder named explicitly must exist; the config folder may not. A user
product whose id or api_name is already known (built-in, or an earlier file)
is a one-line error, unless it says ``override: true``: then it replaces that
product. Each product keeps the file it came from as its origin
(``spec list`` shows it).

The files are hostile input: ``yaml`` safe loading only (no tags, no Python
objects), at most 1 MiB per file, no anchors/aliases (no "billion laughs"),
nesting at most 16 deep; every field is then type-checked and every formula
parsed by the safe evaluator.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import platformdirs
import yaml

from volbench.errors import UsageError
from volbench.specs import validation
from volbench.specs.catalogue import Catalogue, merged, parse_catalogue
from volbench.specs.validation import Place
from volbench.text_file import read_text

ENV = "VOLBENCH_CATALOGUE"
MAX_BYTES = 1 << 20
MAX_DEPTH = 16


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing aliases and deep nesting while it composes."""

    depth = 0

    def _mark(self) -> Any:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        return event.start_mark

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self._mark()
            raise yaml.YAMLError(
                f"line {mark.line + 1}: anchors and aliases (*name) are not allowed"
            )
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self._mark()
                raise yaml.YAMLError(f"line {mark.line + 1}: nested more than {MAX_DEPTH} deep")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def config_folder() -> Path:
    """``$XDG_CONFIG_HOME/volbench`` (``~/.config/volbench`` by default)."""
    return Path(platformdirs.user_config_dir("volbench"))


def _expand(path: Path, named: bool) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if path.is_file():
        return [path]
    if named:
        raise UsageError(f"no catalogue file {path}: give a YAML file (see CATALOGUE.md)")
    return []


def paths(given: Iterable[str] = ()) -> list[Path]:
    """The user's catalogue files, in reading order (see the module doc)."""
    found = [p for name in given for p in _expand(Path(name), named=True)]
    for name in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        found += _expand(Path(name), named=True)
    folder = config_folder()
    found += _expand(folder / "catalogue.yaml", named=False)
    found += _expand(folder / "catalogue.d", named=False)
    unique: list[Path] = []
    for path in found:
        if path.resolve() not in [u.resolve() for u in unique]:
            unique.append(path)
    return unique


def read(path: Path) -> Any:
    """The YAML document of ``path`` (safe loading, size and shape limits)."""
    text = read_text(path, MAX_BYTES, "catalogue")
    try:
        return yaml.load(text, Loader=_Loader)
    except (ValueError, OverflowError) as exc:  # PyYAML's int(), float(), date() of a value
        problem = " ".join(str(exc).split())
        raise UsageError(f"{path}: not a valid value: {problem}"[:300]) from None
    except yaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise UsageError(f"{path}: not valid YAML: {problem}"[:300]) from None


def user_source(path: Path) -> str:
    """The source of the figures a user's file states without one: the file itself,
    named as it is shown where a source would be (its id and its text)."""
    return f"the user's catalogue, {path}"


def document(raw: Any, path: Path, known_sources: dict[str, str]) -> dict[str, Any]:
    """A user file's document checked and completed into the built-in schema: a
    figure, price or limit without ``quote``/``st``/``src`` is the user's own (status U,
    source :func:`user_source`), an edition without ``label`` is named by its date."""
    top = Place(f"{path}: ")
    data = validation.mapping(
        raw, top, ("products",), ("schema_version", "sources", "source_dates")
    )
    if data.get("schema_version", 1) != 1:
        raise top.at("schema_version").fail("must be 1")
    raw_sources = data.get("sources", {})
    known = tuple(raw_sources) if isinstance(raw_sources, dict) else ()
    sources = validation.mapping(raw_sources, top.at("sources"), (), known)
    for key, value in sources.items():
        where = top.at("sources").at(str(key))
        if not isinstance(key, str) or not validation.SOURCE_ID.match(key):
            raise where.fail("a source id is a short name: letters, digits, . _ -")
        validation.text(value, where, 500)
        if key in known_sources and known_sources[key] != value:
            raise where.fail(f"{key} is already a source ({known_sources[key]!r}): use another id")
    dates = validation.mapping(
        data.get("source_dates", {}), top.at("source_dates"), (), tuple(sources)
    )
    checked_dates = {k: validation.date(v, top.at("source_dates").at(k)) for k, v in dates.items()}
    every = {**known_sources, **sources}
    mine = user_source(path)
    products = [
        validation.product(p, Place(f"{path}: ", f"products[{i}]"), every, mine)
        for i, p in enumerate(validation.items(data["products"], top.at("products")))
    ]
    return {
        "schema_version": 1,
        "built_from": str(path),
        "sources": {**sources, mine: mine},
        "source_dates": checked_dates,
        "products": products,
    }


def _names(product: Any) -> set[str]:
    return {product.id.lower(), product.api_name.lower()}


def with_user_products(base: Catalogue, given: Iterable[str] = ()) -> Catalogue:
    """``base`` with the products of every user file (see the module doc)."""
    result = base
    for path in paths(given):
        doc = document(read(path), path, dict(result.sources))
        overriding = {p["id"] for p in doc["products"] if p.get("override")}
        extra = parse_catalogue(doc, origin=str(path))
        seen: set[str] = set()
        for product in extra.products:
            names = _names(product)
            clash = [p for p in result.products if _names(p) & names]
            if names & seen:
                raise UsageError(f"{path}: product {product.id}: id: given twice in this file")
            seen |= names
            if clash and product.id not in overriding:
                where = clash[0].origin
                raise UsageError(
                    f"{path}: product {product.id}: id: {clash[0].id} is already in the"
                    f" {where} catalogue; add 'override: true' to replace it"
                )
            if clash:
                result = replace(
                    result, products=tuple(p for p in result.products if p not in clash)
                )
        result = merged(result, extra)
    return result
