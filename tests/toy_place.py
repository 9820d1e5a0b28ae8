"""A toy kind of place, to show what a kind is (CONTRIBUTING.md, "Adding a place kind"):
``--hosts loopback://N`` is a folder of this machine reached through a fio server that
volbench starts for the run on the loopback address 127.0.0.N.

Its targets are on this machine, so its writes go through the same check as a local
target's (:func:`volbench.targets.safety.check_write_allowed`), and an existing
target's identity is recorded and checked before every round
(:func:`volbench.targets.safety.check_round`). A QoS tenant on it is held to its
limits as a host holds its tenants (NetEase's KVM host QoS test): its fio server, and
the jobs it forks, in a cgroup of its own throttling the disk under the place's file.
Its entry in the table is made by the test (``table.KINDS = (LOOPBACK, *table.KINDS)``).
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
from pathlib import Path

from volbench.errors import FioError, TargetError, UsageError
from volbench.fio.client import HostAddress
from volbench.fio.executable import die_with_parent
from volbench.fio.server import probe
from volbench.fio.tunnel import free_port
from volbench.model import HostCache, Place, TargetIdentity, TargetInfo
from volbench.targets import cgroup
from volbench.targets.blockdev import BlockDevice
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

    def __init__(self) -> None:
        self.servers: dict[str, int] = {}
        """The process id of each reached host's fio server, by host name."""

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
                    self.servers[address.name or host] = started[-1].pid
                yield found
        finally:
            for proc in started:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)  # the server this kind started
                proc.wait(timeout=10)
            self.servers.clear()

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

    def can_limit(self, place: Place) -> bool:
        return True

    @contextlib.contextmanager
    def limit(
        self, place: Place, limits: cgroup.Limits, plan: str
    ) -> Iterator[list[cgroup.Written]]:
        """The host's fio server (and the jobs it forks) in the cgroup of ``limits``, on
        the disk under the place's file, until the block ends."""
        server = self.servers.get(place.host or "")
        if server is None:
            raise UsageError(f"{place.host} is not reached: its server is started first")
        hierarchy = cgroup.find_hierarchy()
        written = cgroup.apply(hierarchy, _disk_of(place.path), [limits], plan, owned=True)
        try:
            cgroup.join(hierarchy, limits.cgroup, server)
            yield written
        finally:
            with contextlib.suppress(OSError, ProcessLookupError):  # back to the root group
                (hierarchy.root / "cgroup.procs").write_text(f"{server}\n")
            _remove(hierarchy.path(limits.cgroup))

    def reclaim(self) -> list[str]:
        """The cgroups a killed run's tenants were held in (its servers die with it,
        ``die_with_parent``; its cgroups stay: :func:`volbench.targets.cgroup.reclaim`)."""
        try:
            hierarchy = cgroup.find_hierarchy()
        except TargetError:
            return []
        return cgroup.reclaim(hierarchy)


def _remove(group: Path, timeout_s: float = 10.0) -> None:
    """Remove ``group`` once the jobs the server forked into it have ended."""
    deadline = time.monotonic() + timeout_s
    while cgroup.remove_idle([group])[1] and time.monotonic() < deadline:
        time.sleep(0.1)
    cgroup.remove([group])


def _disk_of(path: str) -> str:
    """``MAJ:MIN`` of the whole disk holding ``path``'s file system (throttles are per disk)."""
    st = os.stat(path)
    device = BlockDevice.from_devnum((os.major(st.st_dev), os.minor(st.st_dev)))
    if device is None:
        raise UsageError(f"{path} is not on a block device: no cgroup can throttle it")
    major, minor = device.disk.devnum
    return f"{major}:{minor}"


def _wait_answering(address: HostAddress, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if probe(address, 2.0).answers:
            return
        time.sleep(0.1)
    raise FioError(f"fio's server at {address.host}:{address.port} did not answer")


LOOPBACK = LoopbackKind()
