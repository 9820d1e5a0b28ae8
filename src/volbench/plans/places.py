"""Where a run's rounds run, as the user names them: ``--target``/``--targets`` on
this machine, or ``HOST:PATH`` on ``--hosts`` (fio's server, directly or through
SSH), and which ``--destroy-data`` value names which place. Paths are made what fio
will open before anything is checked: canonical on this machine
(:func:`volbench.targets.safety.canonical`), normalised and absolute on another host.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.fio.remote_path import is_plain_path
from volbench.fio.tunnel import host_name, is_ssh
from volbench.lab.place import DISK, is_guest_disk, is_lab
from volbench.model import Place
from volbench.store.limits import HOSTNAME_CHARS
from volbench.targets.safety import canonical


def read_hosts_file(text: str) -> list[str]:
    """Hosts from a file: one per line (``HOST``, ``HOST:PORT`` or
    ``ssh://[USER@]HOST[:PORT]``); blank lines and ``#`` comments skipped."""
    return [
        line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()
    ]


def places_from(targets: Sequence[str], hosts: Sequence[str]) -> tuple[Place, ...]:
    """The places of ``--target``/``--targets`` values, on ``--hosts`` when given.

    Without hosts every target is a local one. With hosts, ``HOST:PATH`` puts a
    target on that host only and a plain ``PATH`` on every host; each host needs
    at least one target; a ``lab://`` guest without one measures its own disk
    (:data:`volbench.lab.place.DISK`). Raises UsageError with what to change.
    """
    if not hosts:
        return _kept(tuple(dict.fromkeys(Place(None, canonical(path)) for path in targets)))
    addresses = {host_name(h): h for h in hosts}
    if len(addresses) < len(hosts):
        raise UsageError("a host is given twice in --hosts / --hosts-file")
    common: list[str] = []
    own: dict[str, list[str]] = {name: [] for name in addresses}
    for spec in targets:
        host, sep, path = _host_and_path(spec)
        if sep and host in addresses:
            own[host].append(remote_path("/" + path))
        elif is_ssh(spec) or is_lab(spec) or (sep and not host.startswith("/") and "/" not in host):
            raise UsageError(
                f"--target {spec}: {host} is not in --hosts ({', '.join(addresses)}); "
                "add it there or give a path for every host"
            )
        else:
            common.append(remote_path(spec))
    for name in addresses:
        if is_lab(name) and not own[name] and not common:
            own[name].append(DISK)
    places = [Place(name, path) for name in addresses for path in [*own[name], *common]]
    missing = [name for name in addresses if not own[name] and not common]
    if missing:
        raise UsageError(
            f"no target for host {', '.join(missing)}: give --target HOST:PATH or a PATH "
            "for every host"
        )
    return _kept(tuple(dict.fromkeys(places)))


def _kept(places: tuple[Place, ...]) -> tuple[Place, ...]:
    """``places``, checked to fit the store: each share of a run on several places (or
    on a host) is stored under its label (``HOST:PATH``, or the path), at most
    :data:`~volbench.store.limits.HOSTNAME_CHARS` characters; UsageError before anything
    runs for a longer one."""
    if len(places) == 1 and places[0].host is None:
        return places  # one local target: its results are the run's own
    for place in places:
        if len(place.label) > HOSTNAME_CHARS:
            raise UsageError(
                f"--target {place.label[:60]}...: a place's name (HOST:PATH) is"
                f" {len(place.label):,} characters long, more than the store keeps for one"
                f" ({HOSTNAME_CHARS}): use a target of a shorter path"
            )
    return places


def remote_path(path: str) -> str:
    """A target path on another host, normalised (``.``, ``..`` and repeated ``/``
    taken out) so that what is checked is what fio opens there; UsageError for a
    relative path (relative to what fio's server runs in, unknown here)."""
    if not path.startswith("/"):
        raise UsageError(f"--target {path}: a target on another host needs an absolute path (/...)")
    return "/" + posixpath.normpath(path).lstrip("/")


def _host_and_path(spec: str) -> tuple[str, str, str]:
    """``HOST:/PATH``, ``ssh://...:/PATH`` or ``lab://NAME:/PATH`` split as
    ``str.partition(":/")`` does."""
    at = spec.find(":/", spec.find("://") + 3 if is_ssh(spec) or is_lab(spec) else 0)
    return (spec, "", "") if at < 0 else (spec[:at], ":/", spec[at + 2 :])


def named_by(destroy_data: Sequence[str], path: str) -> str | None:
    """The ``--destroy-data`` value naming ``path`` (same canonical path), else the first."""
    real = canonical(path)
    for value in destroy_data:
        if canonical(value) == real:
            return value
    return destroy_data[0] if destroy_data else None


def names_remote(destroy_data: Sequence[str], place: Place) -> bool:
    """Whether a ``--destroy-data=HOST:PATH`` names ``place`` (paths normalised); a
    lab guest's own disk needs none (an image volbench made for it)."""
    if is_guest_disk(place.host, place.path):
        return True
    for value in destroy_data:
        host, sep, path = _host_and_path(value)
        if sep and host_name(host) == place.host and remote_path("/" + path) == place.path:
            return True
    return False


def check_remote_file(place: Place, address: HostAddress) -> None:
    """A file target on another host (reached at ``address``) must be a plain path
    there: no link in it, no device (:func:`volbench.fio.remote_path.is_plain_path`,
    asked of the host's own fio); UsageError otherwise."""
    if not is_plain_path(address, place.path):
        raise UsageError(
            f"refusing to write {place.label}: on that host it is a device or a link, lies "
            "under a link, or its folder does not exist: give the real path of a file in an"
            " existing folder, or a device path with --destroy-data=HOST:/dev/NAME"
        )
