"""A fleet made ready: every place checked before anything runs (local targets
through the target checks, remote ones by their hosts' answers), and what the run
records of its places and hosts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import FioError, TargetError, UsageError
from volbench.fio.server import probe_all
from volbench.lab import monitor
from volbench.lab.guest import load
from volbench.lab.place import guest_disks_bytes, is_guest_disk, is_lab, lab_name
from volbench.model import (
    HostCache,
    HostProbe,
    Place,
    PlaceRecord,
    RunSettings,
    TargetIdentity,
    TargetInfo,
)
from volbench.plans.fleet_spec import Fleet
from volbench.plans.places import check_remote_file, named_by, names_remote
from volbench.plans.preparation import prepare_target
from volbench.plans.reporter import Reporter
from volbench.targets.host import MEMINFO, parse_mem_total
from volbench.targets.identity import identify
from volbench.targets.kernel_file import kernel_text


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
    if any(is_lab(p.host or "") for p in fleet.places):  # a killed verify's guests
        for line in monitor.reclaim():
            reporter.note(line)
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
    fleet = dataclasses.replace(fleet, checked_files=tuple(written_files))
    infos = [
        TargetInfo(
            path=p.label,
            kind="remote",
            capacity_bytes=size,
            identity=guest_disk(p),
            host_cache=guest_cache(p),
        )
        for p in places
    ]
    return PreparedFleet(fleet, infos, probes)


def guest_cache(place: Place) -> HostCache | None:
    """What caches a lab guest's own disk on this machine, as the guest recorded it
    (QEMU's cache mode: :data:`volbench.lab.guest.DISK_CACHES`), for the validity check
    "a cache answered" (:func:`volbench.analysis.run_validity.front_cache`); None: another
    place, or a guest that did not record it."""
    if not is_guest_disk(place.host, place.path):
        return None
    guest = load(lab_name(place.host or ""))
    if guest.disk_cache is None:
        return None
    if guest.disk_cache == "none":
        return HostCache("none", "QEMU's cache=none on the guest's disk (O_DIRECT)")
    memory = parse_mem_total(kernel_text(MEMINFO) or "")
    what = f"QEMU's cache={guest.disk_cache} on the guest's disk: this machine's page cache"
    return HostCache(guest.disk_cache, what, memory or None)


def guest_disk(place: Place) -> TargetIdentity | None:
    """A lab guest's own disk as what it is (None: another place): its image on this
    machine, which every ``volbench lab up`` makes anew, named with the guest and its
    qemu's pid (``source``), so what an earlier guest of the same name wrote is not
    taken for this one's (:mod:`volbench.volume_writes`)."""
    if not is_guest_disk(place.host, place.path):
        return None
    guest = load(lab_name(place.host or ""))
    try:
        image = identify(guest.disk)
    except TargetError:
        return None
    source = f"lab guest {guest.name}, image inode {image.inode}, qemu pid {guest.pid}"
    return dataclasses.replace(image, source=source)
