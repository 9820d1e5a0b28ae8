"""fio's client/server mode: volbench's engine for runs on several hosts.

Every host runs ``fio --server`` (``volbench agent``). One fio client process
sends each host its own job file, ``fio --client=H1,PORT job1.fio --client=H2,PORT
job2.fio`` (several ``--client`` options followed by one job file would send it to
the last host only), and prints one JSON document whose ``client_stats`` holds one
entry per host job (with ``hostname``) plus fio's "All clients" sum. The servers
send their per-interval logs back; the client writes them beside the job files
with ``.HOST`` appended to each name.

fio's own quirks, as seen with fio 3.33:

* ``--status-interval`` in client mode appends every interim sample to the one
  final ``client_stats`` list (and builds "All clients" from the first samples),
  so it is never used here: the progress display counts time, not I/O.
* A host that refuses the connection at the start is reported on stderr
  (``fio: failed to connect to HOST:PORT``) and the others run; fio exits 0.
* A host that disappears mid-run is reported as ``client: host=HOST
  disconnected``; the others go on, fio exits 1, and the JSON holds only the
  hosts that finished.
* SIGINT to the client stops the jobs on every server; fio still prints the JSON
  of what was measured.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.fio.ctrl_c import start_held
from volbench.fio.executable import fio_path, start_fio, write_job
from volbench.fio.raw import DocumentSplitter, RawRun

DEFAULT_PORT = 8765
"""fio's default server port (fio HOWTO, "Client/Server")."""

_HOST = re.compile(r"^(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{1,5}))?\Z")
_REFUSED = re.compile(r"failed to connect to (?P<host>\S+?):(?P<port>\d+)")
_LOST = re.compile(r"client: host=(?P<host>\S+) disconnected")


@dataclass(frozen=True)
class HostAddress:
    """A host running ``fio --server``: name or IP address, and TCP port. ``name``:
    the host as the user named it when fio is reached another way (an SSH tunnel's
    local end, :mod:`volbench.fio.tunnel`); messages and settings use it."""

    host: str
    port: int = DEFAULT_PORT
    name: str | None = None

    @property
    def client_option(self) -> str:
        """fio's ``--client=`` value: ``ip6:ADDR,PORT`` for IPv6, else ``HOST,PORT``."""
        if self.host.startswith("["):
            return f"--client=ip6:{self.host[1:-1]},{self.port}"
        return f"--client={self.host},{self.port}"

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return self.host if self.port == DEFAULT_PORT else f"{self.host}:{self.port}"


def parse_host(text: str) -> HostAddress:
    """``HOST``, ``HOST:PORT`` or ``[IPV6]:PORT`` -> HostAddress; UsageError otherwise."""
    match = _HOST.match(text.strip())
    if not match:
        raise UsageError(f"invalid host {text!r}: use HOST or HOST:PORT, e.g. 10.0.0.5:8765")
    port = int(match["port"] or DEFAULT_PORT)
    if not 0 < port < 65536:
        raise UsageError(f"invalid port in {text!r}: use 1..65535")
    return HostAddress(match["host"], port)


@dataclass(frozen=True)
class HostFailure:
    """A host that could not run its share of a round, with fio's reason."""

    host: str
    reason: str


@dataclass(frozen=True)
class ClientRun:
    """One fio client process: its output (as the local runner's) and lost hosts."""

    raw: RawRun
    failures: tuple[HostFailure, ...]


def failure_in(line: str, hosts: Sequence[HostAddress]) -> HostFailure | None:
    """The host a line of fio's stderr reports as unreachable or lost, if any."""
    for pattern, reason in ((_REFUSED, "refused the connection"), (_LOST, "disconnected")):
        match = pattern.search(line)
        if match:
            name = match["host"]
            port = int(match.groupdict().get("port") or 0)
            for host in hosts:
                if host.host.strip("[]") == name and port in (0, host.port):
                    return HostFailure(str(host), f"{reason} ({line.strip()})")
            return HostFailure(name, f"{reason} ({line.strip()})")
    return None


class ClientRunner:
    """Runs one round on several hosts at once through one fio client process.

    When a host fails and ``keep_going`` is false, the client gets SIGINT, which
    stops every other host's jobs cleanly; what they measured is still returned.
    """

    def __init__(self, keep_going: bool = False) -> None:
        self.keep_going = keep_going

    def run(
        self,
        jobs: Mapping[HostAddress, str],
        workdir: Path,
        on_failure: Callable[[HostFailure], None] | None = None,
    ) -> ClientRun:
        workdir.mkdir(parents=True, exist_ok=True)
        command: list[str] = [fio_path(), "--output-format=json+"]
        for index, (host, text) in enumerate(jobs.items()):
            path = workdir / f"job-{index}.fio"
            write_job(path, text)
            command += [host.client_option, str(path)]
        started_s = time.time()
        proc, interrupted = start_held(lambda: start_fio(command, workdir))
        if interrupted:  # while the client started: stopped as in the loop below
            _signal(proc, signal.SIGINT)
        failures: list[HostFailure] = []
        stopped = threading.Event()
        stdout: list[str] = []
        stderr: list[str] = []

        def check(line: str) -> None:
            failure = failure_in(line, list(jobs))
            if failure is None:
                return
            failures.append(failure)
            if on_failure is not None:
                on_failure(failure)
            if not self.keep_going and not stopped.is_set():
                stopped.set()
                _signal(proc, signal.SIGINT)

        def watch(stream: Any, lines: list[str]) -> None:
            # fio says "failed to connect" on stderr and "host=... disconnected" on stdout
            for line in stream or ():
                lines.append(line)
                check(line)

        readers = [
            threading.Thread(target=watch, args=(proc.stdout, stdout), daemon=True),
            threading.Thread(target=watch, args=(proc.stderr, stderr), daemon=True),
        ]
        for reader in readers:
            reader.start()
        while True:
            try:
                proc.wait()
                break
            except KeyboardInterrupt:
                _signal(proc, signal.SIGTERM if interrupted else signal.SIGINT)
                interrupted = True
        for reader in readers:
            reader.join(timeout=10)
        splitter = DocumentSplitter()
        for line in stdout:
            splitter.feed(line)
        splitter.finish()
        raw = RawRun(
            output=splitter.documents[-1] if splitter.documents else "",
            returncode=proc.returncode,
            stderr="".join(stderr),
            interrupted=interrupted,
            command=tuple(command),
            text="".join(splitter.text),
            stopped=stopped.is_set(),
            started_s=started_s,
            ended_s=time.time(),
        )
        return ClientRun(raw, tuple(failures))


def _signal(proc: subprocess.Popen[str], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)
