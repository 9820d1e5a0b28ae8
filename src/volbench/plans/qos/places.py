"""QoS tenants on places of any kind (``qos verify PLAN --hosts H1,H2 --target
H1:/PATH --target H2:/PATH``): the plan's tenants, in its order, are the places given,
one each, each on a host of its own. Each place is held to its tenant's limits by its
kind (:meth:`volbench.places.kind.PlaceKind.limit`, given back whatever happens) and
every tenant's fio runs at once through one fio client, a job file per host (fio's
``--client=H1 job1 --client=H2 job2``): one round of the run engine, whose tests are
the tenants (the comparison with the plan:
:func:`volbench.analysis.qos_results.check_run`). The places are prepared as every
run's are (:func:`volbench.plans.placement.placed.placed`: safety and identity checks,
the identity checked again before the round); ``--dry-run`` shows each tenant's job
file on its place, and what the places' write checks say, nothing written
(:func:`preview_places`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from volbench.analysis.aggregate import place_tests
from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN, VerifyOptions, VerifySetup
from volbench.errors import UsageError
from volbench.fio.job import JobFile, planned_seconds, render
from volbench.fio.request import OnHosts, Ran
from volbench.model import FioOutput, Place, TargetInfo, TestResult, Workload
from volbench.places import table
from volbench.plans.placement.fleet_preparation import PreparedFleet
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.placed import Placement
from volbench.plans.placement.preview import REFUSED, PlacePreview
from volbench.plans.qos.setup import plan_id, tenant_limits
from volbench.plans.qos.verify import OneStep, limits_text, tenant_workload
from volbench.plans.runs.engine import Step, drive, open_run
from volbench.plans.runs.execution import (
    Outcome,
    RoundContext,
    Session,
    new_workdir,
    round_folder,
)
from volbench.plans.runs.preview import FIO_START_S, DryRun, JobText
from volbench.plans.runs.round import OneProcess, Process, run_round
from volbench.plans.runs.round_status import RoundStatus
from volbench.records import json_object


def tenant_places(plan: QosPlan, placement: Placement, options: VerifyOptions) -> PreparedFleet:
    """The places that are the plan's tenants, one each on a host of its own, in the
    plan's order; UsageError for what this verification cannot do."""
    prepared = placement.fleet
    if prepared is None:
        raise UsageError(NOT_ON_HOSTS)
    check_tenants(plan, prepared.fleet, options)
    return prepared


NOT_ON_HOSTS = "qos verify --target takes places on hosts: HOST:PATH, with --hosts"


def check_tenants(plan: QosPlan, fleet: Fleet, options: VerifyOptions) -> None:
    """UsageError unless ``fleet``'s places can be the plan's tenants: one each, on a
    host of its own, in the plan's order, with options a verification on places takes."""
    names = [a.tenant.name for a in plan.allocations]
    if any(p.host is None for p in fleet.places):
        raise UsageError(NOT_ON_HOSTS)
    if options.with_host:
        raise UsageError("--with-host runs on this machine's device: not with --hosts")
    if len(fleet.places) != len(names) or len({p.host for p in fleet.places}) != len(names):
        raise UsageError(
            f"the plan has {len(names)} tenants ({', '.join(names)}): give each a place on"
            " a host of its own, in that order (--target HOST:PATH)"
        )
    unknown = sorted(set(options.quiet) - set(names))
    if unknown:
        raise UsageError(f"--quiet {unknown[0]}: the plan has no tenant of that name")


