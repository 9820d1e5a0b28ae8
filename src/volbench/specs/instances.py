"""Instance-side limits: the most IOPS and MB/s a VM type lets its volumes reach.

A volume attached to a VM gets ``min(volume's promise, VM's cap)``: AWS
publishes per-instance EBS-optimized maxima (IOPS at 16 KiB I/O, MB/s at
128 KiB I/O; burstable types run at the maximum for 30 minutes at least once a
day, then at the baseline, catalogue src A6), Azure caps each VM size, GCP
caps per machine family and vCPU count and per disk type, separately for
reads and writes (src G2, G3, G6), UCloud and Alibaba cap by instance (U1,
L3). Each row of ``catalogue.json``'s ``instances`` table is one VM type's
cap for a set of products (``products``; empty = every product of its vendor),
quoted from its source like every other figure.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from volbench.errors import UsageError


@dataclass(frozen=True)
class InstanceLimit:
    """One VM type's caps for some products.

    ``iops``/``throughput`` are the maxima (for burstable types: the burst
    level, held ``burst_minutes``); ``*_baseline`` the sustained level when it
    differs; ``read_*``/``write_*`` per-direction caps where the vendor gives
    them apart (GCP). Throughput is in ``unit`` (``MB/s`` or ``MiB/s``).
    ``iops_io_bytes``/``throughput_io_bytes``: the I/O sizes the figures are
    defined at (AWS: 16 KiB and 128 KiB), 0 when not stated.
    """

    instance: str
    vendor: str
    products: tuple[str, ...]
    label: str
    from_date: str
    iops: float | None
    iops_baseline: float | None
    read_iops: float | None
    write_iops: float | None
    throughput: float | None
    throughput_baseline: float | None
    read_throughput: float | None
    write_throughput: float | None
    unit: str
    iops_io_bytes: int
    throughput_io_bytes: int
    burst_minutes: float | None
    quote: str
    status: str
    sources: tuple[str, ...]

    def applies_to(self, product_id: str, vendor: str) -> bool:
        """Whether this row caps ``product_id`` (empty ``products``: the whole vendor)."""
        return product_id in self.products if self.products else vendor == self.vendor


def _number(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    return None if value is None else float(value)


def parse_instance(data: dict[str, Any]) -> InstanceLimit:
    """One row of the ``instances`` table (schema in CATALOGUE.md)."""
    quote = data["quote"]
    return InstanceLimit(
        instance=data["instance"],
        vendor=data["vendor"],
        products=tuple(data.get("products", ())),
        label=data.get("label", ""),
        from_date=data["from"],
        iops=_number(data, "iops"),
        iops_baseline=_number(data, "iops_baseline"),
        read_iops=_number(data, "read_iops"),
        write_iops=_number(data, "write_iops"),
        throughput=_number(data, "throughput"),
        throughput_baseline=_number(data, "throughput_baseline"),
        read_throughput=_number(data, "read_throughput"),
        write_throughput=_number(data, "write_throughput"),
        unit=data.get("unit", "MB/s"),
        iops_io_bytes=int(data.get("iops_io_bytes", 0)),
        throughput_io_bytes=int(data.get("throughput_io_bytes", 0)),
        burst_minutes=_number(data, "burst_minutes"),
        quote=quote if isinstance(quote, str) else " | ".join(quote),
        status=data["st"],
        sources=tuple(data["src"]),
    )


def find_limit(
    limits: Sequence[InstanceLimit], name: str, product_id: str, vendor: str
) -> InstanceLimit:
    """The row capping ``product_id`` on VM type ``name`` (case-insensitive).

    An unknown type is a :class:`UsageError` suggesting close names; a known
    type without a row for this product says which products it has.
    """
    wanted = name.strip().lower()
    rows = [row for row in limits if row.instance.lower() == wanted]
    if not rows:
        names = sorted({row.instance for row in limits})
        lowered = {n.lower(): n for n in names}
        close = [lowered[c] for c in difflib.get_close_matches(wanted, lowered, n=3, cutoff=0.5)]
        close += [n for n in names if wanted and wanted in n.lower() and n not in close]
        hint = f"did you mean {', '.join(close[:3])}?" if close else "see `volbench spec instances`"
        raise UsageError(f"unknown instance type {name!r}: {hint}")
    specific = [row for row in rows if product_id in row.products]
    matching = specific or [row for row in rows if row.applies_to(product_id, vendor)]
    if not matching:
        has = sorted({p for row in rows for p in row.products} or {rows[0].vendor})
        raise UsageError(
            f"the catalogue has no {rows[0].instance} limit for {product_id}:"
            f" it has limits for {', '.join(has)}; give --instance-limit-iops/--instance-limit-mbps"
        )
    return matching[0]
