"""Sheets of the QoS commands: plans, predictions and alpha fits (seed 004).

Planned figures come from the formula C' = (C - C0) x (1 - alpha) x V' / Va
(:mod:`volbench.analysis.qos`); MB/s = bytes/s / 10^6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.analysis.qos import QosPlan, Rates, error_pct
from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_rate

MB = 1_000_000


def fmt_pct(value: object) -> str:
    """A percentage to one decimal with its sign: ``-1.3 %``."""
    return f"{number(value):+.1f} %"


def fmt_share(value: object) -> str:
    """A fraction as a percentage: 0.2222 -> ``22.2 %``."""
    return f"{number(value) * 100:.1f} %"


def fmt_limit(value: object) -> str:
    """A planned rate; 0 means not planned (no limit)."""
    return "no limit" if number(value) == 0 else fmt_count(value)


def fmt_mb(value: object) -> str:
    return "no limit" if number(value) == 0 else fmt_rate(value)


def _fmt_predicted(value: object) -> str:
    """A predicted rate to one decimal (the QoS test document prints 90.2); none or 0 =
    not predicted."""
    return "-" if value is None or number(value) == 0 else f"{number(value):,.1f}"


def _rates_text(rates: Rates) -> str:
    """``read 3,888 IOPS / 400.0 MB/s, write 156 IOPS`` (a bandwidth never given is
    left out, not shown as 0.0 MB/s)."""
    return ", ".join(
        f"{direction} {iops:,.0f} IOPS" + (f" / {bps / MB:,.1f} MB/s" if bps else "")
        for direction, (iops, bps) in ((d, rates.pick(d)) for d in ("read", "write"))
    )


def _plan_notes(plan: QosPlan, host_label: str) -> tuple[str, ...]:
    return (
        "C' = (C - C0) x (1 - alpha) x V'/Va (NetEase QoS test), per direction: "
        f"C = {_rates_text(plan.capability)}; C0 ({host_label}) = {_rates_text(plan.reserve)};"
        f" alpha = {plan.alpha:g}, Va = {plan.tenants_gib:g} GiB"
        + (f" of V = {plan.volume_gib:g} GiB" if plan.volume_gib else ""),
        "weights are proportional to size (cgroup v1 blkio.weight 10..1000, v2 io.weight 1..10000)",
    )


@dataclass(frozen=True, eq=False)
class TenantRow(Row):
    """One tenant of a QoS plan: its size (GiB), share of Va, limits per direction
    (IOPS, bytes/s and MB/s; 0 = no limit) and cgroup weights (v1 and v2)."""

    tenant: str
    size_gib: float
    share: float
    read_iops: float
    write_iops: float
    read_bw_bytes_per_s: float
    write_bw_bytes_per_s: float
    read_mb_per_s: float
    write_mb_per_s: float
    weight_v1: int
    weight_v2: int


def plan_rows(plan: QosPlan) -> list[TenantRow]:
    return [
        TenantRow(
            tenant=a.tenant.name,
            size_gib=a.tenant.size_gib,
            share=a.share,
            read_iops=a.limits.read_iops,
            write_iops=a.limits.write_iops,
            read_bw_bytes_per_s=a.limits.read_bps,
            write_bw_bytes_per_s=a.limits.write_bps,
            read_mb_per_s=a.limits.read_bps / MB,
            write_mb_per_s=a.limits.write_bps / MB,
            weight_v1=a.weight_v1,
            weight_v2=a.weight_v2,
        )
        for a in plan.allocations
    ]


@dataclass(frozen=True, eq=False)
class PredictionRow(Row):
    """A tenant's plan row with its predicted C' in one direction (IOPS, MB/s: None
    when no bandwidth was given), the measured IOPS where given and the error (%)."""

    planned: TenantRow
    direction: str
    iops: float
    bw_mb_per_s: float | None
    measured_iops: float | None
    error_pct: float | None

    extends = "planned"


PLAN_COLUMNS = (
    Column("tenant", "Tenant"),
    Column("size_gib", "Size GiB", lambda v: f"{number(v):g}", numeric=True),
    Column("share", "Share", fmt_share, numeric=True),
    Column("read_iops", "Read IOPS", fmt_limit, numeric=True),
    Column("write_iops", "Write IOPS", fmt_limit, numeric=True),
    Column("read_mb_per_s", "Read MB/s", fmt_mb, numeric=True),
    Column("write_mb_per_s", "Write MB/s", fmt_mb, numeric=True),
    Column("weight_v1", "blkio.weight", numeric=True),
    Column("weight_v2", "io.weight", numeric=True),
)


def plan_sheet(plan: QosPlan, document: Mapping[str, object]) -> Sheet:
    """A plan: per-tenant limits, shares and weights; ``document`` is its JSON form."""
    return Sheet(
        title="volbench QoS plan",
        columns=PLAN_COLUMNS,
        rows=tuple(plan_rows(plan)),
        document=document,
        notes=_plan_notes(plan, "host reserve")
        + (
            (f"C measured by fio in run {document['capability_run']}",)
            if document.get("capability_run")
            else ()
        )
        + (
            (
                f"writes not measured ({document['writes_not_measured']}): write limits need"
                " --capability wiops=N,wbps=SIZE (or --destroy-data DEV to measure them)",
            )
            if document.get("writes_not_measured")
            else ()
        ),
    )


def predict_sheet(plan: QosPlan, measured: Mapping[str, float], direction: str = "read") -> Sheet:
    """Predicted C' per tenant (IOPS, MB/s of ``direction``) and, where measured IOPS
    are given, the error."""
    rows = []
    for row in plan_rows(plan):
        value = measured.get(row.tenant)
        read = direction == "read"
        iops = row.read_iops if read else row.write_iops
        rows.append(
            PredictionRow(
                planned=row,
                direction=direction,
                iops=iops,
                bw_mb_per_s=(row.read_mb_per_s if read else row.write_mb_per_s) or None,
                measured_iops=value,
                error_pct=error_pct(iops, value) if value is not None and iops else None,
            )
        )
    columns = (
        *PLAN_COLUMNS[:3],
        Column("iops", f"Predicted {direction} IOPS", _fmt_predicted, numeric=True),
        Column("bw_mb_per_s", f"Predicted {direction} MB/s", _fmt_predicted, numeric=True),
        Column("measured_iops", "Measured IOPS", fmt_count, numeric=True),
        Column("error_pct", "Error", fmt_pct, numeric=True),
    )
    return Sheet(
        title="volbench QoS prediction",
        columns=columns,
        rows=tuple(rows),
        document={
            "schema": "volbench.qos-prediction/1",
            "tenants": documents(rows),
            "alpha": plan.alpha,
        },
        notes=(
            *_plan_notes(plan, "used by the host")[:1],
            "error = (measured - predicted) / predicted",
        ),
    )


def capped_warning(runs: Sequence[object]) -> str:
    """Why alpha from runs capped by their own plan's limits is not a loss factor."""
    listed = ", ".join(str(r) for r in runs)
    return (
        f"warning: in run(s) {listed} every tenant got its planned limit, so alpha measures"
        " the plan, not a virtualisation loss; fit alpha on runs without limits (NetEase QoS test:"
        " the tenants unthrottled, all running at once, C0 the host's measured use)"
    )


