"""A toy kind of place, to show what a kind is (CONTRIBUTING.md, "Adding a place kind"):
``--hosts loopback://N`` is a folder of this machine reached through a fio server that
volbench starts for the run on the loopback address 127.0.0.N.

Its targets are on this machine, so its writes go through the same check as a local
target's (:func:`volbench.targets.safety.check_write_allowed`), and an existing
target's identity is recorded and checked before every round
(:func:`volbench.targets.safety.check_round`). Its entry in the table is made by the
test (``monkeypatch.setattr(table, "KINDS", (LOOPBACK, *table.KINDS))``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

from volbench.errors import FioError, UsageError
from volbench.fio.client import HostAddress
from volbench.fio.executable import die_with_parent
from volbench.fio.server import probe
from volbench.fio.tunnel import free_port
from volbench.model import HostCache, Place, TargetIdentity, TargetInfo
from volbench.targets.identity import identify
from volbench.targets.purge import purge
from volbench.targets.safety import check_write_allowed

SCHEME = "loopback://"
_LOOPBACK = re.compile(r"loopback://(?P<n>\d{1,3})", re.IGNORECASE)


def address_of(host: str) -> str:
    """``loopback://N`` -> ``127.0.0.N``; UsageError for anything else."""
    match = _LOOPBACK.fullmatch(host.strip())
    if match is None or not 2 <= int(match["n"]) <= 99:
        raise UsageError(f"invalid loopback host {host[:60]!r}: use loopback://N, N 2..99")
    return f"127.0.0.{int(match['n'])}"


class LoopbackKind:
    """``loopback://N``: this machine's files through a fio server on 127.0.0.N."""

    name = "loopback"
    scheme = SCHEME

    def owns(self, spec: str) -> bool:
        return spec.strip().lower().startswith(SCHEME)

    def host_name(self, spec: str) -> str:
        return SCHEME + address_of(spec).rsplit(".", 1)[1]

    def default_target(self, host: str) -> str | None:
        return None

    def default_size(self, place: Place) -> int | None:
        """An existing file's own size (it is on this machine)."""
        return os.path.getsize(place.path) if os.path.isfile(place.path) else None

    def address(self, host: str) -> HostAddress | None:
        address_of(host)  # checked before any server starts
        return None

    @contextlib.contextmanager
    def reach(self, hosts: Sequence[str], taken: Sequence[str]) -> Iterator[list[HostAddress]]:
        """A fio server for each host, in a session of its own; each ended (its
        process group: fio's forked jobs too) when the block ends."""
        started: list[subprocess.Popen[bytes]] = []
        try:
            with tempfile.TemporaryDirectory(prefix="volbench-loopback-") as folder:
                found = []
                for host in hosts:
                    ip = address_of(host)
                    if ip in taken:
                        raise UsageError(f"{host}: {ip} is another host's address in this run")
                    address = HostAddress(ip, free_port(ip), name=self.host_name(host))
                    started.append(
                        subprocess.Popen(
                            ["fio", f"--server=ip:{ip},{address.port}"],
                            cwd=folder,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            preexec_fn=die_with_parent(),
                        )
                    )
                    _wait_answering(address)
                    found.append(address)
                yield found
        finally:
            for proc in started:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)  # the server this kind started
                proc.wait(timeout=10)

    def unsampled(self, host: str) -> str | None:
        return f"{host} is a toy place: volbench has no channel to sample it"

    def sampler(self, host: str, path: str) -> str:
        return f"{host} is a toy place: volbench has no channel to sample it"

    def check_write(
        self, place: Place, writes: bool, named: bool, force: bool
    ) -> TargetIdentity | None:
        """A file or device of this machine: the local target's check, by identity."""
        if writes:
            check_write_allowed(place.path, place.path if named else None, force)
        return identify(place.path) if os.path.exists(place.path) else None

    def host_cache(self, place: Place) -> HostCache | None:
        return None

    def purge(self, place: Place) -> str:
        return purge(TargetInfo(place.path, "file", os.path.getsize(place.path)))

    def can_purge(self, place: Place) -> bool:
        return os.path.isfile(place.path)

    def reclaim(self) -> list[str]:
        """Nothing outlives a killed run: its servers die with it (``die_with_parent``)."""
        return []


def _wait_answering(address: HostAddress, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if probe(address, 2.0).answers:
            return
        time.sleep(0.1)
    raise FioError(f"fio's server at {address.host}:{address.port} did not answer")


LOOPBACK = LoopbackKind()
