"""fio's server on another host reached through SSH: ``--hosts ssh://[user@]host[:port]``.

fio's server has no authentication and runs job options such as ``exec_prerun``
as the user it runs as, so it must not listen on a network. For an ``ssh://`` host
volbench runs the system ``ssh`` client (the user's keys and ``~/.ssh/config``):

    ssh -T -o BatchMode=yes -o ExitOnForwardFailure=yes ... \\
        -L 127.0.0.N:LOCALPORT:/tmp/volbench-fio-RANDOM/fio.sock -- [user@]host \\
        sh -c 'umask 077 && mkdir DIR || exit 1; ...; exec fio --server=sock:DIR/fio.sock'

On the host fio listens on a Unix socket in a directory only the SSH user can
enter (fio creates its socket with umask 0, server.c ``fio_init_server_sock``), so
no TCP port is opened there at all (a loopback port would be open to every local
user, and fio sets ``SO_REUSEPORT``, so a second server could share it). On this
machine ssh listens on a loopback address of the tunnel's own, 127.0.0.N: fio's
client names a host's results and logs by the address alone, so every tunnel of a
run needs a different one.

The remote fio ends with the SSH session: a watcher reads the session's stdin and
sends SIGTERM to fio's process group at end of file (fio stops its jobs on SIGTERM),
which happens when volbench closes ssh's stdin, when volbench dies, and when
sshd closes the session because ssh or the connection went away.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from volbench.errors import FioError, UsageError
from volbench.fio.client import HostAddress
from volbench.fio.executable import die_with_parent
from volbench.fio.server import probe

CONFIG_ENV = "VOLBENCH_SSH_CONFIG"
"""An ssh client configuration file used instead of ``~/.ssh/config`` (``ssh -F``)."""

ALIVE_SECONDS = 5
"""ssh's ServerAliveInterval: with ServerAliveCountMax 3, a dead link ends ssh in 15 s."""

_FIRST_LOCAL = 101
"""Tunnels listen on 127.0.0.101, 127.0.0.102, ... (Linux routes all of 127/8 to lo)."""


@dataclass(frozen=True)
class SshHost:
    """A host reached with ``ssh [-p PORT] -- [USER@]HOST``; None: ssh's own default.
    ``name``: the host as volbench names it in messages and runs (its place's kind
    gives it, :mod:`volbench.places.ssh`; empty: the destination)."""

    host: str
    user: str | None = None
    port: int | None = None
    name: str = field(default="", compare=False)

    @property
    def destination(self) -> str:
        """ssh's destination argument, ``[user@]host`` (an IPv6 address unbracketed)."""
        host = self.host.strip("[]")
        return f"{self.user}@{host}" if self.user else host

    def __str__(self) -> str:
        return self.name or self.destination


def remote_script(folder: str) -> str:
    """The POSIX ``sh`` script run on the host: fio's server on a socket in a new
    private ``folder``, ended (SIGTERM to its process group) and the folder removed
    when the session's stdin ends. No quotes or backslashes, so it passes any
    login shell inside single quotes."""
    return (
        f"umask 077 && mkdir {folder} || exit 1; exec 3<&0; "
        f'(trap "" TERM; read x <&3; kill -TERM 0; rm -rf {folder}) >/dev/null 2>&1 & '
        f"exec fio --server=sock:{folder}/fio.sock 3<&-"
    )


def ssh_command(
    host: SshHost, local: HostAddress, folder: str, config: Path | None = None
) -> list[str]:
    """The ssh command of a tunnel from ``local`` to fio's socket in ``folder`` on
    ``host``. ``--`` ends ssh's options; forwarding binds ``local`` exactly (an
    explicit address is not widened by GatewayPorts)."""
    command = ["ssh", "-T"]
    if config is not None:
        command += ["-F", str(config)]
    options = {
        "BatchMode": "yes",
        "ExitOnForwardFailure": "yes",
        "ServerAliveInterval": str(ALIVE_SECONDS),
        "ServerAliveCountMax": "3",
        "ControlMaster": "no",
        "ControlPath": "none",
        "ForwardAgent": "no",
        "ForwardX11": "no",
        "RequestTTY": "no",
    }
    for key, value in options.items():
        command += ["-o", f"{key}={value}"]
    if host.port:
        command += ["-p", str(host.port)]
    command += ["-L", f"{local.host}:{local.port}:{folder}/fio.sock"]
    return [*command, "--", host.destination, f"sh -c '{remote_script(folder)}'"]