def fit_sheet(groups: Sequence[Mapping[str, object]]) -> Sheet:
    """Fitted alpha per measured group (``capability``, ``host_used``, ``achieved``, ``alpha``);
    a warning when runs were ``capped`` by their plan's limits."""
    columns = (
        Column("group", "Group"),
        Column("capability", "C", fmt_count, numeric=True),
        Column("host_used", "C0", fmt_count, numeric=True),
        Column("tenants", "Tenants", numeric=True),
        Column("achieved_total", "Sum C'", fmt_count, numeric=True),
        Column("alpha", "alpha", lambda v: f"{number(v):.3f}", numeric=True),
    )
    capped = [run for g in groups for run in _listed(g.get("capped"))]
    return Sheet(
        title="volbench QoS alpha fit",
        columns=columns,
        rows=tuple(groups),
        document={
            "schema": "volbench.qos-fit/1",
            "groups": list(groups),
            "warnings": [capped_warning(capped)] if capped else [],
        },
        notes=(
            "alpha = 1 - sum(C') / (C - C0) over all running tenants (NetEase QoS test, test 4)",
            *([capped_warning(capped)] if capped else []),
        ),
        flagged_rows=frozenset(i for i, g in enumerate(groups) if g.get("capped")),
    )


def _listed(value: object) -> list[object]:
    """A row's list of values (e.g. a fit group's capped runs), [] when it has none."""
    return list(value) if isinstance(value, list | tuple) else []


def applied_sheet(hierarchy: str, devnum: str, written: Sequence[Mapping[str, object]]) -> Sheet:
    """What ``qos apply`` wrote: one row per cgroup file and value."""
    return Sheet(
        title="volbench QoS applied",
        columns=(Column("tenant", "Tenant"), Column("file", "File"), Column("value", "Value")),
        rows=tuple(written),
        document={
            "schema": "volbench.qos-applied/1",
            "hierarchy": hierarchy,
            "device": devnum,
            "written": list(written),
        },
        notes=(f"{hierarchy}, device {devnum}; remove with `volbench qos clear`",),
    )


def cleared_sheet(removed: Sequence[str], busy: Sequence[str] = ()) -> Sheet:
    """The cgroups ``qos clear`` removed, and those it left because processes run in them."""
    rows = tuple({"cgroup": path, "status": "removed"} for path in removed) + tuple(
        {"cgroup": path, "status": "busy: still has processes"} for path in busy
    )
    notes = () if rows else ("no volbench cgroups found",)
    if busy:
        notes = ("stop the processes in the busy cgroups, then run `volbench qos clear` again",)
    return Sheet(
        title="volbench QoS cleared",
        columns=(Column("cgroup", "Cgroup"), Column("status", "Status")),
        rows=rows,
        document={"schema": "volbench.qos-cleared/1", "removed": list(removed), "busy": list(busy)},
        notes=notes,
        flagged_rows=frozenset(range(len(removed), len(rows))),
    )
