"""Sheets of the QoS commands: plans, predictions and alpha fits (seed 004).

Planned figures come from the formula C' = (C - C0) x (1 - alpha) x V' / Va
(:mod:`volbench.analysis.qos`); MB/s = bytes/s / 10^6.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from volbench.analysis.qos import QosPlan, error_pct
from volbench.analysis.qos_results import PLAN, VerifyResult, check_run
from volbench.report.run_sheets import PLAN_SHEETS
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_rate

MB = 1_000_000


def fmt_pct(value: Any) -> str:
    """A percentage to one decimal with its sign: ``-1.3 %``."""
    return f"{float(value):+.1f} %"


def fmt_share(value: Any) -> str:
    """A fraction as a percentage: 0.2222 -> ``22.2 %``."""
    return f"{float(value) * 100:.1f} %"


def fmt_limit(value: Any) -> str:
    """A planned rate; 0 means not planned (no limit)."""
    return "no limit" if float(value) == 0 else fmt_count(value)


def fmt_mb(value: Any) -> str:
    return "no limit" if float(value) == 0 else fmt_rate(value)


def _fmt_predicted(value: Any) -> str:
    """A predicted rate to one decimal (seed 004 prints 90.2); 0 = not predicted."""
    return "-" if float(value) == 0 else f"{float(value):,.1f}"


def _plan_notes(plan: QosPlan, host_label: str) -> tuple[str, ...]:
    return (
        "C' = (C - C0) x (1 - alpha) x V'/Va (seed 004): "
        f"C = {plan.capability_iops:,.0f} IOPS / {plan.capability_bw_bytes_per_s / MB:,.1f} MB/s, "
        f"C0 ({host_label}) = {plan.reserve_iops:,.0f} IOPS / "
        f"{plan.reserve_bw_bytes_per_s / MB:,.1f} MB/s, alpha = {plan.alpha:g}, "
        f"Va = {plan.tenants_gib:g} GiB"
        + (f" of V = {plan.volume_gib:g} GiB" if plan.volume_gib else ""),
        "weights are proportional to size (cgroup v1 blkio.weight 10..1000, v2 io.weight 1..10000)",
    )


def plan_rows(plan: QosPlan) -> list[dict[str, Any]]:
    return [
        {
            "tenant": a.tenant.name,
            "size_gib": a.tenant.size_gib,
            "share": a.share,
            "iops": a.iops,
            "bw_bytes_per_s": a.bw_bytes_per_s,
            "bw_mb_per_s": a.bw_bytes_per_s / MB,
            "weight_v1": a.weight_v1,
            "weight_v2": a.weight_v2,
        }
        for a in plan.allocations
    ]


PLAN_COLUMNS = (
    Column("tenant", "Tenant"),
    Column("size_gib", "Size GiB", lambda v: f"{float(v):g}", numeric=True),
    Column("share", "Share", fmt_share, numeric=True),
    Column("iops", "IOPS limit", fmt_limit, numeric=True),
    Column("bw_mb_per_s", "MB/s limit", fmt_mb, numeric=True),
    Column("weight_v1", "blkio.weight", numeric=True),
    Column("weight_v2", "io.weight", numeric=True),
)


def plan_sheet(plan: QosPlan, document: Mapping[str, Any]) -> Sheet:
    """A plan: per-tenant limits, shares and weights; ``document`` is its JSON form."""
    return Sheet(
        title="volbench QoS plan",
        columns=PLAN_COLUMNS,
        rows=tuple(plan_rows(plan)),
        document=document,
        notes=_plan_notes(plan, "host reserve")
        + (
            (f"C measured by fio in run {document['capability_run']} (reads only)",)
            if document.get("capability_run")
            else ()
        ),
    )


def predict_sheet(plan: QosPlan, measured: Mapping[str, float]) -> Sheet:
    """Predicted C' per tenant (IOPS, MB/s) and, where measured IOPS are given, the error."""
    rows = []
    for row in plan_rows(plan):
        value = measured.get(row["tenant"])
        rows.append(
            {
                **row,
                "measured_iops": value,
                "error_pct": error_pct(row["iops"], value)
                if value is not None and row["iops"]
                else None,
            }
        )
    columns = (
        *PLAN_COLUMNS[:3],
        Column("iops", "Predicted IOPS", _fmt_predicted, numeric=True),
        Column("bw_mb_per_s", "Predicted MB/s", _fmt_predicted, numeric=True),
        Column("measured_iops", "Measured IOPS", fmt_count, numeric=True),
        Column("error_pct", "Error", fmt_pct, numeric=True),
    )
    return Sheet(
        title="volbench QoS prediction",
        columns=columns,
        rows=tuple(rows),
        document={"schema": "volbench.qos-prediction/1", "tenants": rows, "alpha": plan.alpha},
        notes=(
            *_plan_notes(plan, "used by the host")[:1],
            "error = (measured - predicted) / predicted",
        ),
    )


def fit_sheet(groups: Sequence[Mapping[str, Any]]) -> Sheet:
    """Fitted alpha per measured group (``capability``, ``host_used``, ``achieved``, ``alpha``)."""
    columns = (
        Column("group", "Group"),
        Column("capability", "C", fmt_count, numeric=True),
        Column("host_used", "C0", fmt_count, numeric=True),
        Column("tenants", "Tenants", numeric=True),
        Column("achieved_total", "Sum C'", fmt_count, numeric=True),
        Column("alpha", "alpha", lambda v: f"{float(v):.3f}", numeric=True),
    )
    return Sheet(
        title="volbench QoS alpha fit",
        columns=columns,
        rows=tuple(groups),
        document={"schema": "volbench.qos-fit/1", "groups": list(groups)},
        notes=("alpha = 1 - sum(C') / (C - C0) over all running tenants (seed 004, test 4)",),
    )


