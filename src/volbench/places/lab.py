"""A lab guest as a place of runs: ``--hosts lab://NAME``.

``lab://NAME`` is reached at the guest's forwarded fio address (a
:class:`~volbench.fio.client.HostAddress` named ``lab://NAME``, so runs record the
place by that name; fio's server there names itself ``lab-NAME-kvm`` or
``lab-NAME-tcg``, the hostname a run records, which says the accelerator). Its
target is the guest's virtio disk, :data:`DISK`: with no ``--target`` for it, a
lab host measures that disk, and writing it needs no ``--destroy-data`` (the disk
is an image volbench made for the guest, holding nobody's data). The guest is
sampled through its shell port, with the guest's key (:mod:`volbench.lab.shell`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
from collections.abc import Iterator, Sequence

from volbench.errors import TargetError, UsageError
from volbench.fio.client import HostAddress
from volbench.lab import monitor
from volbench.lab.guest import Guest, load, running_pid
from volbench.lab.shell import shell_of
from volbench.model import HostCache, Place, TargetIdentity
from volbench.places.remote import cannot_limit, cannot_purge, check_remote
from volbench.targets.cgroup import Limits, Written
from volbench.targets.host import MEMINFO, parse_mem_total
from volbench.targets.identity import identify
from volbench.targets.kernel_file import kernel_text
from volbench.targets.remote_channel import TcpShell
from volbench.targets.remote_sampler import RemoteSampler
from volbench.targets.remote_stream import sampler_script

SCHEME = "lab://"
DISK = "/dev/vda"
"""The guest's virtio disk (the first virtio-blk device)."""
_LAB = re.compile(r"lab://(?P<name>[A-Za-z0-9][A-Za-z0-9-]{0,30})", re.IGNORECASE)


def lab_name(text: str) -> str:
    """``lab://NAME`` -> NAME; UsageError for anything else."""
    match = _LAB.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"invalid lab host {text[:60]!r}: use lab://NAME (see `volbench lab list`)"
        )
    return match["name"].lower()


def _running(host: str) -> Guest:
    """The guest of ``lab://NAME``; UsageError when there is none or its qemu is not
    running."""
    guest = load(lab_name(host))
    if running_pid(guest.folder) is None:
        raise UsageError(
            f"lab guest {guest.name} is not running: `volbench lab up {guest.name}` again"
        )
    return guest


def lab_address(text: str) -> HostAddress:
    """Where fio's client reaches guest ``lab://NAME``: its forwarded fio port;
    UsageError when there is no such guest or its qemu is not running."""
    guest = _running(text)
    return HostAddress(guest.address, guest.fio_port, name=guest.place)


def guest_disk(place: Place) -> TargetIdentity | None:
    """A lab guest's own disk as what it is (None: another place): its image on this
    machine, which every ``volbench lab up`` makes anew, named with the guest and its
    qemu's pid (``source``), so what an earlier guest of the same name wrote is not
    taken for this one's (:mod:`volbench.volume_writes`)."""
    if place.path != DISK or place.host is None or not LAB.owns(place.host):
        return None
    guest = load(lab_name(place.host))
    try:
        image = identify(guest.disk)
    except TargetError:
        return None
    source = f"lab guest {guest.name}, image inode {image.inode}, qemu pid {guest.pid}"
    return dataclasses.replace(image, source=source)


def guest_cache(place: Place) -> HostCache | None:
    """What caches a lab guest's own disk on this machine, as the guest recorded it
    (QEMU's cache mode: :data:`volbench.lab.guest.DISK_CACHES`); None: another place,
    or a guest that did not record it."""
    if place.path != DISK or place.host is None or not LAB.owns(place.host):
        return None
    guest = load(lab_name(place.host))
    if guest.disk_cache is None:
        return None
    if guest.disk_cache == "none":
        return HostCache("none", "QEMU's cache=none on the guest's disk (O_DIRECT)")
    memory = parse_mem_total(kernel_text(MEMINFO) or "")
    what = f"QEMU's cache={guest.disk_cache} on the guest's disk: this machine's page cache"
    return HostCache(guest.disk_cache, what, memory or None)


class LabKind:
    """``lab://NAME``: a QEMU guest of ``volbench lab`` on this machine."""

    name = "lab"
    scheme = SCHEME

    def owns(self, spec: str) -> bool:
        return spec.strip().lower().startswith(SCHEME)

    def host_name(self, spec: str) -> str:
        return SCHEME + lab_name(spec)

    def default_target(self, host: str) -> str | None:
        return DISK

    def default_size(self, place: Place) -> int | None:
        if place.path != DISK or place.host is None:
            return None
        return load(lab_name(place.host)).disk_bytes

    def address(self, host: str) -> HostAddress | None:
        return lab_address(host)

    @contextlib.contextmanager
    def reach(self, hosts: Sequence[str], taken: Sequence[str]) -> Iterator[list[HostAddress]]:
        yield [lab_address(h) for h in hosts]

    def unsampled(self, host: str) -> str | None:
        return None

    def sampler(self, host: str, path: str) -> RemoteSampler | str:
        try:
            guest = shell_of(lab_name(host))
            return RemoteSampler(host, TcpShell(guest.address, sampler_script(path), guest.key))
        except UsageError:
            return f"volbench has no channel to sample {host}"

    def check_write(
        self, place: Place, writes: bool, named: bool, force: bool
    ) -> TargetIdentity | None:
        """The guest's own disk is an image volbench made for it, holding nobody's
        data: named by its kind; its image's identity is checked before every round."""
        check_remote(place, writes, named or place.path == DISK, force)
        return guest_disk(place)

    def host_cache(self, place: Place) -> HostCache | None:
        return guest_cache(place)

    def can_purge(self, place: Place) -> bool:
        return place.path == DISK

    def purge(self, place: Place) -> str:
        """Purge a lab guest's disk from this machine: every block of its image file
        deallocated (``fallocate --punch-hole``, util-linux: what a discard does to a
        file-backed virtual disk, QEMU's ``discard=unmap``), so it reads as zeros and
        holds no data, as a purged volume does."""
        if not self.can_purge(place) or place.host is None:
            raise cannot_purge(place)
        guest = load(lab_name(place.host))
        if running_pid(guest.folder) is None:
            raise TargetError(f"lab guest {guest.name} is not running: `volbench lab up` it again")
        done = subprocess.run(
            [
                "fallocate",
                "--punch-hole",
                "--offset",
                "0",
                "--length",
                str(guest.disk_bytes),
                guest.disk,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise TargetError(f"purging {place.label} (its image {guest.disk}) failed: {why}")
        return "lab image deallocated (fallocate --punch-hole)"

    def can_limit(self, place: Place) -> bool:
        return False

    def limit(
        self, place: Place, limits: Limits, plan: str
    ) -> contextlib.AbstractContextManager[list[Written]]:
        """Refused: a plan's tenants that are lab guests are verified by ``qos verify
        --guests`` (:mod:`volbench.plans.qos.guests`), which limits them in QEMU."""
        raise cannot_limit(place)

    def reclaim(self) -> list[str]:
        """A killed ``qos verify``'s guests get their own limits back."""
        return monitor.reclaim()


LAB = LabKind()
