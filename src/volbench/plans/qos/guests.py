"""QoS tenants that are lab guests (NetEase QoS test: VMs with instance storage on
one KVM host): each tenant of a plan is the running lab guest of its name, its
limits set in the hypervisor, in the guest's QEMU throttle group over QMP
(:func:`volbench.lab.monitor.set_limits`, as ``lab limit`` does), per direction
IOPS and bytes/s as the plan says. QEMU has no proportional weight, so a plan's
weights are not applied to guests (:data:`NO_WEIGHT`).

``verify`` runs every guest's fio (a fio client per guest, its server in the guest,
on the guest's disk) and, with ``--with-host``, the host's own fio on a file of the
guests' shared backing device (:mod:`volbench.lab.backing`) in a cgroup holding it
to the host reserve, all at once: one round of the run engine, each tenant's output
a round of the store. With ``fit_alpha`` two more steps follow: the host's fio alone
on the backing device (C), then every guest at once with its limits lifted (and the
host in its reserve, C0): alpha, :mod:`volbench.analysis.qos_alpha`. The guests'
limits from before are given back and the cgroup removed whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from volbench.analysis.qos import Allocation, QosPlan
from volbench.analysis.qos_alpha import ALONE, FREE
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import HOST, PLAN, VerifyOptions, VerifySetup
from volbench.errors import UsageError
from volbench.lab import guest as lab_guests
from volbench.lab import monitor
from volbench.lab.backing import Backing, of_disk
from volbench.lab.home import guest_dir
from volbench.lab.throttle import Bucket, Limits
from volbench.model import RunSettings, TestResult, Workload
from volbench.plans.placement.fleet_spec import REMOTE_ENGINE
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.qos.guest_launch import GuestTenants
from volbench.plans.qos.setup import device_number, plan_id, tenant_limits
from volbench.plans.qos.verify import tenant_workload
from volbench.plans.runs.engine import Step, drive, open_run
from volbench.plans.runs.execution import Outcome, Session, prepare_runs_dir
from volbench.records import json_object
from volbench.targets import cgroup

NO_WEIGHT = (
    "QEMU's throttle groups have no proportional weight: the plan's weights are not"
    " applied to guests (their IOPS and bandwidth limits are)"
)
HOST_FILE_BYTES = 128 << 20
"""The host tenant's fio file on the backing device."""


def guest_limits(allocation: Allocation) -> Limits:
    """A tenant's planned limits as a throttle group's (IOPS and bytes/s per
    direction, rounded; 0 = no limit)."""
    rates = allocation.limits
    figures = (rates.read_iops, rates.write_iops, rates.read_bps, rates.write_bps)
    read_iops, write_iops, read_bps, write_bps = (
        Bucket(round(f)) if round(f) > 0 else None for f in figures
    )
    return Limits(
        iops_read=read_iops, iops_write=write_iops, bps_read=read_bps, bps_write=write_bps
    )


def tenant_guests(plan: QosPlan) -> list[lab_guests.Guest]:
    """The running lab guest of each tenant's name; UsageError naming the first missing."""
    found = []
    for a in plan.allocations:
        guest = lab_guests.load(a.tenant.name)
        if lab_guests.running_pid(guest.folder) is None:
            raise UsageError(
                f"lab guest {guest.name} is not running: `volbench lab up {guest.name}`"
            )
        found.append(guest)
    return found


def shared_backing(found: Sequence[lab_guests.Guest]) -> Backing:
    """The one backing device every guest's disk is on; UsageError otherwise."""
    backings = {g.name: of_disk(g.disk) for g in found}
    first = next(iter(backings.values()))
    if first is None or any(b != first for b in backings.values()):
        names = ", ".join(backings)
        raise UsageError(
            f"guests {names} are not on one backing device: boot each with"
            " `volbench lab up NAME --backing B` (the same B)"
        )
    return first


def apply_guests(plan: QosPlan) -> list[tuple[str, Limits]]:
    """Give each tenant's guest its planned limits; (guest, limits) in plan order."""
    tenant_guests(plan)
    applied = []
    for a in plan.allocations:
        applied.append((a.tenant.name, monitor.set_limits(a.tenant.name, guest_limits(a)).limits))
    return applied


