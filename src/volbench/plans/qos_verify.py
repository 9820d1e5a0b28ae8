"""Verifying a QoS plan: one fio per tenant, all at once, each inside its own cgroup.

The plan's limits are applied as cgroups ``volbench-<tenant>`` (and
``volbench-host`` with the host reserve when asked); every tenant's fio starts
inside its cgroup at the same moment and drives the device harder than its
limit (a deep queue), so each tenant measures what its allocation delivers under
contention. Each tenant's fio output is stored verbatim as one round of the run
(round number = tenant order), and the cgroups are removed afterwards whatever
happened.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests
from volbench.analysis.qos import QosPlan, error_pct, jain_index
from volbench.errors import FioError, VolbenchError
from volbench.fio.concurrent import ConcurrentJob, run_concurrently
from volbench.fio.executable import best_engine, fio_version
from volbench.fio.job import JobFile, render
from volbench.fio.parser import parse
from volbench.model import RW, RunStatus, Workload
from volbench.plans.execution import Session, workload_record
from volbench.plans.preparation import prepare_target
from volbench.plans.qos_plan_file import plan_document
from volbench.plans.qos_setup import device_number, tenant_limits
from volbench.targets import cgroup
from volbench.targets.host import collect_host

PLAN = "qos-verify"


@dataclass(frozen=True)
class VerifyOptions:
    """How to verify: workload per tenant (``rw``, block size in bytes, queue depth),
    fio runtime in seconds, and the tolerance in percent of the planned IOPS."""

    duration_s: float = 3.0
    rw: RW = RW.RANDREAD
    bs_bytes: int = 4096
    iodepth: int = 16
    with_host: bool = False
    tolerance_pct: float = 10.0
    ioengine: str | None = None
    destroy_data: str | None = None


@dataclass(frozen=True)
class TenantCheck:
    """One tenant's planned and achieved IOPS (fio's own figure) and the error in %."""

    tenant: str
    size_gib: float
    planned_iops: float
    achieved_iops: float
    achieved_bw_bytes_per_s: float
    error_pct: float
    ok: bool


@dataclass(frozen=True)
class VerifyOutcome:
    """The stored run, every tenant's check, Jain's index over the tenants'
    achieved/planned ratios, and whether every tenant kept its guarantee."""

    run_id: int
    checks: tuple[TenantCheck, ...]
    jain: float
    isolated: bool
    tolerance_pct: float

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)


def planned_iops(iops: float, bw_bytes_per_s: float, bs_bytes: int) -> float:
    """The IOPS a limit allows at block size ``bs_bytes``: the lower of the IOPS
    limit and bandwidth / block size (0 = that limit is not set)."""
    bounds = [iops] if iops > 0 else []
    bounds += [bw_bytes_per_s / bs_bytes] if bw_bytes_per_s > 0 else []
    return min(bounds)


def _checks(
    plan: QosPlan,
    limits: Sequence[cgroup.Limits],
    achieved: Mapping[str, tuple[float, float]],
    options: VerifyOptions,
) -> list[TenantCheck]:
    sizes = {a.tenant.name: a.tenant.size_gib for a in plan.allocations}
    exact = {a.tenant.name: (a.iops, a.bw_bytes_per_s) for a in plan.allocations}
    exact["host"] = (plan.reserve_iops, plan.reserve_bw_bytes_per_s)
    checks = []
    for limit in limits:
        planned = planned_iops(*exact.get(limit.tenant, (0.0, 0.0)), options.bs_bytes)
        iops, bw = achieved[limit.tenant]
        error = error_pct(planned, iops)
        checks.append(
            TenantCheck(
                limit.tenant,
                sizes.get(limit.tenant, 0.0),
                planned,
                iops,
                bw,
                error,
                abs(error) <= options.tolerance_pct,
            )
        )
    return checks


def verify(
    session: Session,
    plan: QosPlan,
    device: str,
    options: VerifyOptions,
    labels: Mapping[str, str],
) -> VerifyOutcome:
    """Apply ``plan`` on ``device``, run every tenant concurrently, store and compare."""
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    devnum = device_number(device)
    info = prepare_target(
        device, options.rw.writes, session.reporter, destroy_data=options.destroy_data
    )
    limits = tenant_limits(plan, options.with_host)
    engine = options.ioengine or best_engine(Path(info.path))
    written = cgroup.apply(hierarchy, devnum, limits)
    try:
        settings: dict[str, Any] = {
            "qos_plan": plan_document(plan),
            "verify": {**asdict(options), "rw": options.rw.value},
            "cgroup": {"version": hierarchy.version, "root": str(hierarchy.root)},
            "written": [asdict(w) for w in written],
            "device": devnum,
            "ioengine": engine,
        }
        host = collect_host(fio_version())
        run_id = session.store.create_run(PLAN, info, host, labels, settings)
        try:
            achieved = _run(session, run_id, hierarchy, limits, info.path, engine, options)
        except VolbenchError as exc:
            session.store.finish_run(run_id, RunStatus.FAILED, str(exc))
            raise type(exc)(f"{exc} (run {run_id} stored as failed)") from exc
        session.store.finish_run(run_id, RunStatus.COMPLETED)
    finally:
        cgroup.remove([hierarchy.path(limit.tenant) for limit in limits])
    checks = _checks(plan, limits, achieved, options)
    tenants = [c for c in checks if c.tenant != "host" or c.size_gib > 0]
    ratios = [c.achieved_iops / c.planned_iops for c in tenants]
    floor = 1 - options.tolerance_pct / 100
    return VerifyOutcome(
        run_id,
        tuple(checks),
        jain_index(ratios),
        all(r >= floor for r in ratios),
        options.tolerance_pct,
    )


def _run(
    session: Session,
    run_id: int,
    hierarchy: cgroup.Hierarchy,
    limits: Sequence[cgroup.Limits],
    target: str,
    engine: str,
    options: VerifyOptions,
) -> dict[str, tuple[float, float]]:
    """Start every tenant's fio in its cgroup, store each output as a round; return
    tenant -> (IOPS, bytes/s) as fio reported them."""
    workdir = session.runs_dir / str(run_id)
    workloads = []
    jobs = []
    for limit in limits:
        workload = Workload(
            limit.tenant,
            options.rw,
            bs_bytes=options.bs_bytes,
            iodepth=options.iodepth,
            runtime_s=options.duration_s,
            ioengine=engine,
        )
        log_dir = workdir / limit.tenant
        log_dir.mkdir(parents=True, exist_ok=True)

        def join(tenant: str = limit.tenant) -> None:  # runs in the child, before exec
            cgroup.join(hierarchy, tenant, os.getpid())

        workloads.append(workload)
        jobs.append(
            ConcurrentJob(render(JobFile(target, (workload,), engine, log_dir)), log_dir, join)
        )
    session.reporter.note(f"run {run_id}: {len(jobs)} fio processes at once, logs in {workdir}")
    session.reporter.round_started(0, workloads, options.duration_s)
    raws = run_concurrently(jobs, timeout_s=options.duration_s + 60)
    achieved: dict[str, tuple[float, float]] = {}
    for round_no, (workload, raw) in enumerate(zip(workloads, raws, strict=True)):
        if not raw.output.strip():
            raise FioError(
                f"fio of tenant {workload.name} failed with exit code {raw.returncode}: "
                f"{raw.last_error_line or 'no output'}"
            )
        tests = group_tests(parse(raw.output))
        session.store.add_round(
            run_id, round_no, raw.output, tests, {workload.name: workload_record(workload)}
        )
        failed = [t for t in tests if t.error]
        if failed or raw.returncode != 0:
            raise FioError(
                f"fio of tenant {workload.name} failed: {raw.last_error_line or 'see its log'}"
            )
        test = next(t for t in tests if t.name == workload.name)
        achieved[workload.name] = (test.iops, test.bw_bytes_per_s)
    session.reporter.round_done(0, [])
    return achieved
