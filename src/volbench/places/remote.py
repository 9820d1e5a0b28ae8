"""What the kinds of place on other hosts share: a write checked by the rules for a
host volbench cannot look at (:func:`volbench.targets.safety.check_remote_write`),
with ``--destroy-data=HOST:/dev/NAME`` naming a device."""

from __future__ import annotations

import posixpath
from contextlib import AbstractContextManager

from volbench.errors import TargetError, UsageError
from volbench.model import HostCache, Place, TargetIdentity
from volbench.targets.cgroup import Limits, Written
from volbench.targets.safety import check_remote_write


def remote_path(path: str) -> str:
    """A target path on another host, normalised (``.``, ``..`` and repeated ``/``
    taken out) so that what is checked is what fio opens there; UsageError for a
    relative path (relative to what fio's server runs in, unknown here)."""
    if not path.startswith("/"):
        raise UsageError(f"--target {path}: a target on another host needs an absolute path (/...)")
    return "/" + posixpath.normpath(path).lstrip("/")


def split_place(spec: str, scheme: str | None) -> tuple[str, str, str]:
    """``HOST:/PATH`` (``scheme`` before ``HOST``, when the host's kind has one) split
    as ``str.partition(":/")`` does."""
    at = spec.find(":/", len(scheme) if scheme else 0)
    return (spec, "", "") if at < 0 else (spec[:at], ":/", spec[at + 2 :])


def check_remote(place: Place, writes: bool, named: bool, force: bool) -> None:
    """``place``'s write checked by :func:`volbench.targets.safety.check_remote_write`
    (nothing to check for a run that only reads)."""
    if writes:
        check_remote_write(place.label, place.path, named, force)


def cannot_purge(place: Place) -> TargetError:
    """The error for a place volbench cannot purge from this machine."""
    return TargetError(
        f"volbench cannot purge {place.label}: purge it on its host and add --no-purge "
        "(marked non-compliant)"
    )


class OtherHost:
    """What the kinds of another host share (a fio server's, an ``ssh://`` host's): a
    write is checked by the remote rule alone (nothing of the target can be known from
    here), nothing caches it on this machine, nothing purges it from here, and a killed
    run leaves nothing here to reclaim."""

    def check_write(
        self, place: Place, writes: bool, named: bool, force: bool
    ) -> TargetIdentity | None:
        check_remote(place, writes, named, force)
        return None

    def host_cache(self, place: Place) -> HostCache | None:
        return None

    def purge(self, place: Place) -> str:
        raise cannot_purge(place)

    def can_purge(self, place: Place) -> bool:
        return False

    def reclaim(self) -> list[str]:
        return []

    def can_limit(self, place: Place) -> bool:
        return False

    def limit(
        self, place: Place, limits: Limits, plan: str
    ) -> AbstractContextManager[list[Written]]:
        """Refused: volbench has no way to limit the I/O of another host's fio."""
        raise cannot_limit(place)


def cannot_limit(place: Place) -> UsageError:
    """The error for a place whose kind cannot hold it to a QoS plan's limits."""
    return UsageError(
        f"volbench cannot hold {place.host} to a QoS plan's limits: verify a plan on a"
        " device of this machine (--device) or on lab guests (--guests)"
    )
