"""The guest shell channel: run one POSIX ``sh`` command in a lab guest and read its
output, for what fio's server cannot tell (``/proc/diskstats``, ``/proc/stat``).

Protocol (the guest side is busybox ``nc -ll -p 8766 -e /etc/volbench-shell``,
:mod:`volbench.lab.init_script`): connect to :func:`shell_address`, send ONE line
(the command, no newline inside), read until the guest closes the connection: the
command's standard output (stderr is dropped). The guest runs it with ``sh -c`` as
root, so the channel listens only on the guest's loopback forward (127.0.0.X).
"""

from __future__ import annotations

import socket
import time

from volbench.errors import FioError, UsageError
from volbench.lab.guest import load

LIMIT_BYTES = 64 << 20
"""The most output one command may send back."""


def shell_address(name: str) -> tuple[str, int]:
    """Where guest ``name``'s shell channel listens on this machine (host, port)."""
    guest = load(name)
    return guest.address, guest.shell_port


def run_at(address: tuple[str, int], command: str, timeout_s: float = 10.0) -> str:
    """``command``'s stdout from the guest whose shell channel is at ``address``.

    FioError when the guest does not answer or the output is not complete within
    ``timeout_s`` seconds (from the connection's start)."""
    if "\n" in command or "\r" in command or "\0" in command:
        raise UsageError("a guest command is one line: no newline or NUL in it")
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    try:
        with socket.create_connection(address, timeout=timeout_s) as sock:
            sock.sendall(command.encode() + b"\n")
            size = 0
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                data = sock.recv(65536)
                if not data:
                    return b"".join(chunks).decode(errors="replace")
                chunks.append(data)
                size += len(data)
                if size > LIMIT_BYTES:
                    raise FioError(f"the guest at {address[0]} sent over {LIMIT_BYTES} bytes")
    except TimeoutError:
        pass
    except OSError as exc:
        raise FioError(
            f"the guest shell at {address[0]}:{address[1]}: {exc.strerror or exc}"
        ) from exc
    raise FioError(
        f"the guest shell at {address[0]}:{address[1]} gave no answer in {timeout_s:g} s"
    )


def run_in_guest(name: str, command: str, timeout_s: float = 10.0) -> str:
    """``command``'s stdout in lab guest ``name`` (:func:`run_at`)."""
    return run_at(shell_address(name), command, timeout_s)
