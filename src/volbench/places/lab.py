"""A lab guest as a place of runs: ``--hosts lab://NAME``.

``lab://NAME`` is reached at the guest's forwarded fio address (a
:class:`~volbench.fio.client.HostAddress` named ``lab://NAME``, so runs record the
place by that name; fio's server there names itself ``lab-NAME-kvm`` or
``lab-NAME-tcg``, the hostname a run records, which says the accelerator). Its
target is the guest's virtio disk, :data:`DISK`: with no ``--target`` for it, a
lab host measures that disk, and writing it needs no ``--destroy-data`` (the disk
is an image volbench made for the guest, holding nobody's data). The guest is
sampled through its shell port, with the guest's key (:mod:`volbench.lab.shell`).

A guest given a filesystem (``lab up --filesystem``, :mod:`volbench.lab.filesystem`)
has it mounted on its disk: the disk itself is then never written (a device under a
mounted filesystem, as :mod:`volbench.targets.safety` refuses one on this machine,
whatever ``--destroy-data`` says), nor purged, and a lab host without ``--target``
measures the file :data:`DEFAULT_FILE` in that filesystem. A file in it is written
without ``--force``: the filesystem is one volbench made, at the guest's ``lab up``,
on the image it made, holding nobody's data (as the disk of a guest without one); it
must be a file (a directory is refused, as here), its folder must exist and no link
may lie on its way (the host's own fio checks,
:func:`volbench.plans.placement.named.check_remote_file`); it is known by the image's
identity, checked before every round like the disk's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import posixpath
import re
import shlex
import subprocess
from collections.abc import Iterator, Sequence

from volbench.errors import TargetError, UsageError
from volbench.fio.client import HostAddress
from volbench.lab import monitor
from volbench.lab.guest import Guest, load, running_pid
from volbench.lab.shell import run_in_guest, shell_of
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
DEFAULT_FILE = "volbench.dat"
"""The file a guest with a filesystem measures when given no ``--target``."""
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


def in_filesystem(guest: Guest, path: str) -> bool:
    """Whether ``path`` (normalised) lies in the filesystem the guest mounted on its
    disk (never the mount point itself)."""
    return guest.mount is not None and path.startswith(guest.mount.rstrip("/") + "/")


def _on_guest_disk(place: Place) -> Guest | None:
    """The guest whose disk holds ``place``'s target (its disk, or a file in the
    filesystem on it); None: another place."""
    if place.host is None or not LAB.owns(place.host):
        return None
    guest = load(lab_name(place.host))
    return guest if place.path == DISK or in_filesystem(guest, place.path) else None


def guest_disk(place: Place) -> TargetIdentity | None:
    """A lab guest's own disk as what it is (None: another place): its image on this
    machine, which every ``volbench lab up`` makes anew, named with the guest and its
    qemu's pid (``source``), so what an earlier guest of the same name wrote is not
    taken for this one's (:mod:`volbench.volume_writes`). A file in the filesystem on
    it is known by the same image (the filesystem is made anew with it), the file's
    path in ``source``."""
    guest = _on_guest_disk(place)
    if guest is None:
        return None
    try:
        image = identify(guest.disk)
    except TargetError:
        return None
    source = f"lab guest {guest.name}, image inode {image.inode}, qemu pid {guest.pid}"
    if place.path != DISK:
        source += f", {guest.filesystem} file {place.path}"
    return dataclasses.replace(image, source=source)


def guest_cache(place: Place) -> HostCache | None:
    """What caches a lab guest's own disk (or a file in its filesystem) on this
    machine, as the guest recorded it (QEMU's cache mode:
    :data:`volbench.lab.guest.DISK_CACHES`); None: another place, or a guest that did
    not record it."""
    guest = _on_guest_disk(place)
    if guest is None:
        return None
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
        """The guest's disk; a file in the filesystem on it, when it has one."""
        try:
            mount = load(lab_name(host)).mount
        except UsageError:  # no such guest: said when the run reaches for it
            return DISK
        return DISK if mount is None else f"{mount.rstrip('/')}/{DEFAULT_FILE}"

    def default_size(self, place: Place) -> int | None:
        """The disk's size on the disk; half of it for a file in its filesystem (room
        for the filesystem's own blocks, and for the files of a second target)."""
        guest = _on_guest_disk(place)
        if guest is None:
            return None
        return guest.disk_bytes if place.path == DISK else guest.disk_bytes // 2

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
        data: named by its kind, unless the guest mounted a filesystem on it (then
        refused), and a file in that filesystem is vouched for the same way (see the
        module); its image's identity is checked before every round."""
        guest = _on_guest_disk(place)
        if guest is not None and writes:
            if place.path == DISK and guest.mount is not None:
                raise UsageError(
                    f"refusing to write {place.label}: the guest mounted its"
                    f" {guest.filesystem} filesystem on it at {guest.mount} (write a file"
                    f" there, e.g. {place.host}:{guest.mount}/{DEFAULT_FILE})"
                )
            if place.path != DISK:
                _ready_in_filesystem(guest, place)
        vouched = guest is not None
        check_remote(place, writes, named or vouched, force or vouched)
        return guest_disk(place)

    def host_cache(self, place: Place) -> HostCache | None:
        return guest_cache(place)

    def can_purge(self, place: Place) -> bool:
        """The disk of a guest without a filesystem (one that has one would lose it)."""
        guest = _on_guest_disk(place)
        return guest is not None and place.path == DISK and guest.mount is None

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


def _ready_in_filesystem(guest: Guest, place: Place) -> None:
    """A file to write in the guest's filesystem: its folder made when missing
    (``mkdir -p``: the filesystem is volbench's own, made at ``lab up``, as a cloud's
    page has the user make its folders on a new volume); UsageError when the path is a
    folder or neither a file nor nothing (asked through the guest's shell channel)."""
    path = shlex.quote(place.path)
    folder = shlex.quote(posixpath.dirname(place.path))
    answer = run_in_guest(
        guest.name,
        f"mkdir -p {folder} 2>/dev/null; if [ ! -d {folder} ]; then echo no-folder;"
        f" elif [ -d {path} ]; then echo folder;"
        f" elif [ -e {path} ] && [ ! -f {path} ]; then echo other; else echo file; fi",
    ).strip()
    if answer == "folder":
        raise UsageError(
            f"cannot write {place.label}: it is a directory (give a file path inside it,"
            f" e.g. {place.label.rstrip('/')}/{DEFAULT_FILE})"
        )
    if answer == "no-folder":
        raise UsageError(
            f"cannot write {place.label}: its folder {posixpath.dirname(place.path)} is not a"
            " folder in the guest, nor can it be made"
        )
    if answer != "file":
        raise UsageError(f"refusing to write {place.label}: neither a file nor nothing there")


LAB = LabKind()
