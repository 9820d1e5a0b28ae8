"""Where ``volbench agent`` listens, seen with ``ss``: loopback unless ``--bind``
names another address, which prints the no-authentication warning. Only 127.0.0.x
addresses are used; every server started is killed by its process id."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

from cli_harness import Volbench


def _free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _listeners(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on ``port``."""
    lines = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in lines.splitlines():
        address, _, listened = line.split()[3].rpartition(":")
        if listened == str(port):
            found.add(address)
    return found


@contextlib.contextmanager
def _agent(volbench: Volbench, tmp_path: Path, *args: str) -> Iterator[str]:
    """``volbench agent ARGS --daemon PIDFILE``; yields its stderr; kills the fio it
    started (its process group) however the test ends."""
    pidfile = tmp_path / "agent.pid"
    proc = volbench("agent", *args, "--daemon", str(pidfile))
    assert proc.returncode == 0, proc.stderr
    pid = int(pidfile.read_text())
    try:
        yield proc.stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)  # the daemon this test started


def test_agent_listens_on_loopback_by_default(volbench: Volbench, tmp_path: Path) -> None:
    port = _free_port("127.0.0.1")
    with _agent(volbench, tmp_path, "--port", str(port)) as stderr:
        assert _listeners(port) == {"127.0.0.1"}
        assert "warning" not in stderr and "127.0.0.1:" in stderr
        check = volbench("agent", "--check", f"127.0.0.1:{port}")
        assert check.returncode == 0, check.stderr


def test_agent_bind_elsewhere_warns(volbench: Volbench, tmp_path: Path) -> None:
    port = _free_port("127.0.0.5")
    with _agent(volbench, tmp_path, "--bind", "127.0.0.5", "--port", str(port)) as stderr:
        assert _listeners(port) == {"127.0.0.5"}
    (warning,) = [line for line in stderr.splitlines() if "warning" in line]
    assert "no authentication" in warning and f"127.0.0.5 port {port}" in warning
