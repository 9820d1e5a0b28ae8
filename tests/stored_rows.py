"""A stored row of fio's figures made up for unit tests that read only a few of them."""

from __future__ import annotations

from typing import Any

from volbench.model import StoredResult, StoredWorkload


def bare_row(iops: float, **given: Any) -> StoredResult:
    """fio's row with no latency figures: round 0, test "t", reads of 4 KiB blocks at
    ``iops`` for 1 s, no bytes counted, no CPU; ``given`` sets any other field."""
    values: dict[str, Any] = {
        "round": 0,
        "test": "t",
        "direction": "read",
        "workload": StoredWorkload(),
        "iops": iops,
        "bw_bytes_per_s": iops * 4096,
        "io_bytes": 0,
        "runtime_ms": 1000.0,
        "lat_kind": "lat",
        "usr_cpu_pct": 0.0,
        "sys_cpu_pct": 0.0,
        "jobs": 1,
    }
    for name in ("mean", "min", "max", "stddev", "p50", "p90", "p99", "p999", "p9999"):
        values[f"lat_{name}_ns"] = None
    values.update(given)
    return StoredResult(**values)
