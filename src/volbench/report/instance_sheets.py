"""The sheet of ``volbench spec instances``: the instance-side limit table.

One row per VM type and product set, each cap with its status and sources
(catalogue ``instances``, see :mod:`volbench.specs.instances`).
"""

from __future__ import annotations

from typing import Any

from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.specs.instances import InstanceLimit


def _num(value: Any) -> str:
    return f"{float(value):,.6g}"


def instances_sheet(limits: list[InstanceLimit]) -> Sheet:
    """The instance-side limit table: one row per VM type and product set."""
    rows = tuple(
        {
            "instance": row.instance,
            "vendor": row.vendor,
            "products": ", ".join(row.products) or f"all {row.vendor}",
            "label": row.label,
            "iops": row.iops,
            "iops_baseline": row.iops_baseline,
            "read_iops": row.read_iops,
            "write_iops": row.write_iops,
            "throughput": row.throughput,
            "throughput_baseline": row.throughput_baseline,
            "read_throughput": row.read_throughput,
            "write_throughput": row.write_throughput,
            "unit": row.unit,
            "burst_minutes": row.burst_minutes,
            "from": row.from_date,
            "status": row.status,
            "sources": ", ".join(row.sources),
            "quote": row.quote,
        }
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
    return Sheet("Instance-side limits", columns, rows, {"instances": list(rows)}, notes)
