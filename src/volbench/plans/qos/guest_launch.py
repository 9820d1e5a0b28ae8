"""The round of a QoS verification on lab guests (:mod:`volbench.plans.qos.guests`):
every tenant's fio at once, a fio client per guest (fio's server in the guest, on its
disk) and the host's own fio here on the shared backing device, in the host's cgroup
except when it runs alone. Every fio is reached through ``session.runner`` (the
replay runner answers all of them in tests)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from volbench.analysis.aggregate import group_tests
from volbench.analysis.qos_alpha import ALONE, FREE
from volbench.analysis.qos_results import HOST, VerifyOptions
from volbench.fio.client import HostAddress, HostFailure
from volbench.fio.concurrent import ConcurrentJob
from volbench.fio.job import JobFile, render
from volbench.fio.request import OnHosts, Ran, Together
from volbench.fio.runner import RawRun
from volbench.lab import guest as lab_guests
from volbench.model import FioOutput, TestResult, Workload
from volbench.places.lab import DISK
from volbench.plans.runs.execution import RoundContext, Session
from volbench.plans.runs.round import Process, run_round
from volbench.plans.runs.round_status import RoundStatus
from volbench.targets import cgroup


def tenant_of(test: str) -> str:
    """The tenant a test's fio is of: ``free.g40`` -> ``g40``, ``alone.host`` -> ``host``."""
    for prefix in (FREE, "alone."):
        if test.startswith(prefix):
            return test[len(prefix) :]
    return test


@dataclass(frozen=True)
class GuestTenants:
    """The engine's round runner: a step's tenants at once (:class:`GuestsLaunch`)."""

    guests: Mapping[str, lab_guests.Guest]
    hierarchy: cgroup.Hierarchy | None
    host_group: str | None
    options: VerifyOptions

    def __call__(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]:
        workdir = context.workdir
        session.reporter.note(f"{len(workloads)} tenants at once, logs in {workdir}")
        launch = GuestsLaunch(self, context.target.path, workdir)
        return run_round(session, context, workloads, launch=launch, split=tenant_tests)


def tenant_tests(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
    """A tenant's tests are the run's own, whoever ran them: a guest's fio client
    output names the guest's address as fio's hostname, which would store them as a
    place's share (left out of the run's headline, list and checks); the tenant's
    name, the test's, already says whose they are."""
    return [dataclasses.replace(t, hostname=None) for t in group_tests(output)], []


@dataclass(frozen=True)
class GuestsLaunch:
    """A fio per tenant, started at once: a fio client per guest (its fio server in
    the guest, on its disk :data:`~volbench.places.lab.DISK`) and the host's own fio
    here on ``host_path`` (in the host's cgroup, except alone); their files in
    ``workdir/TEST``."""

    tenants: GuestTenants
    host_path: str
    workdir: Path
    watched: bool = False  # fio's clients print no interim documents
    keep_going: bool = False
    checks_logs: bool = False

    def processes(self, folder: Path, workloads: Sequence[Workload]) -> list[Process]:
        return [Process((w,), self.workdir / w.name, f"tenant {w.name}") for w in workloads]

    def planned_s(self, workloads: Sequence[Workload]) -> float:
        return self.tenants.options.duration_s

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        ioengine = context.ioengine
        calls = [
            self._call(session, index, p, ioengine, status) for index, p in enumerate(processes)
        ]
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            futures = [pool.submit(call) for call in calls]
            done = [future.result() for future in futures]
        raws = tuple(raw for raw, _ in done)
        return Ran(raws, tuple(f for _, lost in done for f in lost))

    def _call(
        self, session: Session, index: int, process: Process, ioengine: str, status: RoundStatus
    ) -> Callable[[], tuple[RawRun, tuple[HostFailure, ...]]]:
        (workload,) = process.workloads
        tenant = tenant_of(workload.name)
        runner = session.runner
        if tenant == HOST:
            text = render(JobFile(self.host_path, process.workloads, ioengine, process.folder))
            hierarchy, group = self.tenants.hierarchy, self.tenants.host_group
            alone = workload.name == ALONE

            def join() -> None:  # in the child, before fio runs
                if hierarchy is not None and group is not None and not alone:
                    cgroup.join(hierarchy, group, os.getpid())

            def local() -> tuple[RawRun, tuple[HostFailure, ...]]:
                job = ConcurrentJob(text, process.folder, join)
                timeout = self.tenants.options.duration_s + 60
                ran = runner.execute(
                    Together([job], timeout, lambda _, d: status.on_status(index, d))
                )
                return ran.raw, ()

            return local
        guest = self.tenants.guests[tenant]
        address = HostAddress(guest.address, guest.fio_port, name=guest.place)
        text = render(JobFile(DISK, process.workloads, ioengine, process.folder))

        def remote() -> tuple[RawRun, tuple[HostFailure, ...]]:
            done = runner.execute(
                OnHosts(
                    {address: text},
                    process.folder,
                    lambda f: session.reporter.note(f"{guest.place}: {f.reason}"),
                )
            )
            return done.raw, done.failures

        return remote
