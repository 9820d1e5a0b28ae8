"""``fio --server`` on a host (``volbench agent``) and the probe that tells which
hosts answer.

The probe sends each host a job that touches no storage (``ioengine=null``). On
connecting, fio's client prints the server's identity in its normal output:
``hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1``
(fio client.c, ``handle_probe``); that line is the host's metadata for a run.
"""

from __future__ import annotations

import queue
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.client import DEFAULT_PORT, HostAddress
from volbench.fio.executable import fio_path
from volbench.model import HostProbe

PROBE_JOB = "[volbench-probe]\nioengine=null\nrw=read\nbs=1m\nsize=1m\n"
"""A job that reads 1 MiB from fio's null engine: no file, no device."""

_IDENTITY = re.compile(
    r"hostname=(?P<hostname>[^,]*), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>[^,]*), "
    r"arch=(?P<arch>[^,]*), fio=(?P<fio>[^,\s]*)"
)


def parse_identity(address: str, text: str, seconds: float) -> HostProbe:
    """A probe's result from fio's normal output (``text``, stdout and stderr)."""
    match = _IDENTITY.search(text)
    if match:
        return HostProbe(
            address,
            True,
            seconds,
            hostname=match["hostname"],
            os=match["os"],
            arch=match["arch"],
            fio_version=match["fio"],
        )
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return HostProbe(address, False, seconds, error=lines[-1] if lines else "no answer")


def probe(host: HostAddress, timeout_s: float = 10.0) -> HostProbe:
    """Ask ``host`` who it is, waiting at most ``timeout_s`` seconds.

    fio prints the server's identity as soon as it has connected (about 0.2 s on
    loopback); the probe job would only start a second later, so the client is
    stopped once the identity line is there.
    """
    with tempfile.TemporaryDirectory(prefix="volbench-probe-") as folder:
        job = Path(folder) / "probe.fio"
        job.write_text(PROBE_JOB)
        started = time.monotonic()
        proc = subprocess.Popen(
            [fio_path(), host.client_option, str(job)],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc, lines), daemon=True).start()
        seen: list[str] = []
        try:
            while (left := started + timeout_s - time.monotonic()) > 0:
                try:
                    line = lines.get(timeout=left)
                except queue.Empty:
                    break
                if line is None:
                    break
                seen.append(line)
                if _IDENTITY.search(line):
                    break
            else:
                seen.append(f"no answer in {timeout_s:g} s")
        finally:
            if proc.poll() is None:
                proc.kill()  # the fio client this probe started
            proc.wait()
        if not _IDENTITY.search("".join(seen)) and time.monotonic() - started >= timeout_s:
            return HostProbe(str(host), False, timeout_s, error=f"no answer in {timeout_s:g} s")
        return parse_identity(str(host), "".join(seen), time.monotonic() - started)


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    for line in proc.stdout or ():
        lines.put(line)
    lines.put(None)


def probe_all(hosts: Sequence[HostAddress], timeout_s: float = 10.0) -> list[HostProbe]:
    """Probe every host at once; results in the order given."""
    if not hosts:
        return []
    with ThreadPoolExecutor(max_workers=min(len(hosts), 32)) as pool:
        return list(pool.map(lambda host: probe(host, timeout_s), hosts))


LOOPBACK = "127.0.0.1"
"""Where ``volbench agent`` listens unless ``--bind`` says otherwise."""


def server_command(bind: str | None, port: int, pidfile: Path | None = None) -> list[str]:
    """``fio --server=ip:ADDR,PORT`` (``ip6:`` for an IPv6 address; loopback when
    ``bind`` is None); with a ``pidfile`` fio daemonizes itself and writes its
    process id there (fio HOWTO, "Client/Server")."""
    if not 0 < port < 65536:
        raise UsageError(f"invalid port {port}: use 1..65535")
    address = bind or LOOPBACK
    family = "ip6" if ":" in address else "ip"
    command = [fio_path(), f"--server={family}:{address.strip('[]')},{port}"]
    if pidfile is not None:
        command.append(f"--daemonize={pidfile}")
    return command


DEFAULT_BINDS = frozenset({LOOPBACK, "::1", "[::1]", "localhost"})
"""``--bind`` values that are the default (this machine's own loopback)."""


def exposure_warning(bind: str | None, port: int) -> str | None:
    """The one-line warning for a server on any address but the default loopback
    (None for the default): fio's server has no authentication."""
    if bind is None or bind.lower() in DEFAULT_BINDS:
        return None
    return (
        f"warning: fio's server has no authentication: anyone who can reach {bind} port "
        f"{port} can run commands as root and write any disk on this host (prefer "
        "--hosts ssh://HOST on the controller, which needs no agent)"
    )


__all__ = [
    "DEFAULT_PORT",
    "HostProbe",
    "exposure_warning",
    "probe",
    "probe_all",
    "server_command",
]
