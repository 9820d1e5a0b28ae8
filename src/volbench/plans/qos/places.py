"""QoS tenants on places of any kind (``qos verify PLAN --hosts H1,H2 --target
H1:/PATH --target H2:/PATH``): the plan's tenants, in its order, are the places given,
one each, each on a host of its own. Each place is held to its tenant's limits by its
kind (:meth:`volbench.places.kind.PlaceKind.limit`, given back whatever happens) and
every tenant's fio runs at once through one fio client, a job file per host (fio's
``--client=H1 job1 --client=H2 job2``): one round of the run engine, whose tests are
the tenants (the comparison with the plan:
:func:`volbench.analysis.qos_results.check_run`). The places are prepared as every
run's are (:func:`volbench.plans.placement.placed.placed`: safety and identity checks,
the identity checked again before the round)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from volbench.analysis.aggregate import place_tests
from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN, VerifyOptions, VerifySetup
from volbench.errors import UsageError
from volbench.fio.job import JobFile, render
from volbench.fio.request import OnHosts, Ran
from volbench.model import FioOutput, Place, TestResult, Workload
from volbench.places import table
from volbench.plans.placement.fleet_preparation import PreparedFleet
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.placed import Placement
from volbench.plans.qos.setup import plan_id, tenant_limits
from volbench.plans.qos.verify import OneStep, tenant_workload
from volbench.plans.runs.engine import Step, drive, open_run
from volbench.plans.runs.execution import Outcome, RoundContext, Session
from volbench.plans.runs.round import OneProcess, Process, run_round
from volbench.plans.runs.round_status import RoundStatus
from volbench.records import json_object


def tenant_places(plan: QosPlan, placement: Placement, options: VerifyOptions) -> PreparedFleet:
    """The places that are the plan's tenants, one each on a host of its own, in the
    plan's order; UsageError for what this verification cannot do."""
    names = [a.tenant.name for a in plan.allocations]
    prepared = placement.fleet
    if prepared is None or any(p.host is None for p in prepared.fleet.places):
        raise UsageError("qos verify --target takes places on hosts: HOST:PATH, with --hosts")
    fleet = prepared.fleet
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
    return prepared


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
        extra = {} if self.fleet.size_bytes is None else {"size": str(self.fleet.size_bytes)}

        def job(place: Place, workload: Workload) -> str:
            return render(JobFile(place.path, (workload,), context.ioengine, process.folder, extra))

        jobs = {
            self.fleet.address(place.host or ""): job(place, workload)
            for place, workload in zip(self.fleet.places, process.workloads, strict=True)
        }
        return session.runner.execute(
            OnHosts(
                jobs, process.folder, lambda f: session.reporter.note(f"host {f.host} {f.reason}")
            )
        )
