"""Other hosts' host and disk sampled for real: ``--hosts ssh://...`` against the
OpenSSH servers of test_ssh_hosts.py (127.0.0.2 and .3, keys made by the test), a
TCP shell on 127.0.0.4 (the protocol of a lab guest's shell port: one line, run by
``sh -c``, its output until the connection closes), and a plain fio server on
127.0.0.5, which has no channel to sample through.

The remote disk is a loop device the test makes: what the samples say it completed
(reads per second x seconds) must be fio's own I/O count of the round, within 3%.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from cli_harness import Volbench, fio_json
from test_fleet_loopback import StartServer, fio_server  # noqa: F401 (a fixture)
from test_ssh_hosts import SshServers, descendants, ssh_servers  # noqa: F401 (a fixture)

from volbench.analysis.host_series import round_hosts
from volbench.fio.tunnel import SshHost
from volbench.model import HostSample, RunStatus
from volbench.report.limit_sheets import explain_sheet
from volbench.store.repository import Store
from volbench.targets.remote_channel import SshChannel, TcpShell
from volbench.targets.remote_sampler import RemoteSampler
from volbench.targets.remote_stream import sampler_script

LoopFactory = Callable[..., str]
SWEEP = ("run", "sweep", "--rw", "randread", "--bs", "4k", "--ramp-time", "0")


def completed(points: Sequence[tuple[float, float]]) -> float:
    """I/Os completed over per-second (time s, IOPS) samples: each rate times the time
    since the sample before. The first sample spans one tick of the sampler (from its
    reading before the round to the next), as long as the others but the last (the
    reading asked for when fio ended, sooner)."""
    times = [t for t, _ in points]
    spans = [b - a for a, b in itertools.pairwise(times)]
    first = statistics.median(spans[:-1] or spans or [1.0])
    return sum(iops * span for (_, iops), span in zip(points, [first, *spans], strict=True))


def test_ssh_host_and_its_disk_are_sampled_each_round(
    volbench: Volbench,
    ssh_servers: SshServers,  # noqa: F811 (the fixture imported above)
    loop_device: LoopFactory,
) -> None:
    """Two rounds on an ssh:// host's loop device: each round stores the host's samples,
    named after it, whose reads add up to fio's own count of the round; the limit
    sheet names the host as sampled; no sampler is left on the host afterwards."""
    host = ssh_servers.hosts[0]
    device = loop_device(64)
    proc = volbench(
        *SWEEP,
        *("--iodepth", "1,4", "--runtime", "2s", "--size", "32m", "--hosts", host),
        *("--target", device, "--runs-dir", str(volbench.runs_dir)),
        env=ssh_servers.env,
    )
    assert proc.returncode == 0, proc.stderr
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    assert run.status is RunStatus.COMPLETED and run.error is None
    sampled = [s for s in run.series if s.direction == "host"]
    assert sampled and {s.host for s in sampled} == {host}
    assert {s.round for s in sampled} == {0, 1}
    for round_no, raw in enumerate(run.raw_outputs):
        (entry,) = [e for e in fio_json(raw)["client_stats"] if e["jobname"] != "All clients"]
        ios = entry["read"]["total_ios"]
        (iops,) = [s for s in sampled if s.round == round_no and s.kind == "dev_iops"]
        points = [(t / 1000, float(v)) for t, v in iops.points]
        assert len(points) >= 2
        assert completed(points) == pytest.approx(ios, rel=0.03), (round_no, points, ios)
        facts = {s.kind: s.points[0][1] for s in sampled if s.round == round_no}
        assert facts["dev_hwq"] == 1  # a loop device: blk-mq, one hardware queue
        cpus = [s for s in sampled if s.round == round_no and s.kind == "cpu"]
        assert len(cpus) == os.cpu_count()  # the "other host" is this machine
    readings = round_hosts(run.series)[0].readings
    assert all(r.fio_cpu_cores is not None for r in readings[1:])  # fio's processes there
    assert explain_sheet(run).notes[0].startswith("samples: each CPU's busy share")
    assert explain_sheet(run).notes[0].endswith(f"while each test ran, on {host}")
    deadline = time.monotonic() + 10  # the sampler ends at its next write to a closed session
    while left := descendants(ssh_servers.pids):
        assert time.monotonic() < deadline, left
        time.sleep(0.1)


def test_ssh_session_that_fails_says_why(
    ssh_servers: SshServers,  # noqa: F811 (the fixture imported above)
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.3", 0))  # a port nobody listens on (bound, never listening)
    port = closed.getsockname()[1]
    try:
        channel = SshChannel(SshHost("127.0.0.3", "root", port), sampler_script(None))
        sampler = RemoteSampler("ssh://root@127.0.0.3", channel)
        sampler.open(ready_s=10)
    finally:
        closed.close()
    assert sampler.failure is not None and "\n" not in sampler.failure
    assert sampler.failure.startswith("its sampling session ended (ssh: ")
    assert "refused" in sampler.failure


@contextlib.contextmanager
def tcp_shell(address: str) -> Iterator[tuple[tuple[str, int], list[subprocess.Popen[bytes]]]]:
    """A TCP shell on ``address``: each connection's first line is run by ``sh -c``
    (busybox's sh where installed, as in a lab guest), its stdin and stdout the
    connection (as busybox ``nc -e`` gives them). The shells it started are ended by
    their ids afterwards."""
    server = socket.socket()
    server.bind((address, 0))
    server.listen(4)
    shells: list[subprocess.Popen[bytes]] = []
    sh = [shutil.which("busybox") or "busybox", "sh"] if shutil.which("busybox") else ["sh"]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                line = b""
                while not line.endswith(b"\n") and len(line) < 65536:  # no more than it
                    line += conn.recv(1) or b"\n"
                command = line.decode().rstrip("\n")
                shells.append(subprocess.Popen([*sh, "-c", command], stdin=conn, stdout=conn))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname(), shells
    finally:
        server.close()
        for shell in shells:
            if shell.poll() is None:
                shell.send_signal(signal.SIGKILL)  # a shell this test started
            shell.wait(timeout=10)


def test_tcp_shell_samples_a_disk_as_fio_reads_it(loop_device: LoopFactory) -> None:
    """The sampler through a TCP shell (busybox sh) while fio reads 3,000 blocks of a
    loop device: the samples add up to those reads; closing the sampler ends the shell."""
    device = loop_device(32)
    with tcp_shell("127.0.0.4") as (address, shells):
        sampler = RemoteSampler("lab://t", TcpShell(address, sampler_script(device)))
        sampler.open(ready_s=10)
        assert sampler.failure is None and sampler.device == Path(device).name
        sampler.begin()
        fio = subprocess.run(
            [
                "fio",
                "--name=t",
                f"--filename={device}",
                "--rw=randread",
                "--bs=4k",
                "--direct=1",
                "--ioengine=psync",
                "--number_ios=3000",
                "--rate_iops=1500",
                "--output-format=json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        samples: tuple[HostSample, ...] = sampler.end(sampler.mark())
        sampler.close()
        (shell,) = shells
        assert shell.wait(timeout=10) != 0  # its next write failed: the reader is gone
    ios = fio_json(fio.stdout)["jobs"][0]["read"]["total_ios"]
    assert ios == 3000
    points = [(s.time_s, s.iops or 0.0) for s in samples]
    assert len(points) >= 2 and completed(points) == pytest.approx(ios, rel=0.03), points
    assert sampler.failure is None


def test_plain_fio_server_has_no_channel(
    volbench: Volbench,
    fio_server: StartServer,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    server = fio_server("127.0.0.5")
    proc = volbench(
        *SWEEP,
        *("--iodepth", "1", "--runtime", "1s", "--size", "8m", "--hosts", server.host),
        *("--target", str(tmp_path / "t.img"), "--force", "--runs-dir", str(volbench.runs_dir)),
    )
    assert proc.returncode == 0, proc.stderr
    why = (
        f"{server.host} runs only fio's server; volbench has no channel to sample it: "
        "use ssh://127.0.0.5"
    )
    assert why in proc.stderr + proc.stdout
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    assert not [s for s in run.series if s.direction == "host"]
    assert explain_sheet(run).notes[0] == (
        f"no host or device samples: {why}; the verdicts rest on fio's figures alone"
    )
