"""How volbench runs the sampler script (targets/remote_stream.py) on another host:
the same way it already reaches that host.

- ``ssh://`` hosts: a second ssh session beside fio's tunnel (fio/tunnel.py's
  command, the user's keys and ``VOLBENCH_SSH_CONFIG``, without the port forward),
  running ``sh -c 'SCRIPT'``; it ends when volbench closes it (ssh ends, sshd closes
  the session, the script's next write fails).
- A TCP shell (a lab guest's second forwarded port on 127.0.0.x): connect, send the
  guest's key as one line and the script as one line, read what it prints until the
  connection closes.
- A plain ``HOST[:PORT]`` runs only fio's server, which runs no command volbench
  could sample with: no channel (:func:`volbench.places.server.no_channel`).

A channel's :meth:`open` gives the script's output as a binary stream, :meth:`poke`
asks it for a reading at once (a line on the script's standard input: ssh's, or the
connection itself, as a TCP shell gives it to the command), :meth:`reason` says in
one line why it ended or could not start.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Protocol

from volbench.fio.client import HostAddress
from volbench.fio.executable import die_with_parent
from volbench.fio.tunnel import SshHost, ssh_command

CONNECT_S = 10.0
"""Seconds a TCP shell has to accept the connection."""


class ChannelError(Exception):
    """A channel could not start (its one-line reason)."""


class Channel(Protocol):
    """Where the sampler script runs and prints."""

    def open(self) -> IO[bytes]:
        """Start the script; its output. ChannelError (one line) when it cannot start."""
        ...

    def poke(self) -> None:
        """Ask the script for a reading at once (a line on its input); no error."""
        ...

    def reason(self) -> str:
        """Why the output ended (one line), once it has."""
        ...

    def close(self) -> None:
        """End the script (its output then ends)."""
        ...


def ssh_sampler_command(host: SshHost, script: str, config: Path | None = None) -> list[str]:
    """fio tunnel's ssh command (:func:`volbench.fio.tunnel.ssh_command`: the same
    options, batch mode, no agent or X11) without its port forward, running
    ``sh -c 'SCRIPT'`` (the script holds no single quote)."""
    if "'" in script or "\n" in script:
        raise ValueError("the sampler script must be one line without single quotes")
    command = ssh_command(host, HostAddress("127.0.0.1", 1), "/nonexistent", config)
    forward = command.index("-L")
    del command[forward : forward + 2]
    command[-1] = f"sh -c '{script}'"
    return command


class SshChannel:
    """The script in an ssh session of its own (see the module)."""

    def __init__(self, host: SshHost, script: str, config: Path | None = None) -> None:
        self.command = ssh_sampler_command(host, script, config)
        self.host = host
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._proc: subprocess.Popen[bytes] | None = None

    def open(self) -> IO[bytes]:
        try:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                start_new_session=True,
                preexec_fn=die_with_parent(),
            )
        except OSError as error:
            raise ChannelError(f"cannot start ssh: {error.strerror}") from error
        assert self._proc.stdout is not None
        return self._proc.stdout

    def poke(self) -> None:
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.write(b"\n")
                proc.stdin.flush()

    def reason(self) -> str:
        """ssh's last line on stderr, else its exit code."""
        self._errors.seek(0, os.SEEK_END)
        size = self._errors.tell()
        self._errors.seek(max(0, size - 4096))
        lines = [x for x in self._errors.read().decode(errors="replace").splitlines() if x.strip()]
        if lines:
            return f"ssh: {lines[-1].strip()[:200]}"
        code = self._proc.poll() if self._proc is not None else None
        return "the ssh session ended" + (f" (exit code {code})" if code is not None else "")

    def close(self) -> None:
        """Close ssh's stdin, then SIGTERM and SIGKILL the ssh this channel started
        (by its id) until it is gone; at most 5 s each."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, sig)  # the ssh this channel started
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
                    break
            if proc.stdout is not None:
                proc.stdout.close()
        self._errors.close()


class TcpShell:
    """The script through a TCP shell at ``address`` (host, port): ``key``'s line
    (none when empty: the shell asks for none), then the script's line sent, its
    output read until the connection closes."""

    def __init__(self, address: tuple[str, int], script: str, key: str = "") -> None:
        if "\n" in script or "\n" in key:
            raise ValueError("the sampler script and the key must be one line each")
        self.address = address
        self.script = script
        self.key = key
        self._sock: socket.socket | None = None
        self._why = "the shell closed the connection"

    def open(self) -> IO[bytes]:
        host, port = self.address
        try:
            self._sock = socket.create_connection(self.address, timeout=CONNECT_S)
            key = f"{self.key}\n" if self.key else ""
            self._sock.sendall(f"{key}{self.script}\n".encode())
        except OSError as error:
            self._why = f"shell at {host}:{port}: {error.strerror or error}"
            self.close()
            raise ChannelError(self._why) from error
        self._sock.settimeout(None)
        return self._sock.makefile("rb")

    def poke(self) -> None:
        sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.sendall(b"\n")

    def reason(self) -> str:
        return self._why

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes a reader blocked on it
            sock.close()
