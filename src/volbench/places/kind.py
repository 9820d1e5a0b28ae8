"""What a kind of place knows: the :class:`PlaceKind` protocol.

A place is ``HOST:PATH``: a target ``PATH`` on a host named as the user gave it on
``--hosts``. Every host belongs to exactly one kind (the first in
:data:`volbench.places.table.KINDS` that :meth:`PlaceKind.owns` it); code outside
the kinds asks the table, never the spelling.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from volbench.fio.client import HostAddress
from volbench.model import HostCache, Place, TargetIdentity
from volbench.targets.cgroup import Limits, Written
from volbench.targets.remote_sampler import RemoteSampler


class PlaceKind(Protocol):
    """One kind of place (see the module). Methods that take a ``host`` are given
    only hosts this kind owns, by the name :meth:`host_name` gives them."""

    @property
    def name(self) -> str:
        """The kind as runs record it (``PlaceRecord.kind``): a short word."""
        ...

    @property
    def scheme(self) -> str | None:
        """The spelling's prefix, e.g. ``ssh://`` (None: a bare ``HOST[:PORT]``)."""
        ...

    def owns(self, spec: str) -> bool:
        """Whether ``spec`` (a ``--hosts`` value, or the ``HOST`` of ``HOST:PATH``)
        is spelled as this kind's."""
        ...

    def host_name(self, spec: str) -> str:
        """``spec`` as volbench names the host (runs record it); UsageError when it is
        not a valid spelling of this kind."""
        ...

    def default_target(self, host: str) -> str | None:
        """The target a place of ``host`` measures when the user names none (None:
        the user must name one)."""
        ...

    def default_size(self, place: Place) -> int | None:
        """The active range a run on ``place`` takes without ``--size``, bytes (None:
        the user must give ``--size``)."""
        ...

    def address(self, host: str) -> HostAddress | None:
        """Where fio's client reaches ``host`` without anything opened first (None:
        only through :meth:`reach`); UsageError when it cannot be reached."""
        ...

    def reach(
        self, hosts: Sequence[str], taken: Sequence[str]
    ) -> AbstractContextManager[list[HostAddress]]:
        """For a ``with`` block: where fio's client reaches each of ``hosts`` (those
        :meth:`address` gives None for), in order, through what the kind opens for
        them and closes when the block ends. ``taken``: the addresses the run's
        other hosts use (fio's client tells hosts apart by address)."""
        ...

    def unsampled(self, host: str) -> str | None:
        """Why ``host`` can never be sampled, one line as the limit sheets show it
        (None: it has a channel for samples)."""
        ...

    def sampler(self, host: str, path: str) -> RemoteSampler | str:
        """The sampler of ``host``'s CPUs and of the disk under ``path`` there (not
        yet open), or why the host cannot be sampled (one line)."""
        ...

    def check_write(
        self, place: Place, writes: bool, named: bool, force: bool
    ) -> TargetIdentity | None:
        """Check that a run may write ``place`` (when ``writes``; ``named``: the
        user's ``--destroy-data`` names it, ``force``: ``--force``) through
        :func:`volbench.targets.safety.check_remote_write`, and return what the
        target is, when it can be known from this machine (then checked again before
        every round, :func:`volbench.targets.safety.check_round`). UsageError to refuse."""
        ...

    def host_cache(self, place: Place) -> HostCache | None:
        """What caches ``place``'s target on this machine, for the validity check "a
        cache answered" (:func:`volbench.analysis.run_validity.front_cache`); None:
        nothing this machine knows of."""
        ...

    def purge(self, place: Place) -> str:
        """Purge ``place``'s target from this machine; the method, as a run records
        it. TargetError when this kind cannot."""
        ...

    def can_purge(self, place: Place) -> bool:
        """Whether :meth:`purge` can purge ``place``."""
        ...

    def can_limit(self, place: Place) -> bool:
        """Whether :meth:`limit` can hold ``place`` to a QoS tenant's limits (asked by
        a dry run, which sets nothing)."""
        ...

    def limit(
        self, place: Place, limits: Limits, plan: str
    ) -> AbstractContextManager[list[Written]]:
        """For a ``with`` block: what runs on ``place`` held to a QoS tenant's
        ``limits`` (IOPS and bytes/s per direction, 0 = none) where its I/O is done,
        given back when the block ends; what was set, a line each, as ``qos verify``
        records it. ``plan``: the QoS plan's id (what volbench sets is marked with it).
        UsageError when this kind cannot hold its places to limits."""
        ...

    def reclaim(self) -> list[str]:
        """Give back what a killed run left on this kind's places; a line for each."""
        ...
