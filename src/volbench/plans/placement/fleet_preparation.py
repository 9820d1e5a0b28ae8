"""A fleet made ready: every place checked before anything runs (local targets
through the target checks, remote ones by their hosts' answers), and what the run
records of its places and hosts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import FioError, UsageError
from volbench.fio.server import probe_all
from volbench.model import (
    HostProbe,
    Place,
    PlaceRecord,
    RunSettings,
    TargetIdentity,
    TargetInfo,
)
from volbench.places import table
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.named import check_remote_file, named_by
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.remote_watch import unsampled
from volbench.plans.runs.reporter import Reporter
from volbench.targets.remote_sampler import NOT_SAMPLED

REMOTE_SIZE = (
    "targets on other hosts need --size (the active range on each, e.g. --size 1g): "
    "volbench cannot look at another host's files and devices"
)
"""Why a run on other hosts without ``--size`` (nor a size its places' kind gives) is refused."""


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
            PlaceRecord(p.label, p.host, p.path, info, *place_facts(fleet, p))
            for p, info in zip(fleet.places, infos, strict=True)
        ),
        hosts=tuple(hosts),
        keep_going=fleet.keep_going,
        solo=fleet.solo,
    )


def place_facts(fleet: Fleet, place: Place) -> tuple[str | None, str | None]:
    """What a run records of where ``place`` is (:class:`~volbench.model.PlaceRecord`):
    its kind's name and why its host gives no samples from the start (its kind has no
    channel to it, or its sampling session failed); both None on this machine."""
    if place.host is None:
        return None, None
    kind = table.kind_of(place.host)
    why = kind.unsampled(place.host)
    failed = unsampled(fleet.samplers).get(place.host)
    if why is None and failed is not None:
        why = (
            failed
            if isinstance(fleet.samplers[place.host], str)
            else (f"{place.host} {NOT_SAMPLED}{failed.strip()}")
        )
    return kind.name, why


def stored_fleet(settings: RunSettings) -> Fleet:
    """The fleet a stored run ran on (its ``places`` settings), to continue it;
    UsageError for places recorded without a path or target (an imported output)."""
    if any(p.path is None or p.target is None for p in settings.places):
        raise UsageError("its places were not all recorded (an imported output): start it again")
    places = tuple(Place(p.host, str(p.path)) for p in settings.places)
    sizes = [p.target.capacity_bytes for p in settings.places if p.target is not None]
    remote = any(p.host is not None for p in places)
    return Fleet(places, settings.keep_going, size_bytes=min(sizes) if remote else None)


def _own_files(
    fleet: Fleet, destroy_data: Sequence[str], force: bool
) -> dict[Place, TargetIdentity | None]:
    """The write check of each file the jobs name themselves (:attr:`Fleet.files`), on
    each host, as a target of its own (written as :attr:`OwnFile.written` says);
    UsageError for a file in none of the host's places. Each place's identity:
    that of its first file (None: its kind knows none)."""
    found: dict[Place, TargetIdentity | None] = {}
    for host in dict.fromkeys(p.host for p in fleet.places if p.host is not None):
        for file in fleet.files:
            place = fleet.place_of_file(host, file.path)
            if place is None:
                raise UsageError(
                    f"a job opens {file.path}, in none of the targets on {host}: refused"
                )
            at = Place(host, file.path)
            identity = table.check_write(at, file.written, destroy_data, force)
            found.setdefault(place, identity)
    return {p: found.get(p) for p in fleet.places}


def _written(fleet: Fleet, place: Place) -> bool:
    """Whether a job writes a file of ``place`` (:attr:`Fleet.files`)."""
    return any(
        f.written and fleet.place_of_file(place.host or "", f.path) == place for f in fleet.files
    )


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

    Local targets go through :func:`~volbench.plans.placement.preparation.prepare_target`
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
    for line in table.reclaim(fleet.places):  # what a killed run left, e.g. a verify's guests
        reporter.note(line)
    size = fleet.size_bytes if fleet.size_bytes is not None else table.default_size(fleet.places)
    fleet = dataclasses.replace(fleet, size_bytes=size)
    if size is None:
        raise UsageError(REMOTE_SIZE)
    identities = (
        _own_files(fleet, destroy_data, force)
        if fleet.files
        else {p: table.check_write(p, writes, destroy_data, force) for p in fleet.places}
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
    if fleet.files:  # a place of files a job writes or fio may lay out
        written_files = [p for p in places if _written(fleet, p)]
    for place in written_files:  # devices: --destroy-data named them (above)
        check_remote_file(place, fleet.address(place.host or ""))
    fleet = dataclasses.replace(fleet, checked_files=tuple(written_files))
    infos = [
        TargetInfo(
            path=p.label,
            kind="remote",
            capacity_bytes=size,
            identity=identities[p],
            host_cache=table.host_cache(p),
        )
        for p in places
    ]
    return PreparedFleet(fleet, infos, probes)
