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

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from volbench.analysis.aggregate import place_tests
from volbench.errors import FioError, UsageError
from volbench.fio.client import HostAddress, HostFailure, parse_host
from volbench.fio.job import JobFile, render
from volbench.fio.server import probe_all
from volbench.fio.tunnel import connected as connected_hosts
from volbench.fio.tunnel import is_ssh
from volbench.lab.place import guest_disks_bytes
from volbench.model import (
    FioOutput,
    HostProbe,
    Place,
    PlaceRecord,
    RunSettings,
    TargetInfo,
    TestResult,
    Workload,
)
from volbench.plans.execution import PlanSpec, Session
from volbench.plans.places import check_remote_file, named_by, names_remote
from volbench.plans.preparation import prepare_target
from volbench.plans.remote_watch import Samplers, sampled, watching
from volbench.plans.reporter import Reporter
from volbench.plans.round import (
    HostsLost,
    JobLayout,
    Launch,
    Launched,
    LocalLaunch,
    OneProcess,
    Process,
    run_round,
)
from volbench.plans.round_status import RoundStatus

REMOTE_ENGINE = "libaio"
"""ioengine on other hosts unless ``--ioengine`` says otherwise (fio has it on every Linux)."""

SOLO_PREFIX = "solo."
"""Per-place results of a place running alone carry this before the test name."""


@dataclass(frozen=True)
class Fleet:
    """The places of a multi-target run and how to treat a host that fails.

    ``size_bytes`` is the active range on each target (fio's ``size``): needed for
    remote targets, which volbench cannot inspect. ``endpoints``: where fio's client
    reaches each host named in the places, ``samplers``: each such host's sampler or
    why it has none (both set by :func:`connected`).
    """

    places: tuple[Place, ...]
    keep_going: bool = False
    solo: bool = False
    size_bytes: int | None = None
    endpoints: Mapping[str, HostAddress] = field(default_factory=dict, compare=False)
    samplers: Samplers = field(default_factory=dict, compare=False)

    def address(self, host: str) -> HostAddress:
        """Where fio's client reaches ``host`` (a place's host name)."""
        if host in self.endpoints:
            return self.endpoints[host]
        if is_ssh(host):
            raise FioError(f"{host} is not connected (volbench opens ssh hosts before a run)")
        return parse_host(host)

    @property
    def remote(self) -> bool:
        return any(p.host is not None for p in self.places)

    def check_stall_policy(self, abort_on_stall: bool) -> None:
        """UsageError for ``--abort-on-stall`` on other hosts: nothing watches them
        (fio's client mode sends no interim figures)."""
        if abort_on_stall and self.remote:
            raise UsageError(
                "--abort-on-stall cannot watch targets on other hosts (fio's client mode "
                "sends no interim figures): leave it out for --hosts runs"
            )

    def hosts(self) -> list[HostAddress]:
        """The distinct hosts, in the order their places were given."""
        seen: dict[str, HostAddress] = {}
        for place in self.places:
            if place.host is not None and place.host not in seen:
                seen[place.host] = self.address(place.host)
        return list(seen.values())


@contextlib.contextmanager
def connected(fleet: Fleet) -> Iterator[Fleet]:
    """The fleet with a way to reach every host for the block: ``ssh://`` hosts
    through SSH tunnels (:mod:`volbench.fio.tunnel`), each sampled through a second
    session (:mod:`volbench.plans.remote_watch`), all closed however the block ends."""
    names = list(dict.fromkeys(p.host for p in fleet.places if p.host is not None))
    with connected_hosts(names) as addresses, sampled(fleet.places) as samplers:
        endpoints = dict(zip(names, addresses, strict=True))
        yield dataclasses.replace(fleet, endpoints=endpoints, samplers=samplers)


def schedule(plan: PlanSpec, fleet: Fleet) -> tuple[PlanSpec, dict[int, tuple[Place, ...]]]:
    """The plan as the fleet runs it, and the places of the rounds that are not run
    on every place: with ``solo``, each fixed round once on each place alone, its
    tests renamed ``solo.TEST``, then on all places together."""
    plan = plan.one_test_per_round()  # as execute() runs it: round numbers line up
    if not fleet.solo or len(fleet.places) < 2:
        return plan, {}
    rounds: list[tuple[Workload, ...]] = []
    alone: dict[int, tuple[Place, ...]] = {}
    for workloads in plan.rounds:
        for place in fleet.places:
            alone[len(rounds)] = (place,)
            rounds.append(
                tuple(dataclasses.replace(w, name=SOLO_PREFIX + w.name) for w in workloads)
            )
        rounds.append(workloads)
    return dataclasses.replace(plan, rounds=tuple(rounds)), alone


