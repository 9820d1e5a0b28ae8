"""Where a run's rounds run, as the user names them: ``--target``/``--targets`` on
this machine, or ``HOST:PATH`` on ``--hosts`` (fio's server, directly or through
SSH), and which ``--destroy-data`` value names which place. Paths are made what fio
will open before anything is checked: canonical on this machine
(:func:`volbench.targets.safety.canonical`), normalised and absolute on another host.
"""

from __future__ import annotations

from collections.abc import Sequence

from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.fio.remote_path import is_plain_path
from volbench.model import Place
from volbench.places.remote import remote_path
from volbench.places.table import default_targets, has_scheme, host_name, split_place
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
    at least one target; a host whose kind has a default target (a ``lab://`` guest:
    its own disk, :data:`volbench.places.lab.DISK`) measures it without one. Raises
    UsageError with what to change.
    """
    if not hosts:
        return _kept(tuple(dict.fromkeys(Place(None, canonical(path)) for path in targets)))
    addresses = {host_name(h): h for h in hosts}
    if len(addresses) < len(hosts):
        raise UsageError("a host is given twice in --hosts / --hosts-file")
    common: list[str] = []
    own: dict[str, list[str]] = {name: [] for name in addresses}
    for spec in targets:
        host, sep, path = split_place(spec)
        if sep and host in addresses:
            own[host].append(remote_path("/" + path))
        elif has_scheme(spec) or (sep and not host.startswith("/") and "/" not in host):
            raise UsageError(
                f"--target {spec}: {host} is not in --hosts ({', '.join(addresses)}); "
                "add it there or give a path for every host"
            )
        else:
            common.append(remote_path(spec))
    for name in addresses:
        if not own[name] and not common:
            own[name] += default_targets([name])
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


def named_by(destroy_data: Sequence[str], path: str) -> str | None:
    """The ``--destroy-data`` value naming ``path`` (same canonical path), else the first."""
    real = canonical(path)
    for value in destroy_data:
        if canonical(value) == real:
            return value
    return destroy_data[0] if destroy_data else None


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
