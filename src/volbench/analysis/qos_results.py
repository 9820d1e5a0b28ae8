"""QoS figures from a stored verify run: planned vs achieved, fairness, isolation,
and the measurement ``qos fit`` estimates alpha from. Pure: a RunRecord in.

A ``qos-verify`` run stores its plan document, its options and the cgroup lines it
wrote in its settings (:class:`VerifySetup`) and one result row per tenant (test =
tenant name, IOPS = fio's own figure for that tenant's fio process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volbench.analysis.qos import QosPlan, error_pct, jain_index
from volbench.analysis.qos_document import plan_from_document
from volbench.errors import UsageError
from volbench.model import RW, RunRecord

PLAN = "qos-verify"
HOST = "host"
"""Test name of the host's fio (``--with-host``)."""


@dataclass(frozen=True)
class VerifyOptions:
    """How to verify: workload per tenant (``rw``, block size in bytes, queue depth),
    fio runtime in seconds, and the tolerance in percent of the planned IOPS.

    ``quiet`` tenants ask for exactly their planned IOPS (fio ``rate_iops``) while
    the others (noisy) ask for as much as their queue depth gets: isolation holds
    when the quiet ones still get what they asked for. ``nominal_sizes``: the
    tenants' sizes are proportions, not checked against the device's capacity.
    ``guests``: each tenant is the lab guest of its name (limits in QEMU's throttle
    group, :mod:`volbench.plans.qos.guests`); ``fit_alpha``: two more rounds measure
    the guests' virtualisation loss (:mod:`volbench.analysis.qos_alpha`)."""

    duration_s: float = 3.0
    rw: RW = RW.RANDREAD
    bs_bytes: int = 4096
    iodepth: int = 16
    with_host: bool = False
    tolerance_pct: float = 10.0
    ioengine: str | None = None
    destroy_data: str | None = None
    quiet: tuple[str, ...] = ()
    nominal_sizes: bool = False
    guests: bool = False
    fit_alpha: bool = False


@dataclass(frozen=True)
class VerifySetup:
    """What a verify run records of itself besides the settings every run has
    (:attr:`volbench.model.RunSettings.options`): the QoS plan document
    (:mod:`volbench.analysis.qos_document`), the options, and, as they were written
    (for the report), the cgroup hierarchy, each line written and the device
    (``MAJ:MIN``)."""

    qos_plan: Mapping[str, Any]
    verify: VerifyOptions
    cgroup: Mapping[str, Any] = field(default_factory=dict)
    written: tuple[Mapping[str, Any], ...] = ()
    device: str = ""

    @property
    def plan(self) -> QosPlan:
        return plan_from_document(self.qos_plan)

    @classmethod
    def of(cls, run: RunRecord) -> VerifySetup:
        """The setup of stored verify run ``run``; UsageError for another plan's run,
        RecordError when it does not fit."""
        if run.plan != PLAN:
            raise UsageError(f"run {run.id} is a {run.plan} run, not a QoS verify run")
        return run.setup(cls)


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
    return "write" if VerifySetup.of(run).verify.rw.writes else "read"


def _achieved(run: RunRecord) -> dict[str, tuple[float, float]]:
    """Per tenant: IOPS and bytes/s achieved (the sum of its stored rows)."""
    achieved: dict[str, tuple[float, float]] = {}
    for result in run.results:
        iops, bw = achieved.get(result.test, (0.0, 0.0))
        achieved[result.test] = (iops + result.iops, bw + result.bw_bytes_per_s)
    return achieved


def check_run(run: RunRecord) -> VerifyResult:
    """:func:`verify_result` of a run that stored at least one tenant's results; a
    one-line UsageError for one that did not (stopped before its first)."""
    result = verify_result(run)
    if not result.checks:
        raise UsageError(f"run {run.id} has no stored tenant results")
    return result


def verify_result(run: RunRecord) -> VerifyResult:
    """Planned vs achieved for every tenant (and the host) of a stored verify run, in
    the direction it drove (read limits for reads, write limits for writes); no checks
    for a run killed before any tenant's output was stored."""
    setup = VerifySetup.of(run)
    plan, options, achieved = setup.plan, setup.verify, _achieved(run)
    bs_bytes, tolerance = options.bs_bytes, options.tolerance_pct
    direction = verify_direction(run)
    quiet = set(options.quiet)
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
    ratios = [c.achieved_iops / c.planned_iops for c in checks if c.role != "host"]
    guarded = [c for c in checks if c.role == "quiet"] or [c for c in checks if c.role != "host"]
    floor = 1 - tolerance / 100
    isolated = bool(guarded) and all(c.achieved_iops >= floor * c.planned_iops for c in guarded)
    jain = jain_index(ratios) if ratios else 1.0
    return VerifyResult(run.id, tuple(checks), jain, isolated, tolerance)


def measurement(run: RunRecord) -> Measurement:
    """The alpha-fit input of a verify run: C is the plan's IOPS capability (or
    bandwidth / block size) of the direction the run drove, C0 the host's measured
    IOPS (0 when it did not run)."""
    setup = VerifySetup.of(run)
    plan, achieved = setup.plan, _achieved(run)
    capability = planned_iops(*plan.capability.pick(verify_direction(run)), setup.verify.bs_bytes)
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
    alpha = 1 - sum(C') / sum(C - C0) (the ratio of totals of the NetEase QoS test's formula).
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