@dataclass
class FleetRounds:
    """Runs one round on the fleet's places and commits it (see
    :func:`volbench.plans.round.run_round`, which every round takes)."""

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
        self,
        session: Session,
        run_id: int,
        round_no: int,
        workloads: Sequence[Workload],
        target: TargetInfo,
        ioengine: str,
        workdir: Path,
    ) -> tuple[list[TestResult], str | None]:
        """The round (:meth:`_round`), its other hosts sampled while it runs
        (:func:`volbench.plans.remote_watch.watching`)."""
        with watching(session, self.fleet.samplers, self.places(round_no), self.told):
            return self._round(session, run_id, round_no, workloads, target, ioengine, workdir)

    def _round(
        self,
        session: Session,
        run_id: int,
        round_no: int,
        workloads: Sequence[Workload],
        target: TargetInfo,
        ioengine: str,
        workdir: Path,
    ) -> tuple[list[TestResult], str | None]:
        places = self.places(round_no)
        if not places:
            raise FioError(f"round {round_no}: no host is left to run it")
        extra = {"log_unix_epoch": "1"}
        if self.fleet.size_bytes is not None:
            extra["size"] = str(self.fleet.size_bytes)

        def layout(shares: Sequence[Place]) -> JobLayout:
            # logs NAME@N, N the place's number in the run, on the Unix-epoch clock
            tags = tuple(str(self.fleet.places.index(p) + 1) for p in shares)
            paths = tuple(p.path for p in shares)
            return lambda log_dir: JobFile(
                "", tuple(workloads), ioengine, log_dir, extra, paths, tags
            )

        # fio names a client's jobs by the address alone: back to volbench's labels
        labels = {_fio_label(self.fleet, p): p.label for p in places}

        def split(output: FioOutput) -> tuple[list[TestResult], list[TestResult]]:
            together, shares = place_tests(output)
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
                session, run_id, round_no, workloads, target, ioengine, workdir,
                launch=launch, split=split, places=len(places),
            )  # fmt: skip
        except HostsLost as lost:  # before fio printed anything for the round
            if self.fleet.keep_going and self.places(round_no):
                session.reporter.note(f"round {round_no} runs again without the lost host")
                return self._round(session, run_id, round_no, workloads, target, ioengine, workdir)
            raise FioError(
                f"{lost} in round {round_no}: fio printed no result for the round"
                + ("" if self.fleet.keep_going else " (use --keep-going to go on without it)")
            ) from lost


@dataclass(frozen=True)
class HostsLaunch(OneProcess):
    """A round's shares on other hosts, through one fio client: each host gets the job
    file of its places (:meth:`volbench.fio.runner.Runner.run_hosts`). Hosts that fail
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
        processes: Sequence[Process],
        target: TargetInfo,
        ioengine: str,
        status: RoundStatus,
    ) -> Launched:
        (process,) = processes
        by_host: dict[HostAddress, list[Place]] = {}
        for place in self.places:
            by_host.setdefault(self.fleet.address(place.host or ""), []).append(place)
        done = session.runner.run_hosts(
            {host: render(self.layout(shares)(process.folder)) for host, shares in by_host.items()},
            process.folder,
            lambda f: session.reporter.note(f"host {f.host} {f.reason}"),
            self.fleet.keep_going,
        )
        self.lost.extend((self.round_no, f) for f in done.failures)
        return Launched((done.raw,), done.failures)


def _fio_label(fleet: Fleet, place: Place) -> str:
    """The place's label as fio's output gives it: the address fio's client connects
    to, without the port."""
    if place.host is None:
        return place.label
    return f"{fleet.address(place.host).host.strip('[]')}:{place.path}"


def fleet_target(fleet: Fleet, infos: Sequence[TargetInfo]) -> TargetInfo:
    """The run's target record: every place by label; capacity the smallest one's
    (what a plan sized by capacity can use on every place)."""
    return TargetInfo(
        path=", ".join(p.label for p in fleet.places),
        kind="fleet",
        capacity_bytes=min(info.capacity_bytes for info in infos),
    )


def fleet_settings(
    fleet: Fleet, infos: Sequence[TargetInfo], hosts: Sequence[HostProbe]
) -> RunSettings:
    """What a fleet run records in its settings: places, their targets, the hosts."""
    return RunSettings(
        places=tuple(
            PlaceRecord(p.label, p.host, p.path, info)
            for p, info in zip(fleet.places, infos, strict=True)
        ),
        hosts=tuple(hosts),
        keep_going=fleet.keep_going,
        solo=fleet.solo,
    )


def stored_fleet(settings: RunSettings) -> Fleet:
    """The fleet a stored run ran on (its ``places`` settings), to continue it;
    UsageError for places recorded without a path or target (an imported output)."""
    if any(p.path is None or p.target is None for p in settings.places):
        raise UsageError("its places were not all recorded (an imported output): start it again")
    places = tuple(Place(p.host, str(p.path)) for p in settings.places)
    sizes = [p.target.capacity_bytes for p in settings.places if p.target is not None]
    remote = any(p.host is not None for p in places)
    return Fleet(places, settings.keep_going, size_bytes=min(sizes) if remote else None)


@dataclass(frozen=True)
class PreparedFleet:
    """A fleet checked and ready: its places' targets and what each host said."""

    fleet: Fleet
    infos: list[TargetInfo]
    hosts: list[HostProbe]

    @property
    def target(self) -> TargetInfo:
        """The run's target record (:func:`fleet_target`)."""
        return fleet_target(self.fleet, self.infos)

    @property
    def settings(self) -> RunSettings:
        """What the run records of its places (:func:`fleet_settings`)."""
        return fleet_settings(self.fleet, self.infos, self.hosts)