def ssh_config() -> Path | None:
    """The file named by ``VOLBENCH_SSH_CONFIG`` (None: ssh's own ``~/.ssh/config``)."""
    value = os.environ.get(CONFIG_ENV)
    if not value:
        return None
    path = Path(value)
    if not path.is_file():
        raise UsageError(f"{CONFIG_ENV}={value}: no such file (an ssh client config file)")
    return path


def free_port(address: str) -> int:
    """A TCP port nobody listens on at ``address`` now (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


class SshTunnel(contextlib.AbstractContextManager["SshTunnel"]):
    """One host's fio server through ssh, for a ``with`` block.

    On entry ssh starts (in a session of its own, so Ctrl-C reaches fio's client
    first, which stops the jobs through the tunnel) and volbench waits until fio
    answers through the forwarded port: :attr:`address` is then where fio's
    client connects, named after the ssh host. On exit ssh's stdin is closed (the
    remote fio ends), then ssh is ended by its process id if it is still there.
    """

    def __init__(
        self, host: SshHost, local_address: str, timeout_s: float = 30.0, config: Path | None = None
    ) -> None:
        self.host = host
        self.timeout_s = timeout_s
        self.config = config
        self.address = HostAddress(local_address, free_port(local_address), name=str(host))
        self.folder = f"/tmp/volbench-fio-{secrets.token_hex(8)}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryDirectory(prefix="volbench-ssh-")

    def __enter__(self) -> SshTunnel:
        log = Path(self._log.name) / "ssh.log"
        try:
            with log.open("wb") as out:
                self.proc = subprocess.Popen(
                    ssh_command(self.host, self.address, self.folder, self.config),
                    stdin=subprocess.PIPE,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=die_with_parent(),
                )
        except OSError as error:
            self.close()
            raise FioError(f"cannot start ssh for {self.host}: {error.strerror}") from error
        try:
            self._wait_ready(log)
        except BaseException:
            self.close()
            raise
        return self

    def _wait_ready(self, log: Path) -> None:
        """Return once fio answers through the tunnel; FioError when ssh ends first
        or ``timeout_s`` passes (with ssh's last line)."""
        assert self.proc is not None
        deadline = time.monotonic() + self.timeout_s
        while (left := deadline - time.monotonic()) > 0:
            if self.proc.poll() is not None:
                break
            if probe(self.address, min(left, 5.0)).answers:
                return
            time.sleep(0.1)
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        why = lines[-1].strip() if lines else "no answer"
        if self.proc.poll() is None:
            why = (
                f"fio's server did not answer through ssh in {self.timeout_s:g} s ({why}; "
                "is fio installed there, and does its sshd allow forwarding?)"
            )
        raise FioError(f"ssh to {self.host} failed: {why}")

    @property
    def pid(self) -> int | None:
        """ssh's process id while it runs."""
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def close(self) -> None:
        """End the session: close ssh's stdin, wait up to 5 s for it to go; else
        SIGTERM, then SIGKILL ssh by its process id."""
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None and proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, sig)  # the ssh this tunnel started
                try:
                    proc.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._log.cleanup()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def local_addresses(taken: Sequence[str], count: int) -> list[str]:
    """``count`` loopback addresses 127.0.0.101.. for tunnels, skipping ``taken``."""
    free = [f"127.0.0.{n}" for n in range(_FIRST_LOCAL, 255) if f"127.0.0.{n}" not in taken]
    if count > len(free):
        raise UsageError(f"at most {len(free)} ssh:// hosts in one run")
    return free[:count]


@contextlib.contextmanager
def tunnels(hosts: Sequence[SshHost], taken: Sequence[str] = ()) -> Iterator[list[SshTunnel]]:
    """An open :class:`SshTunnel` for each host (opened one after the other), all
    closed when the block ends, however it ends. ``taken``: addresses the run's
    other hosts use (fio's client must tell every host apart by address)."""
    config = ssh_config()
    opened: list[SshTunnel] = []
    try:
        for host, address in zip(hosts, local_addresses(taken, len(hosts)), strict=True):
            opened.append(SshTunnel(host, address, config=config).__enter__())
        yield opened
    finally:  # all at once: each may wait seconds for its remote fio to stop
        closing = [threading.Thread(target=tunnel.close) for tunnel in opened]
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
