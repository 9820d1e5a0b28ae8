"""Verifying a QoS plan: one fio per tenant, all at once, each inside its own cgroup.

The plan's limits are applied as cgroups ``volbench-<tenant>`` (and
``volbench-<plan id>-host`` with the host reserve when asked); every tenant's fio starts
inside its cgroup at the same moment and drives the device harder than its
limit (a deep queue), so each tenant measures what its allocation delivers under
contention. The tenants are one step of the run engine (:mod:`volbench.plans.runs.engine`,
which records, finishes and resumes the run as for every plan); each tenant's fio
output is committed as one round of the run (round number = tenant order), and the
cgroups are removed afterwards whatever happened.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import (
    PLAN,
    VerifyOptions,
    VerifySetup,
    planned_iops,
)
from volbench.errors import TargetError, UsageError
from volbench.fio.concurrent import ConcurrentJob
from volbench.fio.executable import best_engine
from volbench.fio.job import JobFile, render
from volbench.fio.request import Ran, Together
from volbench.model import (
    RW,
    RunRecord,
    RunSettings,
    TargetInfo,
    TestResult,
    Workload,
)
from volbench.plans.placement.placed import Resuming
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.placement.preview import choose_engine, preview_target
from volbench.plans.qos.setup import device_number, plan_id, require_room, tenant_limits
from volbench.plans.runs.engine import Step, drive, open_run, recorded_engine
from volbench.plans.runs.execution import Outcome, RoundContext, Session, prepare_runs_dir
from volbench.plans.runs.preview import FIO_START_S, DryRun, job_texts
from volbench.plans.runs.round import Process, run_round
from volbench.plans.runs.round_status import RoundStatus
from volbench.records import json_object
from volbench.targets import cgroup
from volbench.targets.hold import reach, reached


def verify(
    session: Session,
    plan: QosPlan,
    device: str,
    options: VerifyOptions,
    labels: Mapping[str, str],
) -> Outcome:
    """Apply ``plan`` on ``device`` and run every tenant concurrently; store them (the
    comparison with the plan: :func:`volbench.analysis.qos_results.check_run`)."""
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    devnum = device_number(device)
    require_room(plan, device, options.nominal_sizes)
    info = prepare_target(
        device, options.rw.writes, session.reporter, destroy_data=options.destroy_data
    )
    limits = tenant_limits(plan, options.with_host)
    unknown = sorted(set(options.quiet) - {a.tenant.name for a in plan.allocations})
    if unknown:
        raise UsageError(f"--quiet {unknown[0]}: the plan has no tenant of that name")
    engine = options.ioengine or best_engine(Path(info.path))
    prepare_runs_dir(session.runs_dir)
    for line in cgroup.reclaim(hierarchy):  # what a killed verify left
        session.reporter.note(line)
    written = cgroup.apply(hierarchy, devnum, limits, plan_id(plan), owned=True)
    try:
        setup = VerifySetup(
            qos_plan=plan_document(plan),
            verify=options,
            cgroup={"version": hierarchy.version, "root": str(hierarchy.root)},
            written=tuple(asdict(w) for w in written),
            device=devnum,
        )
        settings = RunSettings(ioengine=engine, options=json_object(setup))
        run_id, workdir = open_run(session, PLAN, info, labels, settings)
        return _drive(session, run_id, hierarchy, limits, info, engine, options, workdir)
    finally:
        cgroup.remove([hierarchy.path(limit.cgroup) for limit in limits])


def resume(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """Run again, in the same run, a verification that was interrupted before any
    tenant's result was stored (its tenants run together: a share measured alone
    would not be a verification). UsageError when some tenants were stored. Its
    device is prepared with the options it recorded (``how`` has nothing for it)."""
    session.reporter.note(f"resuming run {record.id}: its tenants run again together")
    run = session.store.get_run(record.id)
    if run.raw_outputs:
        raise UsageError(
            f"run {run.id}: {len(run.raw_outputs)} of its tenants were stored before it "
            "stopped, and tenants are only measured together: start a new `volbench qos verify`"
        )
    setup = VerifySetup.of(run)
    plan, options = setup.plan, setup.verify
    if options.guests:
        raise UsageError(
            f"run {run.id} verified lab guests, whose limits it gave back when it stopped:"
            " start a new `volbench qos verify --guests`"
        )
    if run.settings.places:
        raise UsageError(
            f"run {run.id} verified places on hosts, whose limits it gave back when it"
            " stopped: start a new `volbench qos verify --hosts`"
        )
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    device = run.target.path
    info = prepare_target(
        device, options.rw.writes, session.reporter, destroy_data=options.destroy_data
    )
    limits = tenant_limits(plan, options.with_host)
    _clear_left_over(session, hierarchy, plan_id(plan))
    cgroup.apply(hierarchy, device_number(device), limits, plan_id(plan), owned=True)
    session.store.reopen_run(run.id)
    try:
        workdir = run.logs_dir(session.runs_dir)
        engine = recorded_engine(run)
        return _drive(session, run.id, hierarchy, limits, info, engine, options, workdir)
    finally:
        cgroup.remove([hierarchy.path(limit.cgroup) for limit in limits])


def _clear_left_over(session: Session, hierarchy: cgroup.Hierarchy, plan: str) -> None:
    """Remove the idle cgroups a killed verification left (a SIGKILL gives it no chance
    to): any volbench's whose maker has ended (:func:`volbench.targets.cgroup.reclaim`),
    and those of ``plan`` that record no maker (an older volbench's: the run to resume
    is not running, so they are its own); never one whose maker still runs.
    TargetError when one of ``plan`` still has processes."""
    for line in cgroup.reclaim(hierarchy):
        session.reporter.note(line)
    unowned = [p for p in cgroup.ours(hierarchy, plan) if cgroup.owner_of(p) is None]
    removed, busy = cgroup.remove_idle(unowned)
    if busy:
        raise TargetError(
            f"cgroup {busy[0]} of this plan still has processes: stop them, then resume"
        )
    if removed:
        session.reporter.note(f"removed the cgroups the stopped run left: {', '.join(removed)}")


def _drive(
    session: Session,
    run_id: int,
    hierarchy: cgroup.Hierarchy,
    limits: Sequence[cgroup.Limits],
    info: TargetInfo,
    engine: str,
    options: VerifyOptions,
    workdir: Path,
) -> Outcome:
    """Every tenant at once, as the engine's one step."""
    workloads = tuple(tenant_workload(limit, engine, options) for limit in limits)
    tenants = Tenants(hierarchy, limits, options.duration_s)
    return drive(
        session,
        run_id,
        OneStep(Step(workloads, together=True)),
        info,
        engine,
        workdir,
        round_runner=tenants,
    )


