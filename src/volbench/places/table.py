"""The kinds of place, in one table (:data:`KINDS`), and what the rest of volbench
asks of a place through it: which kind a host is, its name, how fio reaches it, its
sampler, its write check, purge, a QoS tenant's limits on it and what a killed run left.

A new kind of place is a module with a class that follows
:class:`volbench.places.kind.PlaceKind`, and its entry here (CONTRIBUTING.md, "Adding
a place kind"). Nothing registers itself on import: this tuple is the whole list.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from volbench.fio.client import HostAddress
from volbench.model import HostCache, Place, TargetIdentity, TargetInfo
from volbench.places import remote
from volbench.places.kind import PlaceKind
from volbench.places.lab import LAB
from volbench.places.server import SERVER
from volbench.places.ssh import SSH
from volbench.targets.cgroup import Limits, Written
from volbench.targets.purge import purge as purge_here
from volbench.targets.remote_sampler import RemoteSampler

KINDS: tuple[PlaceKind, ...] = (SSH, LAB, SERVER)
"""Every kind of place on another host, asked in this order which one owns a
spelling: the server's bare ``HOST[:PORT]`` owns every other one, so it is last."""


def kind_of(spec: str) -> PlaceKind:
    """The kind of a ``--hosts`` value, or of the host of ``HOST:PATH``."""
    return next(kind for kind in KINDS if kind.owns(spec))


def host_name(spec: str) -> str:
    """A ``--hosts`` value as volbench names the host (``ssh://[user@]host[:port]``,
    ``lab://NAME``, ``HOST[:PORT]`` without the default port); UsageError when invalid."""
    return kind_of(spec).host_name(spec)


def split_place(spec: str) -> tuple[str, str, str]:
    """``HOST:/PATH`` split as ``str.partition(":/")`` does, past its kind's scheme."""
    return remote.split_place(spec, kind_of(spec).scheme)


def has_scheme(spec: str) -> bool:
    """Whether ``spec`` begins as a kind's spelling with a scheme (``ssh://``...)."""
    return kind_of(spec).scheme is not None


def default_targets(hosts: Sequence[str]) -> list[str]:
    """The target every one of ``hosts`` measures when the user names none: its
    kind's default when all share one (a lab guest's own disk), else none."""
    found = {kind_of(h).default_target(h) for h in hosts}
    return [path for path in found if path is not None] if len(found) == 1 else []


def default_size(places: Sequence[Place]) -> int | None:
    """The active range a run takes without ``--size`` when every place's kind gives
    one: the smallest (bytes; None otherwise)."""
    sizes = [kind_of(p.host).default_size(p) if p.host else None for p in places]
    if not sizes or any(size is None for size in sizes):
        return None
    return min(size for size in sizes if size is not None)


def names(destroy_data: Sequence[str], place: Place) -> bool:
    """Whether a ``--destroy-data=HOST:PATH`` names ``place`` (hosts as volbench names
    them, paths normalised)."""
    for value in destroy_data:
        host, sep, path = split_place(value)
        if sep and host_name(host) == place.host and remote.remote_path("/" + path) == place.path:
            return True
    return False


def check_write(
    place: Place, writes: bool, destroy_data: Sequence[str], force: bool
) -> TargetIdentity | None:
    """``place``'s kind's write check (:meth:`PlaceKind.check_write`), and what its
    target is when this machine can know it."""
    assert place.host is not None
    named = writes and place.path.startswith("/dev/") and names(destroy_data, place)
    return kind_of(place.host).check_write(place, writes, named, force)


def reclaim(places: Sequence[Place]) -> list[str]:
    """What a killed run left on the kinds of ``places`` given back; a line for each."""
    kinds = [kind_of(p.host) for p in places if p.host is not None]
    return [line for kind in KINDS if kind in kinds for line in kind.reclaim()]


def cannot_limit(places: Sequence[Place]) -> list[str]:
    """Why a kind of ``places`` (on other hosts) cannot hold one to a QoS tenant's
    limits, a line for each such place (what :func:`limited` would refuse)."""
    return [
        str(remote.cannot_limit(p))
        for p in places
        if p.host is not None and not kind_of(p.host).can_limit(p)
    ]


@contextlib.contextmanager
def limited(
    places: Sequence[Place], limits: Sequence[Limits], plan: str
) -> Iterator[list[Written]]:
    """Each of ``places`` (on other hosts) held to its own of ``limits`` by its kind
    (:meth:`~volbench.places.kind.PlaceKind.limit`) for the block, all given back when
    it ends (those already set, when a later one is refused); what was set."""
    written: list[Written] = []
    with contextlib.ExitStack() as stack:
        for place, limit in zip(places, limits, strict=True):
            assert place.host is not None
            written += stack.enter_context(kind_of(place.host).limit(place, limit, plan))
        yield written


def host_cache(place: Place) -> HostCache | None:
    """What caches ``place``'s target on this machine (its kind's
    :meth:`~volbench.places.kind.PlaceKind.host_cache`; None: a local target)."""
    return None if place.host is None else kind_of(place.host).host_cache(place)


def sampler(host: str, path: str) -> RemoteSampler | str:
    """``host``'s sampler on the disk under ``path`` there, or why it has none."""
    return kind_of(host).sampler(host, path)


def can_purge(places: Sequence[Place]) -> bool:
    """Whether every one of ``places`` can be purged from this machine."""
    return all(p.host is None or kind_of(p.host).can_purge(p) for p in places)


def place_of(target: TargetInfo) -> Place:
    """The place of a target on another host (its path is the place's label)."""
    host, _, path = target.path.rpartition(":")
    return Place(host, path)


def purge(
    target: TargetInfo,
    method: str = "auto",
    ata_password: str | None = None,
    data_allowed: bool = False,
) -> str:
    """Purge ``target``; the method used, as the run records it: on another host by its
    place's kind, here by :func:`volbench.targets.purge.purge`."""
    if target.kind == "remote":
        place = place_of(target)
        return kind_of(place.host or "").purge(place)
    return purge_here(target, method, ata_password, data_allowed)


@contextlib.contextmanager
def connected(hosts: Sequence[str]) -> Iterator[list[HostAddress]]:
    """Where fio's client reaches each of ``hosts``, in the order given, for the
    block: each through its kind (what a kind opens, e.g. ssh tunnels, is closed when
    the block ends). Every value is checked before anything is opened; kinds that
    open something are reached after the addresses of the others are known."""
    kinds = [kind_of(h) for h in hosts]
    fixed = [kind.address(h) for kind, h in zip(kinds, hosts, strict=True)]
    found = {i: a for i, a in enumerate(fixed) if a is not None}
    taken = [a.host for a in found.values()]
    with contextlib.ExitStack() as stack:
        for kind in KINDS:
            waiting = [i for i, k in enumerate(kinds) if k is kind and i not in found]
            if waiting:
                reached = stack.enter_context(kind.reach([hosts[i] for i in waiting], taken))
                found.update(zip(waiting, reached, strict=True))
                taken += [a.host for a in reached]
        yield [found[i] for i in range(len(hosts))]
