"""The clients of a guest's two channels, against servers speaking their protocols:
the shell channel (the key's line and the command's line in, the command's output
until the guest closes) and QEMU's monitor (QMP: greeting, qmp_capabilities, one
command)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from volbench.errors import FioError, UsageError
from volbench.lab.monitor import execute
from volbench.lab.shell import Shell, run_at
from volbench.lab.throttle import Bucket, Limits

KEY = "k" * 64


@pytest.fixture
def shell_server() -> Iterator[Callable[[bool], Shell]]:
    """A loopback server answering each connection with ``ran: LINE`` after the key's
    line (and closing, unless told to hang)."""
    sockets: list[socket.socket] = []

    def start(close: bool) -> Shell:
        server = socket.create_server(("127.0.0.1", 0))
        sockets.append(server)

        def serve() -> None:
            conn, _ = server.accept()
            sockets.append(conn)
            stream = conn.makefile("rb")
            key, line = stream.readline(), stream.readline()
            conn.sendall(b"ran: " + line if key == f"{KEY}\n".encode() else b"no key")
            if close:
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
        host, port = server.getsockname()[:2]
        return Shell((str(host), int(port)), KEY)

    yield start
    for sock in sockets:
        sock.close()


def test_shell_channel_protocol(shell_server: Callable[[bool], Shell]) -> None:
    assert run_at(shell_server(True), "cat /proc/diskstats") == "ran: cat /proc/diskstats\n"


def test_shell_channel_timeout(shell_server: Callable[[bool], Shell]) -> None:
    with pytest.raises(FioError, match=r"no answer in 0\.5 s"):
        run_at(shell_server(False), "sleep 10", timeout_s=0.5)


def test_shell_channel_refusals() -> None:
    with pytest.raises(UsageError, match="one line"):
        run_at(Shell(("127.0.0.1", 9), KEY), "a\nb")
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(FioError, match=r"the guest shell at 127\.0\.0\.1"):
        run_at(Shell(("127.0.0.1", port), KEY), "true")


def fake_qmp(path: Path, answers: list[dict[str, object]]) -> list[dict[str, object]]:
    """A QMP server on ``path``: greets, then answers each command in turn (an event
    first); returns the commands it received (filled as they come)."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    received: list[dict[str, object]] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn, server:
            stream = conn.makefile("rw")
            stream.write(json.dumps({"QMP": {"version": {}}}) + "\n")
            stream.flush()
            for answer in answers:
                received.append(json.loads(stream.readline()))
                stream.write(json.dumps({"event": "SOMETHING"}) + "\n")
                stream.write(json.dumps(answer) + "\n")
                stream.flush()

    threading.Thread(target=serve, daemon=True).start()
    return received


def test_monitor_sends_every_figure(tmp_path: Path) -> None:
    limits = Limits(iops_total=Bucket(1000, 3000, 10))
    received = fake_qmp(tmp_path / "qmp.sock", [{"return": {}}, {"return": {}}])
    value = limits.every_property()
    args = {"path": "tg0", "property": "limits", "value": value}
    assert execute(tmp_path / "qmp.sock", "qom-set", args) == {}
    assert [r["execute"] for r in received] == ["qmp_capabilities", "qom-set"]
    sent = received[1]["arguments"]
    assert isinstance(sent, dict)
    assert sent["value"]["iops-total-max-length"] == 10
    assert sent["value"]["iops-read"] == 0 and sent["value"]["bps-total-max-length"] == 1
    assert len(sent["value"]) == 19  # 6 buckets x (rate, max, max-length) + iops-size


def test_monitor_refusal_is_one_line(tmp_path: Path) -> None:
    error = {"class": "GenericError", "desc": "values cannot be used together"}
    refusal: dict[str, object] = {"error": error}
    fake_qmp(tmp_path / "qmp.sock", [{"return": {}}, refusal])
    with pytest.raises(UsageError, match="qemu refused qom-set: values cannot be used"):
        execute(tmp_path / "qmp.sock", "qom-set", {})
    with pytest.raises(UsageError, match="cannot reach qemu's monitor"):
        execute(tmp_path / "none.sock", "qom-get", {})
