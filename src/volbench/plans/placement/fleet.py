"""Any plan on several targets at once: local targets in one fio process, or
targets on several hosts through fio's client/server mode.

Every round of the plan runs on every place at the same time: the round's job
file repeats each workload once per target, in the workload's reporting group
(local), or each host gets that job file for its own targets (client/server).
Both start together: one fio process starts every local job at once, and the fio
client hands every host its jobs over connections it opened first. Per-second
logs carry Unix-epoch times (``log_unix_epoch``), a common clock for all places.

Each round stores the aggregate of every test (rates summed over places, latency
merged from the json+ bins) as the run's results, and each place's own share
with the place's label in ``hostname``. With ``solo``, each fixed round is first
run on every place alone (stored as that place's ``solo.TEST`` rows): the figures
the shared-limit finding compares the concurrent ones with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from volbench.analysis.aggregate import place_tests
from volbench.errors import FioError
from volbench.fio.client import HostAddress, HostFailure
from volbench.fio.job import JobFile, render
from volbench.fio.job_text import opened_file
from volbench.fio.request import OnHosts, Ran
from volbench.model import (
    FioOutput,
    Place,
    TestResult,
    Workload,
)
from volbench.plans.placement.fleet_preparation import PreparedFleet as PreparedFleet
from volbench.plans.placement.fleet_spec import REMOTE_ENGINE as REMOTE_ENGINE
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.named import check_remote_file
from volbench.plans.runs.execution import RoundContext, Session
from volbench.plans.runs.remote_watch import watching
from volbench.plans.runs.round import (
    HostsLost,
    JobLayout,
    Launch,
    LocalLaunch,
    OneProcess,
    Process,
    run_round,
)
from volbench.plans.runs.round_status import RoundStatus
from volbench.targets.hold import reach, reached


@dataclass
class FleetRounds:
    """Runs one round on the fleet's places and commits it (see
    :func:`volbench.plans.runs.round.run_round`, which every round takes)."""

    fleet: Fleet
    alone: Mapping[int, tuple[Place, ...]] = field(default_factory=dict)
    failures: list[tuple[int, HostFailure]] = field(default_factory=list)
    told: set[str] = field(default_factory=set)
    """Hosts whose missing samples the user was told of."""

    def places(self, round_no: int) -> tuple[Place, ...]:
        lost = {failure.host for _, failure in self.failures}
        return tuple(
            p
            for p in self.alone.get(round_no, self.fleet.places)
            if p.host is None or str(self.fleet.address(p.host)) not in lost
        )

    def note(self) -> str | None:
        """What went wrong with hosts during the run (None: nothing)."""
        if not self.failures:
            return None
        lost = "; ".join(f"host {f.host} {f.reason} in round {n}" for n, f in self.failures)
        return f"{lost}; the run went on without it (--keep-going)"

    def __call__(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]:
        """The round (:meth:`_round`), its other hosts sampled while it runs
        (:func:`volbench.plans.runs.remote_watch.watching`)."""
        places = self.places(context.round_no)
        with watching(session, self.fleet.samplers, places, self.told, context.watch) as watch:
            return self._round(session, dataclasses.replace(context, watch=watch), workloads)

    def _round(
        self, session: Session, context: RoundContext, workloads: Sequence[Workload]
    ) -> tuple[list[TestResult], str | None]:
        round_no, ioengine = context.round_no, context.ioengine
        places = self.places(round_no)
        if not places:
            raise FioError(f"round {round_no}: no host is left to run it")
        if any(w.rw.writes for w in workloads):
            for place in places:  # checked by the host's own fio again: nothing holds it
                if place in self.fleet.checked_files:
                    check_remote_file(place, self.fleet.address(place.host or ""))
        extra = {"log_unix_epoch": "1"}
        if self.fleet.size_bytes is not None:
            extra["size"] = str(self.fleet.size_bytes)

        def layout(shares: Sequence[Place]) -> JobLayout:
            # logs NAME@N, N the place's number in the run, on the Unix-epoch clock
            tags = tuple(str(self.fleet.places.index(p) + 1) for p in shares)
            paths = tuple(_fio_path(p) for p in shares)
            held = reached(p.path for p in shares if p.host is None)
            files = tuple(f.path for f in self.fleet.files)
            return lambda log_dir: JobFile(
                "", tuple(workloads), ioengine, log_dir, extra, paths, tags, held, files
            )

        # fio names a client's jobs by the address alone: back to volbench's labels
        labels = {_fio_label(self.fleet, p): p.label for p in places}

        def split(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
            together, shares = place_tests(output)
            if self.fleet.files:  # jobs on their own files: each share by its place's
                _, shares = place_tests(_by_place(self.fleet, places, output))
            shares = [
                dataclasses.replace(t, hostname=labels.get(t.hostname or "", t.hostname))
                for t in shares
            ]
            if round_no in self.alone:  # a place alone: only its share, as solo rows
                return [], shares
            return together, shares

        launch: Launch = (
            HostsLaunch(self.fleet, places, layout, self.failures, round_no)
            if self.fleet.remote
            else LocalLaunch(layout(places))
        )
        try:
            return run_round(
                session, context, workloads, launch=launch, split=split, places=len(places)
            )
        except HostsLost as lost:  # before fio printed anything for the round
            if self.fleet.keep_going and self.places(round_no):
                session.reporter.note(f"round {round_no} runs again without the lost host")
                return self._round(session, context, workloads)
            raise FioError(
                f"{lost} in round {round_no}: fio printed no result for the round"
                + ("" if self.fleet.keep_going else " (use --keep-going to go on without it)")
            ) from lost


@dataclass(frozen=True)
class HostsLaunch(OneProcess):
    """A round's shares on other hosts, through one fio client: each host gets the job
    file of its places (:class:`volbench.fio.request.OnHosts`). Hosts that fail
    are told to the user and added to ``lost`` (the fleet's record of them)."""

    fleet: Fleet
    places: tuple[Place, ...]
    layout: Callable[[Sequence[Place]], JobLayout]
    lost: list[tuple[int, HostFailure]]
    round_no: int
    watched: bool = False  # fio's client prints no interim documents
    checks_logs: bool = False

    @property
    def keep_going(self) -> bool:
        return self.fleet.keep_going

    def start(
        self,
        session: Session,
        context: RoundContext,
        processes: Sequence[Process],
        status: RoundStatus,
    ) -> Ran:
        (process,) = processes
        by_host: dict[HostAddress, list[Place]] = {}
        for place in self.places:
            by_host.setdefault(self.fleet.address(place.host or ""), []).append(place)
        done = session.runner.execute(
            OnHosts(
                {h: render(self.layout(shares)(process.folder)) for h, shares in by_host.items()},
                process.folder,
                lambda f: session.reporter.note(f"host {f.host} {f.reason}"),
                self.fleet.keep_going,
            )
        )
        self.lost.extend((self.round_no, f) for f in done.failures)
        return done


def _by_place(fleet: Fleet, places: Sequence[Place], output: FioOutput) -> FioOutput:
    """``output`` with each job of a job file's own files (:attr:`Fleet.files`) named
    as on the place whose folder or file it opened (fio names it by its address, and
    the file, or its ``directory``), so that a place's share merges all of them."""
    hosts = {_fio_label(fleet, p).rpartition(":")[0]: p.host for p in places}
    jobs = []
    for job in output.jobs:
        path = opened_file(job.options) or job.options.get("directory")
        host = hosts.get(job.hostname or "")
        place = fleet.place_of_file(host, path) if host and path else None
        if place is not None:
            options = {**job.options, "filename": place.path}
            job = dataclasses.replace(job, options=options)
        jobs.append(job)
    return dataclasses.replace(output, jobs=tuple(jobs))


def _fio_path(place: Place) -> str:
    """The path fio is given for the place: on this machine, the checked target held
    open (:func:`volbench.targets.hold.reach`)."""
    return reach(place.path) if place.host is None else place.path


def _fio_label(fleet: Fleet, place: Place) -> str:
    """The place's label as fio's output gives it: the address fio's client connects
    to, without the port."""
    if place.host is None:
        return place.label
    return f"{fleet.address(place.host).host.strip('[]')}:{place.path}"