def preview(plan: QosPlan, device: str, options: VerifyOptions, runs_dir: Path) -> DryRun:
    """What ``verify`` would run (``--dry-run``): every tenant's fio job file, all at
    once, each in the cgroup of its limits; nothing is applied, run or stored."""
    limits = tenant_limits(plan, options.with_host)
    info, notes = preview_target(device, options.rw.writes, destroy_data=options.destroy_data)
    engine, found = choose_engine(info, options.ioengine)
    workloads = [tenant_workload(limit, engine, options) for limit in limits]
    rounds = [(w.name, (w,)) for w in workloads]
    files = job_texts(rounds, info, engine, runs_dir, [w.name for w in workloads])
    cgroups = [f"{limits_text(limit)}; cgroup {cgroup.PREFIX}{limit.cgroup}" for limit in limits]
    seconds = options.duration_s + FIO_START_S
    return DryRun(
        PLAN,
        info,
        engine,
        files,
        len(files),
        len(files),
        seconds,
        seconds,
        (*notes, *found, "every tenant's fio at the same time, each in its cgroup:", *cgroups),
    )


def limits_text(limit: cgroup.Limits) -> str:
    """A tenant's limits as a dry run shows them (0: none)."""
    return (
        f"tenant {limit.tenant}: read {limit.read_iops} IOPS / {limit.read_bps} B/s,"
        f" write {limit.write_iops} IOPS / {limit.write_bps} B/s"
    )


def _direction(limit: cgroup.Limits, rw: RW) -> tuple[int, int]:
    """(IOPS, bytes/s) limits of the direction ``rw`` drives."""
    return (limit.write_iops, limit.write_bps) if rw.writes else (limit.read_iops, limit.read_bps)


def tenant_workload(limit: cgroup.Limits, engine: str, options: VerifyOptions) -> Workload:
    """A tenant's workload: as much as its queue gets, or (quiet) its planned IOPS."""
    quiet = limit.tenant in options.quiet
    return Workload(
        limit.tenant,
        options.rw,
        bs_bytes=options.bs_bytes,
        iodepth=options.iodepth,
        runtime_s=options.duration_s,
        ioengine=engine,
        rate_iops=(
            max(1, round(planned_iops(*_direction(limit, options.rw), options.bs_bytes)))
            if quiet
            else None
        ),
    )


@dataclass
class OneStep:
    """A course of one step, run once."""

    step: Step | None

    def next_step(self) -> Step | None:
        step, self.step = self.step, None
        return step

    def committed(self, round_no: int, tests: Sequence[TestResult]) -> None:
        pass

    def foreseen(self) -> tuple[Workload, ...]:
        """No guess: its steps' tests run together."""
        return ()


@dataclass(frozen=True)
class Tenants:
    """Runs every tenant's fio at once, each in its cgroup (:class:`TenantsLaunch`), as
    the engine's round runner: each tenant's output is a round of its own."""

    hierarchy: cgroup.Hierarchy
    limits: Sequence[cgroup.Limits]
    duration_s: float

    def __call__(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]:
        workdir = context.workdir
        session.reporter.note(f"{len(workloads)} fio processes at once, logs in {workdir}")
        launch = TenantsLaunch(self.hierarchy, self.limits, self.duration_s, workdir)
        return run_round(session, context, workloads, launch=launch)


@dataclass(frozen=True)
class TenantsLaunch:
    """A fio process per tenant, started at once on this machine, each joining its
    tenant's cgroup in the child before fio runs
    (:class:`volbench.fio.request.Together`); their files in ``workdir/TENANT``."""

    hierarchy: cgroup.Hierarchy
    limits: Sequence[cgroup.Limits]
    duration_s: float
    workdir: Path
    watched: bool = True
    keep_going: bool = False
    checks_logs: bool = False

    def processes(self, folder: Path, workloads: Sequence[Workload]) -> list[Process]:
        return [Process((w,), self.workdir / w.name, f"tenant {w.name}") for w in workloads]

    def planned_s(self, workloads: Sequence[Workload]) -> float:
        return self.duration_s

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        target, ioengine = context.target, context.ioengine
        jobs = []
        path, held = reach(target.path), reached((target.path,))  # the checked file itself
        for limit, process in zip(self.limits, processes, strict=True):

            def join(group: str = limit.cgroup) -> None:  # runs in the child, before exec
                cgroup.join(self.hierarchy, group, os.getpid())

            text = render(JobFile(path, process.workloads, ioengine, process.folder, held=held))
            jobs.append(ConcurrentJob(text, process.folder, join))
        return session.runner.execute(Together(jobs, self.duration_s + 60, status.on_status))
