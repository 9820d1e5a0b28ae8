"""Charts of the plans that have a sheet of their own, drawn from that sheet's
rows: sweep (IOPS vs outstanding I/O, latency vs IOPS), iometer (IOPS and
response time per worker count), scan (transfer rate vs position) and QoS
verify (planned vs achieved per tenant). Units: MB/s = bytes/s / 10^6, latency
in the unit that fits the chart's largest (µs, ms, s = ns / 10^3, 10^6, 10^9)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from volbench.report.axis import latency_unit
from volbench.report.chart import (
    Chart,
    Mark,
    Series,
    bar_chart,
    line_chart,
    with_level,
    with_marks,
)
from volbench.report.hdtune_sheets import ZoneRow
from volbench.report.iometer_sheets import SpecRow
from volbench.report.qos_verify_sheets import VerifyRow
from volbench.report.rows import number, rows_of
from volbench.report.sheet import Sheet, fmt_latency
from volbench.report.sweep_sheets import SweepPointRow

T = TypeVar("T")


def _by(rows: Sequence[T], key: Callable[[T], str]) -> dict[str, list[T]]:
    groups: dict[str, list[T]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def _in(value: float | None, size: float) -> float | None:
    return float(value) / size if value is not None else None


def _marks(
    rows: Sequence[SweepPointRow],
    x: Callable[[SweepPointRow], float],
    y: Callable[[SweepPointRow], float | None],
    size: float = 1.0,
) -> list[Mark]:
    """The knee, peak and best-under-target points the sweep table names, at (x, y)."""
    return [
        Mark(x(r), float(value) / size, f"{r.mark}: {r.point}")
        for r in rows
        if r.mark and (value := y(r)) is not None
    ]


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def sweep_charts(sheet: Sheet) -> list[Chart]:
    """IOPS vs queue depth (a line per job count) and mean / p99 latency vs IOPS, the
    knee, peak and best point under the latency target marked, the target drawn."""
    rid = sheet.document.get("id", "sweep")
    points = rows_of(sheet.rows, SweepPointRow)
    lines = _by(points, lambda r: f"{r.numjobs} job(s)" + (f" {r.series}" if r.series else ""))
    ordered = {name: sorted(rows, key=lambda r: r.iodepth) for name, rows in lines.items()}
    iops = [Series(n, [r.iodepth for r in rs], [r.iops for r in rs]) for n, rs in ordered.items()]
    unit, size = latency_unit(v for r in points for v in (r.lat_mean_ns, r.lat_p99_ns))
    by_iops = {n: sorted(rs, key=lambda r: r.iops) for n, rs in ordered.items()}
    latency = [
        Series(f"{n} mean", [r.iops for r in rs], [_in(r.lat_mean_ns, size) for r in rs])
        for n, rs in by_iops.items()
    ] + [
        Series(f"{n} p99", [r.iops for r in rs], [_in(r.lat_p99_ns, size) for r in rs])
        for n, rs in by_iops.items()
    ]
    settings = _mapping(_mapping(sheet.document.get("settings")).get("sweep"))
    which = str(settings.get("latency_percentile", "mean"))

    def lat(r: SweepPointRow) -> float | None:
        return r.lat_p99_ns if which == "p99" else r.lat_mean_ns

    charts = [
        with_marks(
            line_chart(
                f"run{rid}-sweep-iops",
                "IOPS vs queue depth",
                iops,
                x_title="Queue depth per job",
                y_title="IOPS",
                log_x=True,
                x_at_values=True,
                unit="IOPS",
            ),
            _marks(points, lambda r: r.iodepth, lambda r: r.iops),
        ),
        with_marks(
            line_chart(
                f"run{rid}-sweep-latency",
                "Latency vs IOPS (demand intensity)",
                latency,
                x_title="IOPS",
                y_title="Latency",
                log_y=True,
                unit=unit,
            ),
            _marks(points, lambda r: r.iops, lat, size),
        ),
    ]
    target = settings.get("latency_target_ns")
    if target:
        charts[1] = with_level(
            charts[1], number(target) / size, f"target: {which} < {fmt_latency(target)}"
        )
    return charts


def iometer_charts(sheet: Sheet) -> list[Chart]:
    """IOPS and average / maximum response time per worker count, a line per spec."""
    rid = sheet.document.get("id", "iometer")
    rows = rows_of(sheet.rows, SpecRow)
    specs = {
        n: sorted(rs, key=lambda r: r.workers) for n, rs in _by(rows, lambda r: r.spec).items()
    }
    iops = [Series(n, [r.workers for r in rs], [r.iops for r in rs]) for n, rs in specs.items()]
    unit, size = latency_unit(v for r in rows for v in (r.lat_mean_ns, r.lat_max_ns))
    response = [
        Series(f"{n} average", [r.workers for r in rs], [_in(r.lat_mean_ns, size) for r in rs])
        for n, rs in specs.items()
    ] + [
        Series(f"{n} maximum", [r.workers for r in rs], [_in(r.lat_max_ns, size) for r in rs])
        for n, rs in specs.items()
    ]
    return [
        line_chart(
            f"run{rid}-iometer-iops",
            "IOPS per worker count",
            iops,
            x_title="Workers",
            y_title="IOPS",
            unit="IOPS",
        ),
        line_chart(
            f"run{rid}-iometer-response",
            "Response time per worker count",
            response,
            x_title="Workers",
            y_title="Response time",
            log_y=True,
            unit=unit,
        ),
    ]


def scan_charts(sheet: Sheet) -> list[Chart]:
    """HD Tune's transfer-rate graph: MB/s of each zone at its position on the device."""
    rid = sheet.document.get("id", "scan")
    rows = sorted(rows_of(sheet.rows, ZoneRow), key=lambda r: r.position_pct)
    series = [
        Series("transfer rate", [r.position_pct for r in rows], [r.bw_mb_per_s for r in rows])
    ]
    return [
        line_chart(
            f"run{rid}-scan",
            "Transfer rate vs position",
            series,
            x_title="Position on the device (% of capacity)",
            y_title="MB/s",
            unit="MB/s",
        )
    ]


def qos_verify_charts(sheet: Sheet) -> list[Chart]:
    """Planned vs achieved IOPS and the achieved share of the plan, per tenant."""
    rid = sheet.document.get("run_id", "qos")
    rows = rows_of(sheet.rows, VerifyRow)
    tenants = [r.tenant for r in rows]
    series = [
        Series("planned", tenants, [r.planned_iops for r in rows]),
        Series("achieved", tenants, [r.achieved_iops for r in rows]),
    ]
    return [
        bar_chart(
            f"run{rid}-qos-iops",
            "Planned vs achieved IOPS per tenant",
            series,
            x_title="Tenant",
            y_title="IOPS",
            unit="IOPS",
        )
    ]
