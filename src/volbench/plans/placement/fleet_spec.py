"""A fleet: the places a plan runs on at once (local targets, or targets on other
hosts through fio's client/server mode), and which rounds run on each place alone
(``solo``). :mod:`volbench.plans.placement.fleet` runs its rounds."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from volbench.errors import FioError, UsageError
from volbench.fio.client import HostAddress
from volbench.model import (
    Place,
    Workload,
)
from volbench.places.table import connected as connected_hosts
from volbench.places.table import kind_of
from volbench.plans.runs import fill
from volbench.plans.runs.execution import PlanSpec
from volbench.plans.runs.remote_watch import Samplers, sampled

REMOTE_ENGINE = "libaio"
"""ioengine on other hosts unless ``--ioengine`` says otherwise (fio has it on every Linux)."""

SOLO_PREFIX = "solo."
"""Per-place results of a place running alone carry this before the test name."""


@dataclass(frozen=True)
class OwnFile:
    """A file or device a job file's jobs name themselves, by its absolute path on every
    host, and whether a job writes it (else its jobs only read it)."""

    path: str
    writes: bool

    @property
    def written(self) -> bool:
        """Whether the run may write it: a job writes it, or it is a file, which fio lays
        out when it is missing or shorter than a job reads (volbench cannot look at it
        from here: a missing file of this machine it makes itself)."""
        return self.writes or not self.path.startswith("/dev/")


@dataclass(frozen=True)
class Fleet:
    """The places of a multi-target run and how to treat a host that fails.

    ``size_bytes`` is the active range on each target (fio's ``size``): needed for
    remote targets, which volbench cannot inspect. ``endpoints``: where fio's client
    reaches each host named in the places, ``samplers``: each such host's sampler or
    why it has none (both set by :func:`connected`); ``checked_files``: see there.
    """

    places: tuple[Place, ...]
    keep_going: bool = False
    solo: bool = False
    size_bytes: int | None = None
    endpoints: Mapping[str, HostAddress] = field(default_factory=dict, compare=False)
    samplers: Samplers = field(default_factory=dict, compare=False)
    checked_files: tuple[Place, ...] = field(default=(), compare=False)
    """Remote file targets written (checked by the host's own fio when the run starts,
    :func:`volbench.plans.placement.named.check_remote_file`): checked there again before each
    round that writes, as nothing on this machine can hold them open."""
    files: tuple[OwnFile, ...] = ()
    """The files a job file's jobs name themselves (absolute paths, the same on every
    host), each in a place's folder or the place's file: the jobs run on them, once on
    each host, not once per place (a cloud recipe's folders and files on other hosts)."""

    def place_of_file(self, host: str, path: str) -> Place | None:
        """The place of ``host`` whose file ``path`` is, or whose folder holds it."""
        for place in self.places:
            inside = path.startswith(place.path.rstrip("/") + "/")
            if place.host == host and (path == place.path or inside):
                return place
        return None

    def address(self, host: str) -> HostAddress:
        """Where fio's client reaches ``host`` (a place's host name)."""
        if host in self.endpoints:
            return self.endpoints[host]
        address = kind_of(host).address(host)
        if address is None:
            raise FioError(f"{host} is not connected (volbench opens its way there before a run)")
        return address

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
    """The fleet with a way to reach every host for the block, each as its kind reaches
    it (:func:`volbench.places.table.connected`: an ``ssh://`` host through an SSH
    tunnel), each sampled through its kind's channel (:mod:`volbench.plans.runs.remote_watch`),
    all closed however the block ends."""
    names = list(dict.fromkeys(p.host for p in fleet.places if p.host is not None))
    with connected_hosts(names) as addresses, sampled(fleet.places) as samplers:
        endpoints = dict(zip(names, addresses, strict=True))
        yield dataclasses.replace(fleet, endpoints=endpoints, samplers=samplers)


def schedule(plan: PlanSpec, fleet: Fleet) -> tuple[PlanSpec, dict[int, tuple[Place, ...]]]:
    """The plan as the fleet runs it, and the places of the rounds that are not run
    on every place: with ``solo``, each fixed round once on each place alone, its
    tests renamed ``solo.TEST``, then on all places together (a fill: together only)."""
    plan = plan.one_test_per_round()  # as execute() runs it: round numbers line up
    if not fleet.solo or len(fleet.places) < 2:
        return plan, {}
    rounds: list[tuple[Workload, ...]] = []
    alone: dict[int, tuple[Place, ...]] = {}
    for workloads in plan.rounds:
        if all(w.name == fill.NAME for w in workloads):  # --fill: written once, at once
            rounds.append(workloads)
            continue
        for place in fleet.places:
            alone[len(rounds)] = (place,)
            rounds.append(
                tuple(dataclasses.replace(w, name=SOLO_PREFIX + w.name) for w in workloads)
            )
        rounds.append(workloads)
    return dataclasses.replace(plan, rounds=tuple(rounds)), alone
