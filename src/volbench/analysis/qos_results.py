"""QoS figures from a stored verify run: planned vs achieved, fairness, isolation,
and the measurement ``qos fit`` estimates alpha from. Pure: a RunRecord in.

A ``qos-verify`` run stores its plan document in ``settings["qos_plan"]``, its
options in ``settings["verify"]`` and one result row per tenant (test = tenant
name, IOPS = fio's own figure for that tenant's fio process).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.qos import QosPlan, error_pct, jain_index
from volbench.analysis.qos_document import plan_from_document
from volbench.errors import UsageError
from volbench.model import RW, RunRecord

PLAN = "qos-verify"
HOST = "host"
"""Test name of the host's fio (``--with-host``)."""


@dataclass(frozen=True)
class TenantCheck:
    """One tenant's planned and achieved IOPS, the error in % and the verdict."""

    tenant: str
    size_gib: float
    planned_iops: float
    achieved_iops: float
    achieved_bw_bytes_per_s: float
    error_pct: float
    ok: bool
    role: str = "noisy"


@dataclass(frozen=True)
class VerifyResult:
    """Every tenant's check; Jain's index over the tenants' achieved/planned ratios
    (the host excluded); ``isolated`` when every quiet tenant (every tenant, when
    none was quiet) got at least 100 - tolerance % of its plan while all ran at once."""

    run_id: int
    checks: tuple[TenantCheck, ...]
    jain: float
    isolated: bool
    tolerance_pct: float

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)


@dataclass(frozen=True)
class Measurement:
    """What one concurrent run says for the alpha fit: direction, concurrency (number
    of tenants), C (IOPS), C0 (the host's measured IOPS, 0 without the host) and
    every tenant's achieved IOPS. ``capped`` when every tenant got its planned limit
    (within the run's tolerance): the limits bound, so the fit measures the plan,
    not a virtualisation loss."""

    run_id: int
    direction: str
    capability: float
    host_used: float
    achieved: tuple[float, ...]
    capped: bool = False


def planned_iops(iops: float, bw_bytes_per_s: float, bs_bytes: int) -> float:
    """The IOPS a limit allows at block size ``bs_bytes``: the lower of the IOPS
    limit and bandwidth / block size (0 = that limit is not set)."""
    bounds = [iops] if iops > 0 else []
    bounds += [bw_bytes_per_s / bs_bytes] if bw_bytes_per_s > 0 else []
    if not bounds:
        raise UsageError("the plan sets neither an IOPS nor a bandwidth limit")
    return min(bounds)


def verify_direction(run: RunRecord) -> str:
    """``read`` or ``write``: the direction a verify run drove (its ``rw``), whose
    limits it is compared with."""
    rw = run.settings.get("verify", {}).get("rw", RW.RANDREAD.value)
    return "write" if RW(rw).writes else "read"


def _verify_parts(
    run: RunRecord,
) -> tuple[QosPlan, int, float, dict[str, tuple[float, float]]]:
    if run.plan != PLAN or "qos_plan" not in run.settings:
        raise UsageError(f"run {run.id} is a {run.plan} run, not a QoS verify run")
    plan = plan_from_document(run.settings["qos_plan"])
    options = run.settings.get("verify", {})
    achieved: dict[str, tuple[float, float]] = {}
    for result in run.results:
        iops, bw = achieved.get(result.test, (0.0, 0.0))
        achieved[result.test] = (iops + result.iops, bw + result.bw_bytes_per_s)
    return (
        plan,
        int(options.get("bs_bytes", 4096)),
        float(options.get("tolerance_pct", 10)),
        achieved,
    )


def check_run(run: RunRecord) -> VerifyResult:
    """Planned vs achieved for every tenant (and the host) of a stored verify run, in
    the direction it drove (read limits for reads, write limits for writes)."""
    plan, bs_bytes, tolerance, achieved = _verify_parts(run)
    direction = verify_direction(run)
    quiet = set(run.settings.get("verify", {}).get("quiet", ()))
    limits = {
        a.tenant.name: (a.tenant.size_gib, *a.limits.pick(direction)) for a in plan.allocations
    }
    if HOST in achieved and HOST not in limits:
        limits[HOST] = (0.0, *plan.reserve.pick(direction))
    checks = []
    for name, (size, iops_limit, bw_limit) in limits.items():
        if name not in achieved:
            continue  # the run stopped before this tenant's output was stored
        planned = planned_iops(iops_limit, bw_limit, bs_bytes)
        iops, bw = achieved[name]
        error = error_pct(planned, iops)
        role = "host" if size == 0 else ("quiet" if name in quiet else "noisy")
        ok = abs(error) <= tolerance
        checks.append(TenantCheck(name, size, planned, iops, bw, error, ok, role))
    if not checks:
        raise UsageError(f"run {run.id} has no stored tenant results")
    ratios = [c.achieved_iops / c.planned_iops for c in checks if c.role != "host"]
    guarded = [c for c in checks if c.role == "quiet"] or [c for c in checks if c.role != "host"]
    floor = 1 - tolerance / 100
    isolated = all(c.achieved_iops >= floor * c.planned_iops for c in guarded)
    jain = jain_index(ratios) if ratios else 1.0
    return VerifyResult(run.id, tuple(checks), jain, isolated, tolerance)


def measurement(run: RunRecord) -> Measurement:
    """The alpha-fit input of a verify run: C is the plan's IOPS capability (or
    bandwidth / block size) of the direction the run drove, C0 the host's measured
    IOPS (0 when it did not run)."""
    plan, bs_bytes, _, achieved = _verify_parts(run)
    capability = planned_iops(*plan.capability.pick(verify_direction(run)), bs_bytes)
    tenants = [a.tenant.name for a in plan.allocations]
    missing = [t for t in tenants if t not in achieved]
    if missing:
        raise UsageError(f"run {run.id} has no result of tenant {missing[0]}: cannot fit alpha")
    directions = {r.direction for r in run.results if r.test in tenants}
    checks = check_run(run).checks
    return Measurement(
        run.id,
        ",".join(sorted(directions)),
        capability,
        achieved.get(HOST, (0.0, 0.0))[0],
        tuple(achieved[t][0] for t in tenants),
        all(c.ok for c in checks if c.role != "host"),
    )


def fit_groups(measurements: Sequence[Measurement]) -> list[dict[str, object]]:
    """alpha per (direction, number of tenants), pooled over the runs of each group:
    alpha = 1 - sum(C') / sum(C - C0) (the ratio of totals of seed 004's formula).
    ``capped`` lists the group's runs whose tenants all got their planned limits."""
    groups: dict[tuple[str, int], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.direction, len(m.achieved)), []).append(m)
    rows: list[dict[str, object]] = []
    for (direction, count), members in sorted(groups.items()):
        available = sum(m.capability - m.host_used for m in members)
        if available <= 0:
            raise UsageError(f"{direction} x {count} tenants: the host used all the capability")
        total = sum(sum(m.achieved) for m in members)
        runs = ", ".join(str(m.run_id) for m in members)
        rows.append(
            {
                "group": f"{direction} x {count} tenants (runs {runs})",
                "direction": direction,
                "tenants": count,
                "runs": [m.run_id for m in members],
                "capped": [m.run_id for m in members if m.capped],
                "capability": sum(m.capability for m in members) / len(members),
                "host_used": sum(m.host_used for m in members) / len(members),
                "achieved_total": total / len(members),
                "alpha": 1 - total / available,
            }
        )
    return rows
