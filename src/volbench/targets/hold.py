"""The run's block devices held open exclusively while it writes them.

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

While a device is held, the in-use probe of the checks (its own O_EXCL open) would
find this process's claim: :func:`held_here` tells them to leave it out.
"""

from __future__ import annotations

import errno
import os

from volbench.errors import TargetError
from volbench.model import TargetIdentity

_HELD: dict[str, int] = {}
"""Device numbers (``MAJOR:MINOR``) this process holds, each with its open descriptor."""


def held_here(number: str) -> bool:
    """Whether this process holds the block device ``MAJOR:MINOR`` exclusively."""
    return number in _HELD


class Hold:
    """Exclusive opens of block devices, taken one by one (:meth:`take`) and given back
    together (:meth:`release`, also at the end of a ``with`` block)."""

    def __init__(self) -> None:
        self._numbers: list[str] = []

    def take(self, identity: TargetIdentity) -> None:
        """Hold the block device ``identity`` names (a file: nothing to hold). A
        one-line TargetError when another user claims it, or when what the path
        opens is not the device the run started on."""
        if identity.kind != "block" or identity.number in _HELD:
            return
        try:
            fd = os.open(identity.path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                raise TargetError(
                    f"refusing to write {identity.path}: it is in use (claimed exclusively"
                    " by the kernel or another program)"
                ) from None
            raise TargetError(f"cannot open {identity.path}: {exc.strerror}") from None
        device = os.fstat(fd).st_rdev
        if f"{os.major(device)}:{os.minor(device)}" != identity.number:
            os.close(fd)
            raise TargetError(
                f"target {identity.path} is no longer what the run started on (device"
                f" {identity.number}); nothing more is written to it"
            )
        _HELD[identity.number] = fd
        self._numbers.append(identity.number)

    def release(self) -> None:
        """Give back every device this hold took."""
        while self._numbers:
            fd = _HELD.pop(self._numbers.pop(), None)
            if fd is not None:
                os.close(fd)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
