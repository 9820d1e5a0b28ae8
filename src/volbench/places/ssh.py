"""A host reached through SSH: ``--hosts ssh://[USER@]HOST[:PORT]``.

fio's server there runs for the run on a private Unix socket, forwarded to a
loopback address of this machine (:mod:`volbench.fio.tunnel`); a second ssh session
samples the host and the disk under the place's target
(:class:`volbench.targets.remote_channel.SshChannel`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence

from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.fio.tunnel import SshHost, ssh_config, tunnels
from volbench.model import Place
from volbench.places.remote import OtherHost
from volbench.targets.remote_channel import SshChannel
from volbench.targets.remote_sampler import RemoteSampler
from volbench.targets.remote_stream import sampler_script

SCHEME = "ssh://"

_NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
_SSH = re.compile(
    rf"ssh://(?:(?P<user>{_NAME})@)?(?P<host>{_NAME}|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{{1,5}}))?",
    re.IGNORECASE,
)


def parse_ssh_host(text: str) -> SshHost:
    """``ssh://[user@]host[:port]`` -> SshHost named ``ssh://[user@]host[:port]``;
    UsageError for anything else.

    Strict on purpose: the parts reach ssh's command line, so a user or host that
    could be read as an option (a leading ``-``), or that holds whitespace, control
    characters or anything but letters, digits, ``.``, ``_`` and ``-`` is refused.
    """
    match = _SSH.fullmatch(text.strip())
    if not match:
        raise UsageError(
            f"invalid ssh host {text!r}: use ssh://[USER@]HOST[:PORT], e.g. ssh://root@10.0.0.5"
        )
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 0 < port < 65536:
        raise UsageError(f"invalid port in {text!r}: use 1..65535")
    user = f"{match['user']}@" if match["user"] else ""
    name = f"{SCHEME}{user}{match['host']}" + (f":{port}" if port else "")
    return SshHost(match["host"], match["user"], port, name=name)


class SshKind(OtherHost):
    """``ssh://[USER@]HOST[:PORT]``: fio's server through a tunnel, sampled through a
    second session."""

    name = "ssh"
    scheme = SCHEME

    def owns(self, spec: str) -> bool:
        return spec.strip().lower().startswith(SCHEME)

    def host_name(self, spec: str) -> str:
        return str(parse_ssh_host(spec))

    def default_target(self, host: str) -> str | None:
        return None

    def default_size(self, place: Place) -> int | None:
        return None

    def address(self, host: str) -> HostAddress | None:
        parse_ssh_host(host)  # checked before any tunnel opens
        return None

    @contextlib.contextmanager
    def reach(self, hosts: Sequence[str], taken: Sequence[str]) -> Iterator[list[HostAddress]]:
        with tunnels([parse_ssh_host(h) for h in hosts], taken) as opened:
            yield [t.address for t in opened]

    def unsampled(self, host: str) -> str | None:
        return None

    def sampler(self, host: str, path: str) -> RemoteSampler | str:
        channel = SshChannel(parse_ssh_host(host), sampler_script(path), ssh_config())
        return RemoteSampler(host, channel)


SSH = SshKind()
