"""A lab guest as a place of runs: ``--hosts lab://NAME``.

``lab://NAME`` is reached at the guest's forwarded fio address (a
:class:`~volbench.fio.client.HostAddress` named ``lab://NAME``, so runs record the
place by that name; fio's server there names itself ``lab-NAME-kvm`` or
``lab-NAME-tcg``, the hostname a run records, which says the accelerator). Its
target is the guest's virtio disk, :data:`DISK`: with no ``--target`` for it, a
lab host measures that disk, and writing it needs no ``--destroy-data`` (the disk
is an image volbench made for the guest, holding nobody's data).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence

from volbench.errors import TargetError, UsageError
from volbench.fio.client import HostAddress
from volbench.model import Place

SCHEME = "lab://"
DISK = "/dev/vda"
"""The guest's virtio disk (the first virtio-blk device)."""
_LAB = re.compile(r"lab://(?P<name>[A-Za-z0-9][A-Za-z0-9-]{0,30})", re.IGNORECASE)


def is_lab(text: str) -> bool:
    """Whether a ``--hosts`` value is a lab guest, ``lab://NAME``."""
    return text.strip().lower().startswith(SCHEME)


def lab_name(text: str) -> str:
    """``lab://NAME`` -> NAME; UsageError for anything else."""
    match = _LAB.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"invalid lab host {text[:60]!r}: use lab://NAME (see `volbench lab list`)"
        )
    return match["name"].lower()


def lab_host(text: str) -> str:
    """A ``lab://NAME`` value as volbench names the place (lower case)."""
    return SCHEME + lab_name(text)


def is_guest_disk(host: str | None, path: str) -> bool:
    """Whether a place is a lab guest's own disk (:data:`DISK`)."""
    return host is not None and is_lab(host) and path == DISK


def lab_address(text: str) -> HostAddress:
    """Where fio's client reaches guest ``lab://NAME``: its forwarded fio port;
    UsageError when there is no such guest or its qemu is not running."""
    from volbench.lab.guest import load, running_pid

    guest = load(lab_name(text))
    if running_pid(guest.folder) is None:
        raise UsageError(
            f"lab guest {guest.name} is not running: `volbench lab up {guest.name}` again"
        )
    return HostAddress(guest.address, guest.fio_port, name=guest.place)


def guest_disks_bytes(places: Sequence[Place]) -> int | None:
    """The active range a run takes without ``--size`` when every place is a lab
    guest's own disk: the smallest of their disks (bytes; None otherwise)."""
    if not places or not all(is_guest_disk(p.host, p.path) for p in places):
        return None
    from volbench.lab.guest import load

    return min(load(lab_name(p.host or "")).disk_bytes for p in places)


def purge_guest_disk(label: str) -> str:
    """Purge a lab guest's disk (the place ``lab://NAME:/dev/vda``) from this machine:
    every block of its image file deallocated (``fallocate --punch-hole``, util-linux:
    what a discard does to a file-backed virtual disk, QEMU's ``discard=unmap``), so it
    reads as zeros and holds no data, as a purged volume does. Returns the method as
    a run records it; TargetError for a place that is not a lab guest's disk."""
    from volbench.lab.guest import load, running_pid

    host, _, path = label.rpartition(":")
    if not is_guest_disk(host, path):
        raise TargetError(
            f"volbench cannot purge {label}: purge it on its host and add --no-purge "
            "(marked non-compliant)"
        )
    guest = load(lab_name(host))
    if running_pid(guest.folder) is None:
        raise TargetError(f"lab guest {guest.name} is not running: `volbench lab up` it again")
    done = subprocess.run(
        ["fallocate", "--punch-hole", "--offset", "0", "--length", str(guest.disk_bytes),
         guest.disk],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise TargetError(f"purging {label} (its image {guest.disk}) failed: {why}")
    return "lab image deallocated (fallocate --punch-hole)"
