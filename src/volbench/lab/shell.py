"""The guest shell channel: run one POSIX ``sh`` command in a lab guest and read its
output, for what fio's server cannot tell (``/proc/diskstats``, ``/proc/stat``).

Protocol (the guest side is busybox ``nc -ll -p 8766 -e /etc/volbench-shell``,
:mod:`volbench.lab.init_script`): connect to the guest's shell address, send the
guest's key as one line, then ONE line (the command, no newline inside), and read
until the guest closes the connection: the command's standard output (stderr is
dropped). The guest runs it with ``sh -c`` as root, and only after the key matched:
a connection without it is closed with nothing run.

Why a key: QEMU's user networking forwards the port from a loopback address
(127.0.0.X) that every local user can connect to, and this machine's QEMU (7.2)
forwards no port to a unix socket. The key is :data:`KEY_BYTES` random bytes made
for each boot, kept in ``shell.key`` in the guest's folder (0600, in a 0700 folder:
volbench's owner's alone, lab/home.py) and handed to the guest by QEMU's firmware
configuration device (``-fw_cfg name=...,file=shell.key``: read from the file, so it
is in no command line ``ps`` shows), which the guest reads once at boot.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from volbench.errors import FioError, UsageError
from volbench.lab.guest import load
from volbench.lab.home import FILE_MODE

LIMIT_BYTES = 64 << 20
"""The most output one command may send back."""
KEY_FILE = "shell.key"
"""The key's file in the guest's folder."""
KEY_BYTES = 32
"""The key's random bytes (written as 64 hex digits)."""


@dataclass(frozen=True)
class Shell:
    """Where a guest's shell channel listens on this machine (host, port), and the
    key it asks for first."""

    address: tuple[str, int]
    key: str = field(repr=False)

    def request(self, command: str) -> bytes:
        """What volbench sends to run ``command``: the key's line, then the command's."""
        if any(char in command for char in "\n\r\0"):
            raise UsageError("a guest command is one line: no newline or NUL in it")
        return f"{self.key}\n{command}\n".encode()


def make_key(folder: Path) -> Path:
    """A new key for the guest whose folder is ``folder``, written there (its owner's
    alone from its creation: ``O_EXCL``, mode 0600); its path."""
    path = folder / KEY_FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(KEY_BYTES))
    return path


def read_key(folder: Path) -> str:
    """The key of the guest whose folder is ``folder``; UsageError when it has none."""
    try:
        key = (folder / KEY_FILE).read_text().strip()
    except OSError as exc:
        raise UsageError(
            f"cannot read the guest's shell key {folder / KEY_FILE}: {exc.strerror or exc}"
            f" (`volbench lab down {folder.name}`, then up again)"
        ) from None
    if len(key) != 2 * KEY_BYTES:
        raise UsageError(f"{folder / KEY_FILE} is not a shell key (`volbench lab down`, then up)")
    return key


def shell_of(name: str) -> Shell:
    """Guest ``name``'s shell channel."""
    guest = load(name)
    return Shell((guest.address, guest.shell_port), read_key(guest.folder))


def run_at(shell: Shell, command: str, timeout_s: float = 10.0) -> str:
    """``command``'s stdout from the guest whose shell channel is ``shell``.

    FioError when the guest does not answer or the output is not complete within
    ``timeout_s`` seconds (from the connection's start)."""
    request = shell.request(command)
    host, port = shell.address
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    try:
        with socket.create_connection(shell.address, timeout=timeout_s) as sock:
            sock.sendall(request)
            size = 0
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                data = sock.recv(65536)
                if not data:
                    return b"".join(chunks).decode(errors="replace")
                chunks.append(data)
                size += len(data)
                if size > LIMIT_BYTES:
                    raise FioError(f"the guest at {host} sent over {LIMIT_BYTES} bytes")
    except TimeoutError:
        pass
    except OSError as exc:
        raise FioError(f"the guest shell at {host}:{port}: {exc.strerror or exc}") from exc
    raise FioError(f"the guest shell at {host}:{port} gave no answer in {timeout_s:g} s")


def run_in_guest(name: str, command: str, timeout_s: float = 10.0) -> str:
    """``command``'s stdout in lab guest ``name`` (:func:`run_at`)."""
    return run_at(shell_of(name), command, timeout_s)