def preview_places(
    plan: QosPlan, fleet: Fleet, place: PlacePreview, options: VerifyOptions, runs_dir: Path
) -> DryRun:
    """What :func:`verify_places` would run (``--dry-run``): each tenant's job file on
    its place, all at once through one fio client, each place held to its tenant's
    limits by its kind; what its places' write checks say (``place``, the look at
    them: :func:`~volbench.plans.placement.preview.previewed_place`). Nothing is
    limited, run or stored."""
    check_tenants(plan, fleet, options)
    limits = tenant_limits(plan)
    engine, found = place.engine(options.ioengine)
    size = place.target.capacity_bytes
    folder = round_folder(new_workdir(runs_dir), 0)
    workloads = [tenant_workload(limit, engine, options) for limit in limits]
    files = tuple(
        JobText(
            f"tenant {w.name} on {p.label}",
            tenant_job(p, w, engine, folder, size),
            planned_seconds((w,)),
        )
        for p, w in zip(fleet.places, workloads, strict=True)
    )
    does = "writes" if options.rw.writes else "reads"
    tenants = [
        f"{limits_text(limit)}; {does} {p.label} (a {table.kind_of(p.host or '').name} place)"
        for p, limit in zip(fleet.places, limits, strict=True)
    ]
    refused = [f"{REFUSED}{line}" for line in table.cannot_limit(fleet.places)]
    checked = (
        ["every place written passes its kind's safety checks (nothing was written)"]
        if options.rw.writes and not place.refused
        else []
    )
    seconds = options.duration_s + FIO_START_S
    target = TargetInfo(", ".join(p.label for p in fleet.places), "fleet", size)
    intro = "every tenant's fio at the same time through one fio client, each place held to"
    notes = (
        *place.notes,
        *refused,
        *checked,
        *found,
        f"{intro} its tenant's limits by its kind:",
        *tenants,
    )
    return DryRun(PLAN, target, engine, files, 1, len(files), seconds, seconds, notes)


def tenant_job(
    place: Place, workload: Workload, engine: str, folder: Path, size_bytes: int | None
) -> str:
    """The job file of a tenant's ``workload`` on its ``place`` (its active range
    ``size_bytes``, None: the place's own), logs in ``folder``."""
    extra = {} if size_bytes is None else {"size": str(size_bytes)}
    return render(JobFile(place.path, (workload,), engine, folder, extra))


def verify_places(
    session: Session,
    plan: QosPlan,
    placement: Placement,
    options: VerifyOptions,
    labels: Mapping[str, str],
) -> Outcome:
    """Hold each tenant's place to its limits and run every tenant at once; store them."""
    prepared = tenant_places(plan, placement, options)
    fleet = prepared.fleet
    limits = tenant_limits(plan)
    engine = placement.engine(session.runner, options.ioengine)
    with table.limited(fleet.places, limits, plan_id(plan)) as written:
        for line in written:
            session.reporter.note(f"tenant {line.tenant}: {line.file} {line.value}")
        setup = VerifySetup(
            qos_plan=plan_document(plan),
            verify=options,
            written=tuple(asdict(w) for w in written),
        )
        settings = dataclasses.replace(
            prepared.settings, ioengine=engine, options=json_object(setup)
        )
        run_id, workdir = open_run(session, PLAN, placement.target, labels, settings)
        workloads = tuple(tenant_workload(limit, engine, options) for limit in limits)
        return drive(
            session,
            run_id,
            OneStep(Step(workloads, together=True)),
            placement.target,
            engine,
            workdir,
            round_runner=PlaceTenants(fleet, options.duration_s),
        )


@dataclass(frozen=True)
class PlaceTenants:
    """The engine's round runner: every tenant at once, each on its place
    (:class:`PlacesLaunch`)."""

    fleet: Fleet
    duration_s: float

    def __call__(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]:
        launch = PlacesLaunch(self.fleet, self.duration_s)
        return run_round(session, context, workloads, launch=launch, split=tenant_tests)


def tenant_tests(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
    """A tenant's test is the run's own, whatever place ran it: its name, the tenant's,
    says whose it is (a place's share would count it twice in the comparison)."""
    together, _ = place_tests(output)
    return together, []


@dataclass(frozen=True)
class PlacesLaunch(OneProcess):
    """One fio client: each tenant's job file on its place's host
    (:class:`volbench.fio.request.OnHosts`), all at once."""

    fleet: Fleet
    duration_s: float
    watched: bool = False  # fio's client prints no interim documents
    keep_going: bool = False
    checks_logs: bool = False

    def planned_s(self, workloads: Sequence[Workload]) -> float:
        return self.duration_s

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        (process,) = processes
        size, engine = self.fleet.size_bytes, context.ioengine
        jobs = {
            self.fleet.address(place.host or ""): tenant_job(
                place, workload, engine, process.folder, size
            )
            for place, workload in zip(self.fleet.places, process.workloads, strict=True)
        }
        return session.runner.execute(
            OnHosts(
                jobs, process.folder, lambda f: session.reporter.note(f"host {f.host} {f.reason}")
            )
        )
