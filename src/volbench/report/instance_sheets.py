"""The sheet of ``volbench spec instances``: the instance-side limit table.

One row per VM type and product set, each cap with its status and sources
(catalogue ``instances``, see :mod:`volbench.specs.instances`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.specs.instances import InstanceLimit


def _num(value: object) -> str:
    return f"{number(value):,.6g}"


@dataclass(frozen=True, eq=False)
class InstanceRow(Row):
    """An instance type's own limits on its volumes (:class:`InstanceLimit`): IOPS
    and throughput (in ``unit``) at most, at baseline, per direction; burst minutes;
    from when, status, source ids and quote. None: not stated."""

    instance: str
    vendor: str
    products: str
    label: str
    iops: float | None
    iops_baseline: float | None
    read_iops: float | None
    write_iops: float | None
    throughput: float | None
    throughput_baseline: float | None
    read_throughput: float | None
    write_throughput: float | None
    unit: str
    burst_minutes: float | None
    from_date: str
    status: str
    sources: str
    quote: str

    renamed: ClassVar[Mapping[str, str]] = {"from_date": "from"}


def instances_sheet(limits: list[InstanceLimit]) -> Sheet:
    """The instance-side limit table: one row per VM type and product set."""
    rows = tuple(
        InstanceRow(
            instance=row.instance,
            vendor=row.vendor,
            products=", ".join(row.products) or f"all {row.vendor}",
            label=row.label,
            iops=row.iops,
            iops_baseline=row.iops_baseline,
            read_iops=row.read_iops,
            write_iops=row.write_iops,
            throughput=row.throughput,
            throughput_baseline=row.throughput_baseline,
            read_throughput=row.read_throughput,
            write_throughput=row.write_throughput,
            unit=row.unit,
            burst_minutes=row.burst_minutes,
            from_date=row.from_date,
            status=row.status,
            sources=", ".join(row.sources),
            quote=row.quote,
        )
        for row in limits
    )
    columns = (
        Column("instance", "instance"),
        Column("products", "products"),
        Column("iops", "max IOPS", fmt_count, numeric=True),
        Column("iops_baseline", "baseline IOPS", fmt_count, numeric=True),
        Column("read_iops", "read IOPS", fmt_count, numeric=True),
        Column("write_iops", "write IOPS", fmt_count, numeric=True),
        Column("throughput", "max", _num, numeric=True),
        Column("throughput_baseline", "baseline", _num, numeric=True),
        Column("read_throughput", "read", _num, numeric=True),
        Column("write_throughput", "write", _num, numeric=True),
        Column("unit", "unit"),
        Column("burst_minutes", "burst min", _num, numeric=True),
        Column("status", "st"),
        Column("sources", "src"),
    )
    notes = (
        "max/baseline/read/write throughput in the unit column; '-' = not stated",
        "AWS: IOPS at 16 KiB I/O, MB/s at 128 KiB I/O; burstable types hold the maximum"
        " 30 min at least once per 24 h, then the baseline (A6)",
        "use with `volbench check RUN --instance TYPE`",
    )
    return Sheet("Instance-side limits", columns, rows, {"instances": documents(rows)}, notes)
