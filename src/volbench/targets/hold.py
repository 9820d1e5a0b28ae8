"""The run's targets held open while it runs, and the paths fio reaches them by.

A check before each round (:func:`volbench.targets.safety.check_round`) sees the
device as it is at that moment; what happens after it, while fio writes, it cannot
see. A colleague may ``mkfs`` and mount a blank device the run is measuring; the next
check refuses the mount, but only after fio wrote into the new filesystem. So the
run holds each local block device it writes open with ``O_EXCL`` from its first check
to its end (open(2): on a block device, O_EXCL claims it, and the kernel then refuses
a mount, ``mkfs`` and any other exclusive open with EBUSY). fio opens the device
without O_EXCL and runs as before; a loop device held open cannot be detached and
re-attached to another image meanwhile (the kernel defers the detach to the last
close).

A path checked is still a name, and a name can be re-pointed between the check and
fio's open (a file target replaced by a link to a device as a round folder appears:
about 0.1-0.4 s, a whole cell for a fio started ahead). So each target the run holds
(a block device it writes, a file always, opened without following a final link and
proved to be the checked inode) is given to fio as ``/proc/PID/fd/N``
(:func:`reach`): proc(5), "/proc/pid/fd/": opening that link opens the file the
descriptor refers to, whatever its path names by then. fio opens it with its own
flags (O_DIRECT, for writing) as it would open the path.

While a device is held, the in-use probe of the checks (its own O_EXCL open) would
find this process's claim: :func:`held_here` tells them to leave it out.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable

from volbench.errors import TargetError
from volbench.model import TargetIdentity
from volbench.targets.identity import describe

_HELD: dict[str, int] = {}
"""What this process holds, each with its open descriptor: block devices by number
(``MAJOR:MINOR``), files by filesystem number and inode (``MAJOR:MINOR/INODE``)."""

_PATHS: dict[str, str] = {}
"""The canonical path of each target held, to its key in ``_HELD``."""


def held_here(number: str) -> bool:
    """Whether this process holds the block device ``MAJOR:MINOR`` exclusively."""
    return number in _HELD


def reach(path: str) -> str:
    """The path fio is given for the target ``path``: ``/proc/PID/fd/N`` of this
    process's descriptor when it holds the target (see the module's docstring), else
    ``path`` itself."""
    key = _PATHS.get(path)
    fd = _HELD.get(key) if key is not None else None
    return path if fd is None else f"/proc/{os.getpid()}/fd/{fd}"


def reached(paths: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(what fio is given, the target's path) for each of ``paths`` this process holds."""
    return tuple((reach(path), path) for path in paths if reach(path) != path)


def _key(identity: TargetIdentity) -> str:
    if identity.kind == "block":
        return identity.number
    return f"{identity.number}/{identity.inode}"


def _number(device: int) -> str:
    return f"{os.major(device)}:{os.minor(device)}"


def _open(identity: TargetIdentity) -> int:
    """A descriptor of what ``identity`` names: a block device exclusively, a file
    without following a final link (its path is canonical: a link there is a swap)."""
    block = identity.kind == "block"
    flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_EXCL if block else os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        return os.open(identity.path, flags)
    except OSError as exc:
        if block and exc.errno == errno.EBUSY:
            raise TargetError(
                f"refusing to write {identity.path}: it is in use (claimed exclusively"
                " by the kernel or another program)"
            ) from None
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link where the file was
            raise _swapped(identity) from None
        raise TargetError(f"cannot open {identity.path}: {exc.strerror}") from None


def _swapped(identity: TargetIdentity) -> TargetError:
    return TargetError(
        f"target {identity.path} is no longer what the run started on ({describe(identity)});"
        " nothing more is written to it"
    )


def _is(identity: TargetIdentity, found: os.stat_result) -> bool:
    if identity.kind == "block":
        return stat.S_ISBLK(found.st_mode) and _number(found.st_rdev) == identity.number
    return (
        stat.S_ISREG(found.st_mode)
        and found.st_ino == identity.inode
        and _number(found.st_dev) == identity.number
    )


class Hold:
    """Opens of the run's targets, taken one by one (:meth:`take`) and given back
    together (:meth:`release`, also at the end of a ``with`` block)."""

    def __init__(self) -> None:
        self._keys: list[str] = []

    def take(self, identity: TargetIdentity) -> bool:
        """Hold what ``identity`` names: a block device exclusively, a file open; True
        when it is opened now, False when this process holds it already. A one-line
        TargetError when another user claims the device, or when what the path opens
        is not what the run started on."""
        key = _key(identity)
        if key in _HELD:
            return False
        fd = _open(identity)
        if not _is(identity, os.fstat(fd)):
            os.close(fd)
            raise _swapped(identity)
        _HELD[key] = fd
        _PATHS[identity.path] = key
        self._keys.append(key)
        return True

    def release(self) -> None:
        """Give back everything this hold took."""
        while self._keys:
            key = self._keys.pop()
            fd = _HELD.pop(key, None)
            for path in [p for p, k in _PATHS.items() if k == key]:
                del _PATHS[path]
            if fd is not None:
                os.close(fd)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
