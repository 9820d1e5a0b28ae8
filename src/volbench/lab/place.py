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
from collections.abc import Sequence

from volbench.errors import UsageError
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