def prepare_fleet(
    fleet: Fleet,
    writes: bool,
    reporter: Reporter,
    destroy_data: Sequence[str] = (),
    force: bool = False,
) -> PreparedFleet:
    """Check every place before anything runs; return the fleet that will run, each
    place's target, and what each host said of itself.

    Local targets go through :func:`~volbench.plans.preparation.prepare_target`
    (safety checks, scratch files). volbench cannot look at another host's
    targets: remote ones need ``size_bytes``; a plan that writes writes a remote
    block device (``/dev/``) only when ``--destroy-data`` names it as ``HOST:PATH``,
    and a remote file only with ``force`` (fio creates or overwrites it). Hosts are
    probed first; one that does not answer stops the run, or with ``keep_going``
    is left out (said on the reporter).
    """
    if not fleet.remote:
        infos = [
            prepare_target(
                p.path,
                writes,
                reporter,
                fleet.size_bytes,
                named_by(destroy_data, p.path),
                force,
            )
            for p in fleet.places
        ]
        # fio is given each target's canonical path, the one checked before every round
        places = tuple(Place(None, info.path) for info in infos)
        if len(set(places)) < len(places):
            raise UsageError("two --targets name the same file or device: give it once")
        return PreparedFleet(dataclasses.replace(fleet, places=places), infos, [])
    size = fleet.size_bytes if fleet.size_bytes is not None else guest_disks_bytes(fleet.places)
    fleet = dataclasses.replace(fleet, size_bytes=size)
    if size is None:
        raise UsageError(
            "targets on other hosts need --size (the active range on each, e.g. --size 1g): "
            "volbench cannot look at another host's files and devices"
        )
    for place in fleet.places if writes else ():
        if place.path.startswith("/dev/") and not names_remote(destroy_data, place):
            raise UsageError(
                f"refusing to write {place.label}: volbench cannot check a device on another "
                f"host for data (use --destroy-data={place.label} to overwrite it)"
            )
        if not place.path.startswith("/dev/") and not force:
            raise UsageError(
                f"refusing to write {place.label}: volbench cannot check a file on another "
                "host (use --force to let fio create or overwrite it)"
            )
    probes = probe_all(fleet.hosts())
    silent = [p for p in probes if not p.answers]
    for probe in silent:
        message = f"host {probe.address} does not answer: {probe.error}"
        if not fleet.keep_going:
            raise FioError(f"{message} (start `volbench agent` there, or use --keep-going)")
        reporter.note(f"{message}; going on without it (--keep-going)")
    lost = {p.address for p in silent}
    places = tuple(p for p in fleet.places if str(fleet.address(p.host or "")) not in lost)
    if not places:
        raise FioError("no host answers: start `volbench agent` on them")
    fleet = dataclasses.replace(fleet, places=places)
    written_files = [p for p in places if not p.path.startswith("/dev/")] if writes else []
    for place in written_files:  # devices: --destroy-data named them (above)
        check_remote_file(place, fleet.address(place.host or ""))
    infos = [TargetInfo(path=p.label, kind="remote", capacity_bytes=size) for p in places]
    return PreparedFleet(fleet, infos, probes)
