"""A host running fio's server, reached directly: ``--hosts HOST[:PORT]``
(``volbench agent`` there, or any ``fio --server``). volbench has only fio's
connection to it: no channel to sample it, nothing to purge or reclaim there."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from volbench.errors import UsageError
from volbench.fio.client import HostAddress, parse_host
from volbench.model import Place
from volbench.places.remote import OtherHost


def no_channel(host: HostAddress) -> str:
    """Why a plain fio server host cannot be sampled, and what to use instead."""
    return (
        f"{host} runs only fio's server; volbench has no channel to sample it: "
        f"use ssh://{host.host.strip('[]')}"
    )


class ServerKind(OtherHost):
    """``HOST[:PORT]``: every spelling no other kind owns (the table's last entry)."""

    name = "server"
    scheme = None

    def owns(self, spec: str) -> bool:
        return True

    def host_name(self, spec: str) -> str:
        return str(parse_host(spec))

    def default_target(self, host: str) -> str | None:
        return None

    def default_size(self, place: Place) -> int | None:
        return None

    def address(self, host: str) -> HostAddress | None:
        return parse_host(host)

    @contextlib.contextmanager
    def reach(self, hosts: Sequence[str], taken: Sequence[str]) -> Iterator[list[HostAddress]]:
        yield [parse_host(h) for h in hosts]

    def unsampled(self, host: str) -> str | None:
        return self.sampler(host, "")

    def sampler(self, host: str, path: str) -> str:
        try:
            return no_channel(parse_host(host))
        except UsageError:
            return f"volbench has no channel to sample {host}"


SERVER = ServerKind()