def applied_sheet(hierarchy: str, devnum: str, written: Sequence[Mapping[str, Any]]) -> Sheet:
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


def interval_iops(raw_outputs: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per tenant (fio job name): fio's own IOPS samples over time (fio computes IOPS
    every ``iopsavgtime`` = 500 ms by default) as ``iops_min``, ``iops_max``,
    ``iops_stddev`` and ``iops_samples`` of the active directions (read + write
    summed for min/max/stddev would mix windows, so the busiest direction is kept)."""
    found: dict[str, dict[str, float]] = {}
    for raw in raw_outputs:
        try:
            document = json.loads(raw[raw.index("{") : raw.rindex("}") + 1])
        except ValueError:
            continue
        for job in document.get("jobs", ()):
            for direction in ("read", "write"):
                stats = job.get(direction, {})
                samples = int(stats.get("iops_samples", 0) or 0)
                name = str(job.get("jobname"))
                mean = float(stats.get("iops_mean", 0) or 0)
                if samples and mean > found.get(name, {}).get("iops_mean", 0.0):
                    found[name] = {
                        key: float(stats.get(key, 0) or 0)
                        for key in ("iops_min", "iops_max", "iops_mean", "iops_stddev")
                    } | {"iops_samples": samples}
    return found


BAR_CELLS = 20
"""Width of a planned-vs-achieved bar: 20 cells = 100 % of plan."""


def fmt_bar(value: Any) -> str:
    """A ratio as a bar of eighth-blocks (20 cells = 1.0, capped at 1.5) and a percentage:
    0.97 -> ``███████████████████▍ 97 %``."""
    ratio = max(0.0, min(float(value), 1.5))
    eighths = round(ratio * BAR_CELLS * 8)
    full, rest = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[rest] if rest else "")
    return f"{bar:<{int(1.5 * BAR_CELLS) + 1}} {float(value) * 100:.0f} %"


def _fmt_span(value: Any) -> str:
    low, high = value
    return f"{low:,.0f} - {high:,.0f}"


def verify_sheet(result: VerifyResult, raw_outputs: Sequence[str] = ()) -> Sheet:
    """Planned vs achieved per tenant (fio's IOPS), fio's IOPS samples over time
    (min - max of its samples, one per ``iopsavgtime``), Jain's index and isolation."""
    over_time = interval_iops(raw_outputs)
    rows = tuple(
        {
            **asdict(c),
            "size_gib": c.size_gib if c.role != "host" else None,
            "achieved_ratio": c.achieved_iops / c.planned_iops,
            "achieved_mb_per_s": c.achieved_bw_bytes_per_s / MB,
            "verdict": _verdict(asdict(c)),
            **over_time.get(c.tenant, {}),
            "iops_span": (
                (over_time[c.tenant]["iops_min"], over_time[c.tenant]["iops_max"])
                if c.tenant in over_time
                else None
            ),
        }
        for c in result.checks
    )
    tolerance, run_id = result.tolerance_pct, result.run_id
    columns = (
        Column("tenant", "Tenant"),
        Column("role", "Role"),
        Column("size_gib", "Size GiB", lambda v: f"{float(v):g}", numeric=True),
        Column("planned_iops", "Planned IOPS", fmt_count, numeric=True),
        Column("achieved_iops", "Achieved IOPS", fmt_count, numeric=True),
        Column("achieved_mb_per_s", "MB/s", fmt_rate, numeric=True),
        Column("iops_span", "IOPS over time", _fmt_span, numeric=True),
        Column("achieved_ratio", "Achieved / planned", fmt_bar),
        Column("error_pct", "Error", fmt_pct, numeric=True),
        Column("verdict", f"Within {tolerance:g} %"),
    )
    return Sheet(
        title=f"volbench QoS verify (run {run_id})",
        columns=columns,
        rows=rows,
        document={
            "schema": "volbench.qos-verify/1",
            "run_id": run_id,
            "tenants": list(rows),
            "jain_index": result.jain,
            "isolated": result.isolated,
            "tolerance_pct": tolerance,
        },
        notes=(
            f"Jain's fairness index over achieved/planned of the tenants: {result.jain:.3f}"
            " (1 = fair)",
            _isolation_note(result),
            "achieved = fio's IOPS of each tenant's own fio process (raw JSON stored per tenant:"
            f" `volbench export {run_id}`); over time = min - max of fio's IOPS samples"
            " (one per iopsavgtime, 500 ms by default)",
        ),
        flagged_rows=frozenset(i for i, r in enumerate(rows) if r["verdict"] != "ok"),
    )


PLAN_SHEETS[PLAN] = lambda run: verify_sheet(check_run(run), run.raw_outputs)


def _isolation_note(result: VerifyResult) -> str:
    quiet = [c.tenant for c in result.checks if c.role == "quiet"]
    who = f"quiet tenant {', '.join(quiet)} beside noisy ones" if quiet else "every tenant"
    floor = f"{100 - result.tolerance_pct:g} %"
    if result.isolated:
        return f"isolation: {who} got at least {floor} of its plan, all running at once"
    return f"isolation FAILED: {who} got less than {floor} of its plan, all running at once"


def _verdict(check: Mapping[str, Any]) -> str:
    return "ok" if check["ok"] else ("below plan" if check["error_pct"] < 0 else "above plan")