def verify(
    session: Session, plan: QosPlan, options: VerifyOptions, labels: Mapping[str, str]
) -> Outcome:
    """Apply ``plan`` to its guests and run every tenant at once (then, with
    ``fit_alpha``, the host alone and the guests unlimited); store them."""
    # a killed verification's guests get their own limits back before this one lends
    # them (lend keeps a record it finds: a stale one would then never be given back)
    for line in monitor.reclaim():
        session.reporter.note(line)
    found = tenant_guests(plan)
    shared = shared_backing(found)
    unknown = sorted(set(options.quiet) - {a.tenant.name for a in plan.allocations})
    if unknown:
        raise UsageError(f"--quiet {unknown[0]}: the plan has no tenant of that name")
    host_path = str(shared.host_dir / "host.dat")
    info = prepare_target(
        host_path, options.rw.writes, session.reporter, HOST_FILE_BYTES, force=True
    )
    host = [limit for limit in tenant_limits(plan, options.with_host) if limit.tenant == HOST]
    hierarchy = cgroup.find_hierarchy() if host else None
    devnum = device_number(shared.loop)
    prepare_runs_dir(session.runs_dir)
    written: list[cgroup.Written] = []
    try:
        if hierarchy is not None:
            cgroup.require_root()
            for line in cgroup.reclaim(hierarchy):  # what a killed verify left
                session.reporter.note(line)
            written = cgroup.apply(hierarchy, devnum, host, plan_id(plan), owned=True)
        for guest in found:  # given back below, or by the next volbench if this one is killed
            monitor.lend(guest.name)
        apply_guests(plan)
        session.reporter.note(NO_WEIGHT)
        setup = VerifySetup(
            qos_plan=plan_document(plan),
            verify=replace(options, guests=True),
            cgroup={"version": hierarchy.version, "root": str(hierarchy.root)} if hierarchy else {},
            written=tuple(asdict(w) for w in written),
            device=devnum,
        )
        settings = RunSettings(ioengine=REMOTE_ENGINE, options=json_object(setup))
        run_id, workdir = open_run(session, PLAN, info, labels, settings)
        tenants = GuestTenants(
            {g.name: g for g in found}, hierarchy, host[0].cgroup if host else None, options
        )

        def lift() -> None:
            for guest in found:
                monitor.set_limits(guest.name, Limits())

        return drive(
            session,
            run_id,
            course(plan, options, lift),
            info,
            REMOTE_ENGINE,
            workdir,
            round_runner=tenants,
        )
    finally:
        for guest in found:
            if lab_guests.running_pid(guest_dir(guest.name)) is not None:
                monitor.give_back(guest.name)
        if hierarchy is not None:
            cgroup.remove([hierarchy.path(limit.cgroup) for limit in host])


def course(plan: QosPlan, options: VerifyOptions, lift: Callable[[], None]) -> Steps:
    """The verification's steps: every tenant at once (the host in its reserve), then
    with ``fit_alpha`` the host alone and every tenant again (as much as its queue
    gets, quiet or not) once ``lift`` took the guests' limits away."""
    limits = tenant_limits(plan, options.with_host)
    names = [limit.tenant for limit in limits]
    together = tuple(tenant_workload(limit, REMOTE_ENGINE, options) for limit in limits)
    steps = [Step(together, together=True)]  # --quiet ones ask for their plan only
    if options.fit_alpha:
        steps += [
            Step((_workload(ALONE, options),), note="alpha: the host alone", together=True),
            Step(
                tuple(_workload(FREE + n, options) for n in names),
                note="alpha: the guests without limits, all at once",
                prepare=lift,
                together=True,
            ),
        ]
    return Steps(steps)


def _workload(name: str, options: VerifyOptions) -> Workload:
    return Workload(
        name,
        options.rw,
        bs_bytes=options.bs_bytes,
        iodepth=options.iodepth,
        runtime_s=options.duration_s,
        ioengine=REMOTE_ENGINE,
    )


@dataclass
class Steps:
    """A course of the given steps, each run once, in order."""

    steps: list[Step]

    def next_step(self) -> Step | None:
        return self.steps.pop(0) if self.steps else None

    def committed(self, round_no: int, tests: Sequence[TestResult]) -> None:
        pass

    def foreseen(self) -> tuple[Workload, ...]:
        """No guess: its steps' tests run together."""
        return ()
