"""The sheet of a QoS verify run: planned vs achieved per tenant, fairness, isolation.

Every achieved figure is fio's own (each tenant's fio process, raw JSON stored
per tenant); planned figures come from the plan stored with the run
(:mod:`volbench.analysis.qos_results`). The qos-verify plan's sheet (``volbench show``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.qos_results import TenantCheck, VerifyResult, verify_result
from volbench.errors import FioError
from volbench.fio.parser import parse
from volbench.model import RunRecord
from volbench.report.plan_view import Headline
from volbench.report.qos_sheets import MB, fmt_pct
from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_rate


def interval_iops(raw_outputs: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per tenant (fio job name): fio's own IOPS samples over time (fio computes IOPS
    every ``iopsavgtime`` = 500 ms by default) as ``iops_min``, ``iops_max``,
    ``iops_stddev`` and ``iops_samples`` of the active directions (read + write
    summed for min/max/stddev would mix windows, so the busiest direction is kept)."""
    found: dict[str, dict[str, float]] = {}
    for raw in raw_outputs:
        try:
            output = parse(raw)
        except FioError:
            continue
        for job in output.jobs:
            for direction in job.directions.values():
                stats = direction.iops_samples
                if stats and stats.mean > found.get(job.name, {}).get("iops_mean", 0.0):
                    found[job.name] = {
                        "iops_min": stats.min,
                        "iops_max": stats.max,
                        "iops_mean": stats.mean,
                        "iops_stddev": stats.stddev,
                        "iops_samples": stats.samples,
                    }
    return found


BAR_CELLS = 20
"""Width of a planned-vs-achieved bar: 20 cells = 100 % of plan."""


def fmt_bar(value: object) -> str:
    """A ratio as a bar of eighth-blocks (20 cells = 1.0, capped at 1.5) and a percentage:
    0.97 -> ``███████████████████▍ 97 %``."""
    ratio = max(0.0, min(number(value), 1.5))
    eighths = round(ratio * BAR_CELLS * 8)
    full, rest = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[rest] if rest else "")
    return f"{bar:<{int(1.5 * BAR_CELLS) + 1}} {number(value) * 100:.0f} %"


def _fmt_span(value: object) -> str:
    if not isinstance(value, tuple):
        raise TypeError(f"not a span: {value!r}")
    low, high = value
    return f"{low:,.0f} - {high:,.0f}"


@dataclass(frozen=True, eq=False)
class VerifyRow(Row):
    """One tenant of a verify run (:class:`TenantCheck`): planned and achieved IOPS,
    bytes/s and MB/s, error (%), verdict, and fio's IOPS samples over time (min, max,
    mean, stddev, count: keys only when fio gave them) with their span (min, max)."""

    tenant: str
    size_gib: float | None
    """None for the host's own load."""
    planned_iops: float
    achieved_iops: float
    achieved_bw_bytes_per_s: float
    error_pct: float
    ok: bool
    role: str
    achieved_ratio: float
    achieved_mb_per_s: float
    verdict: str
    iops_min: float | None = None
    iops_max: float | None = None
    iops_mean: float | None = None
    iops_stddev: float | None = None
    iops_samples: float | None = None
    iops_span: tuple[float, float] | None = None

    optional = frozenset({"iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples"})


def verify_sheet(result: VerifyResult, raw_outputs: Sequence[str] = ()) -> Sheet:
    """Planned vs achieved per tenant (fio's IOPS), fio's IOPS samples over time
    (min - max of its samples, one per ``iopsavgtime``), Jain's index and isolation; each
    row's figure is its tenant's test (stored under the tenant's name: ``row_tests``)."""
    over_time = interval_iops(raw_outputs)
    rows = tuple(
        VerifyRow(
            tenant=c.tenant,
            size_gib=c.size_gib if c.role != "host" else None,
            planned_iops=c.planned_iops,
            achieved_iops=c.achieved_iops,
            achieved_bw_bytes_per_s=c.achieved_bw_bytes_per_s,
            error_pct=c.error_pct,
            ok=c.ok,
            role=c.role,
            achieved_ratio=c.achieved_iops / c.planned_iops,
            achieved_mb_per_s=c.achieved_bw_bytes_per_s / MB,
            verdict=_verdict(c),
            **over_time.get(c.tenant, {}),
            iops_span=(
                (over_time[c.tenant]["iops_min"], over_time[c.tenant]["iops_max"])
                if c.tenant in over_time
                else None
            ),
        )
        for c in result.checks
    )
    tolerance, run_id = result.tolerance_pct, result.run_id
    columns = (
        Column("tenant", "Tenant"),
        Column("role", "Role"),
        Column("size_gib", "Size GiB", lambda v: f"{number(v):g}", numeric=True),
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
            "tenants": documents(rows),
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
        flagged_rows=frozenset(i for i, r in enumerate(rows) if r.verdict != "ok"),
        row_tests=tuple((c.tenant,) for c in result.checks),
    )


def run_verify_sheet(run: RunRecord) -> Sheet:
    """The sheet of a stored QoS verify run (read with its raw outputs)."""
    return verify_sheet(verify_result(run), run.raw_outputs)


def verify_headline(run: RunRecord) -> Headline:
    """What a report and the list of runs say first of a QoS verification: how many
    tenants got their plan, Jain's index and isolation (not the highest IOPS of its
    steps: with ``--fit-alpha`` that is the host alone, no tenant's figure)."""
    result = verify_result(run)  # a run killed before any result: no figures
    sheet = verify_sheet(result, run.raw_outputs)
    table = dataclasses.replace(sheet, title=f"Run {run.id} at a glance: QoS verify")
    if not result.checks:
        return Headline(table, ())
    within = sum(check.ok for check in result.checks)
    figure = (
        f"{within} of {len(result.checks)} tenants within {result.tolerance_pct:g} % of"
        f" plan, Jain {result.jain:.3f}"
    )
    return Headline(table, (figure,), (_isolation_note(result),))


def _isolation_note(result: VerifyResult) -> str:
    if not result.checks:
        return "no tenant's results were stored: the run stopped before its first"
    quiet = [c.tenant for c in result.checks if c.role == "quiet"]
    who = f"quiet tenant {', '.join(quiet)} beside noisy ones" if quiet else "every tenant"
    floor = f"{100 - result.tolerance_pct:g} %"
    if result.isolated:
        return f"isolation: {who} got at least {floor} of its plan, all running at once"
    return f"isolation FAILED: {who} got less than {floor} of its plan, all running at once"


def _verdict(check: TenantCheck) -> str:
    return "ok" if check.ok else ("below plan" if check.error_pct < 0 else "above plan")
