"""Charts of the plans that have a sheet of their own, drawn from that sheet's
rows: sweep (IOPS vs outstanding I/O, latency vs IOPS), iometer (IOPS and
response time per worker count), scan (transfer rate vs position) and QoS
verify (planned vs achieved per tenant). Units: MB/s = bytes/s / 10^6,
µs = ns / 10^3."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from volbench.report.chart import Chart, Series, bar_chart, line_chart
from volbench.report.sheet import Sheet

US = 1_000


def _by(rows: Sequence[Any], key: Callable[[Any], str]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def _us(value: Any) -> float | None:
    return float(value) / US if value is not None else None


def sweep_charts(sheet: Sheet) -> list[Chart]:
    """IOPS vs queue depth (a line per job count) and mean / p99 latency vs IOPS."""
    rid = sheet.document.get("id", "sweep")
    lines = _by(
        sheet.rows,
        lambda r: f"{r['numjobs']} job(s)" + (f" {r['series']}" if r.get("series") else ""),
    )
    ordered = {name: sorted(rows, key=lambda r: r["iodepth"]) for name, rows in lines.items()}
    iops = [
        Series(n, [r["iodepth"] for r in rs], [r["iops"] for r in rs]) for n, rs in ordered.items()
    ]
    by_iops = {n: sorted(rs, key=lambda r: r["iops"]) for n, rs in ordered.items()}
    latency = [
        Series(f"{n} mean", [r["iops"] for r in rs], [_us(r["lat_mean_ns"]) for r in rs])
        for n, rs in by_iops.items()
    ] + [
        Series(f"{n} p99", [r["iops"] for r in rs], [_us(r["lat_p99_ns"]) for r in rs])
        for n, rs in by_iops.items()
    ]
    return [
        line_chart(f"run{rid}-sweep-iops", "IOPS vs queue depth", iops,
                   x_title="Queue depth per job", y_title="IOPS", log_x=True, unit="IOPS"),
        line_chart(f"run{rid}-sweep-latency", "Latency vs IOPS (demand intensity)", latency,
                   x_title="IOPS", y_title="Latency (µs)", log_y=True, unit="µs"),
    ]  # fmt: skip


def iometer_charts(sheet: Sheet) -> list[Chart]:
    """IOPS and average / maximum response time per worker count, a line per spec."""
    rid = sheet.document.get("id", "iometer")
    specs = {
        n: sorted(rs, key=lambda r: r["workers"])
        for n, rs in _by(sheet.rows, lambda r: r["spec"]).items()
    }
    iops = [
        Series(n, [r["workers"] for r in rs], [r["iops"] for r in rs]) for n, rs in specs.items()
    ]
    response = [
        Series(f"{n} average", [r["workers"] for r in rs], [_us(r["lat_mean_ns"]) for r in rs])
        for n, rs in specs.items()
    ] + [
        Series(f"{n} maximum", [r["workers"] for r in rs], [_us(r["lat_max_ns"]) for r in rs])
        for n, rs in specs.items()
    ]
    return [
        line_chart(f"run{rid}-iometer-iops", "IOPS per worker count", iops,
                   x_title="Workers", y_title="IOPS", unit="IOPS"),
        line_chart(f"run{rid}-iometer-response", "Response time per worker count", response,
                   x_title="Workers", y_title="Response time (µs)", log_y=True, unit="µs"),
    ]  # fmt: skip


def scan_charts(sheet: Sheet) -> list[Chart]:
    """HD Tune's transfer-rate graph: MB/s of each zone at its position on the device."""
    rid = sheet.document.get("id", "scan")
    rows = sorted(sheet.rows, key=lambda r: r["position_pct"])
    series = [
        Series("transfer rate", [r["position_pct"] for r in rows], [r["bw_mb_per_s"] for r in rows])
    ]
    return [
        line_chart(f"run{rid}-scan", "Transfer rate vs position", series,
                   x_title="Position on the device (% of capacity)", y_title="MB/s", unit="MB/s")
    ]  # fmt: skip


def qos_verify_charts(sheet: Sheet) -> list[Chart]:
    """Planned vs achieved IOPS and the achieved share of the plan, per tenant."""
    rid = sheet.document.get("run_id", "qos")
    tenants = [r["tenant"] for r in sheet.rows]
    series = [
        Series("planned", tenants, [r["planned_iops"] for r in sheet.rows]),
        Series("achieved", tenants, [r["achieved_iops"] for r in sheet.rows]),
    ]
    return [
        bar_chart(f"run{rid}-qos-iops", "Planned vs achieved IOPS per tenant", series,
                  x_title="Tenant", y_title="IOPS", unit="IOPS")
    ]  # fmt: skip
