"""Several hosts and several targets at once, with real fio: fio servers on
loopback addresses (127.0.0.2, 127.0.0.3, ...) play the hosts, each with its own
file target; several local targets share one blkio cgroup limit.

Every server is started by the test on a free port, in its own session, and its
whole process group is killed afterwards (or mid-run, to lose a host).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, finish, fio_json, in_cgroup

from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.model import RunRecord, RunStatus
from volbench.plans.pts.options import PtsSetup
from volbench.store.repository import Store

SWEEP = ("run", "sweep", "--rw", "randread", "--bs", "4k", "--runtime", "1s", "--ramp-time", "0")


@dataclass
class Server:
    """One ``fio --server`` this test started."""

    address: str
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    def kill(self) -> None:
        """Kill the server and every fio it forked (its own process group)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def _free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _listening(address: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((address, port)) == 0


StartServer = Callable[[str], Server]


@pytest.fixture
def fio_server(tmp_path: Path) -> Iterator[StartServer]:
    """Factory: ``fio_server("127.0.0.2")`` starts fio's server there on a free port."""
    started: list[Server] = []

    def start(address: str) -> Server:
        port = _free_port(address)
        folder = tmp_path / f"server-{address}"
        folder.mkdir()
        proc = subprocess.Popen(
            ["fio", f"--server=ip:{address},{port}"],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        server = Server(address, port, proc)
        started.append(server)
        deadline = time.monotonic() + 10
        while not _listening(address, port):
            assert proc.poll() is None and time.monotonic() < deadline, "fio --server did not start"
            time.sleep(0.05)
        return server

    yield start
    for server in started:
        server.kill()


@dataclass(frozen=True)
class Protected:
    """A loop device holding ext4 (a colleague's data), and its image's checksum."""

    device: str
    image: Path
    checksum: str

    def unchanged(self) -> bool:
        return hashlib.sha256(self.image.read_bytes()).hexdigest() == self.checksum


@pytest.fixture
def ext4_device(loop_device: Callable[..., str], system_tool: Callable[[str], str]) -> Protected:
    mkfs = system_tool("mkfs.ext4")
    device = loop_device(32, setup=lambda image: subprocess.run([mkfs, "-q", "-F", str(image)]))
    name = os.path.basename(device)
    image = Path(Path(f"/sys/class/block/{name}/loop/backing_file").read_text().strip())
    return Protected(device, image, hashlib.sha256(image.read_bytes()).hexdigest())


def _stored(volbench: Volbench, ref: str = "latest") -> RunRecord:
    with Store.open(str(volbench.db)) as store:
        return store.get_run(ref)


def _entries(raw: str) -> list[dict[str, object]]:
    return [e for e in fio_json(raw)["client_stats"] if e["jobname"] != "All clients"]


def test_agent_check_tells_which_hosts_answer(volbench: Volbench, fio_server: StartServer) -> None:
    up = fio_server("127.0.0.2")
    down = f"127.0.0.3:{_free_port('127.0.0.3')}"
    proc = volbench("agent", "--check", up.host, down, "--timeout", "5", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    hosts = {h["address"]: h for h in json.loads(proc.stdout)["hosts"]}
    assert hosts[up.host]["answers"] and hosts[up.host]["fio_version"].startswith("fio-")
    assert not hosts[down]["answers"] and "failed to connect" in hosts[down]["error"]


def test_agent_daemon_serves_until_killed(volbench: Volbench, tmp_path: Path) -> None:
    port = _free_port("127.0.0.4")
    pidfile = tmp_path / "agent.pid"
    proc = volbench("agent", "--bind", "127.0.0.4", "--port", str(port), "--daemon", str(pidfile))
    assert proc.returncode == 0, proc.stderr
    pid = int(pidfile.read_text())
    try:
        check = volbench("agent", "--check", f"127.0.0.4:{port}", "--format", "json")
        assert check.returncode == 0, check.stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)  # the daemon this test started


def test_hosts_results_per_place_and_aggregate(
    volbench: Volbench, fio_server: StartServer, tmp_path: Path
) -> None:
    """Per-host results equal what each server measured (fio's client_stats entry),
    the aggregate is their sum, and its percentiles are those of the merged bins."""
    a, b = fio_server("127.0.0.2"), fio_server("127.0.0.3")
    files = {a.host: tmp_path / "a.img", b.host: tmp_path / "b.img"}
    proc = volbench(
        *SWEEP,
        *("--iodepth", "1,4", "--size", "16m", "--hosts", f"{a.host},{b.host}"),
        *(f"--target={host}:{path}" for host, path in files.items()),
        *("--runs-dir", str(volbench.runs_dir), "--format", "json"),
    )
    assert proc.returncode == 0, proc.stderr
    run = _stored(volbench)
    assert run.status is RunStatus.COMPLETED and run.settings.ioengine == "libaio"
    assert [h.answers for h in run.settings.hosts] == [True, True]
    for times in run.rounds:  # volbench's clock: fio's client stamps its output as it starts
        assert times.started_at is not None and times.ended_at is not None, times
        took = datetime.fromisoformat(times.ended_at) - datetime.fromisoformat(times.started_at)
        assert took >= timedelta(seconds=1), times  # each round's 1 s runtime at least
    entries = [e for raw in run.raw_outputs for e in _entries(raw)]
    together = [r for r in run.results if r.hostname is None]
    assert sorted(r.test for r in together) == ["qd1-jobs1", "qd4-jobs1"]
    for result in together:
        mine = [e for e in entries if e["jobname"] == result.test]
        assert {str(e["hostname"]) for e in mine} == {"127.0.0.2", "127.0.0.3"}
        reads = [e["read"] for e in mine]  # type: ignore[index]
        assert result.iops == pytest.approx(sum(r["iops"] for r in reads))  # type: ignore[index]
        bins = merge_bins(*({int(k): v for k, v in r["lat_ns"]["bins"].items()} for r in reads))  # type: ignore[index]
        assert result.lat_p99_ns == percentiles_from_bins(bins, [99.0])[99.0]
        shares = [r for r in run.results if r.test == result.test and r.hostname]
        for share in shares:
            host, _, path = (share.hostname or "").partition(":")
            (entry,) = [e for e in mine if e["hostname"] == host]
            assert path.endswith(f"{entry['job options']['filename']}")  # type: ignore[index]
            assert share.iops == entry["read"]["iops"]  # type: ignore[index]
    assert (tmp_path / "a.img").stat().st_size == 16 << 20  # fio on "host" a laid it out
    document = volbench.show()
    assert [row["place"] for row in document["places"]["rows"]][:3] == [
        "all 2 together",
        f"{a.host}:{files[a.host]}",
        f"{b.host}:{files[b.host]}",
    ]
    logs = list((run.logs_dir(volbench.runs_dir) / "round-000").glob("qd1-jobs1@*_iops.*.log.*"))
    assert {p.name.rsplit(".log.", 1)[1] for p in logs} == {"127.0.0.2", "127.0.0.3"}
    # fio's client wrote each host's logs here; they are stored with their round as fio
    # wrote them (a 1 s test may leave its iops and bw logs empty: no series then)
    written = {
        path.name: [[int(f) for f in line.split(",")[:2]] for line in path.read_text().splitlines()]
        for path in logs[0].parent.glob("qd1-jobs1@*.log.*")
    }
    stored = {
        f"{s.test}_{s.kind}.{s.job}.log.{s.host}": [list(p) for p in s.points]
        for s in run.series
        if s.round == 0
    }
    assert stored == {name: lines for name, lines in written.items() if lines}
    assert {name.rsplit(".log.", 1)[1] for name in stored} == {"127.0.0.2", "127.0.0.3"}


def _lose_host_mid_run(
    volbench: Volbench, fio_server: StartServer, tmp_path: Path, *options: str
) -> tuple[subprocess.CompletedProcess[str], RunRecord, Server]:
    """A sweep of four 1 s points on two hosts; host b's server (and every fio it
    forked) is killed early in the second point (the first one committed)."""
    a, b = fio_server("127.0.0.2"), fio_server("127.0.0.3")
    started = volbench.start(
        *SWEEP,
        *("--iodepth", "1,2,4,8", "--size", "16m", "--hosts", f"{a.host},{b.host}"),
        *("--target", str(tmp_path / "t.img"), "--runs-dir", str(volbench.runs_dir), *options),
    )
    deadline = time.monotonic() + 30
    while not list(volbench.runs_dir.glob("*/round-001/job-1.fio")):  # round 0 committed
        assert started.poll() is None and time.monotonic() < deadline, started.stderr
        time.sleep(0.05)
    time.sleep(0.5)  # fio's client connects and starts the jobs in about a second
    b.kill()
    return finish(started), _stored(volbench), a


def test_lost_host_stops_the_others_cleanly(
    volbench: Volbench, fio_server: StartServer, tmp_path: Path
) -> None:
    proc, run, _ = _lose_host_mid_run(volbench, fio_server, tmp_path)
    line = error_line(proc, 3)
    # lost during a point (disconnected) or between two (refused): either way it stops
    assert "127.0.0.3:" in line and "--keep-going" in line
    assert "disconnected" in line or "refused the connection" in line
    assert run.status is RunStatus.FAILED
    assert run.results, "what was measured before host b was lost is stored"
    hosts_by_round: dict[int, set[str]] = {}
    for r in run.results:
        if r.hostname:
            hosts_by_round.setdefault(r.round, set()).add(r.hostname.split(":")[0])
    last = max(hosts_by_round)
    if len(hosts_by_round[last]) < 2:  # the point host b was lost in: a share at most
        del hosts_by_round[last]
    assert all(len(found) == 2 for found in hosts_by_round.values())  # finished: both


def test_keep_going_finishes_without_the_lost_host(
    volbench: Volbench, fio_server: StartServer, tmp_path: Path
) -> None:
    proc, run, _ = _lose_host_mid_run(volbench, fio_server, tmp_path, "--keep-going")
    assert proc.returncode == 0, proc.stderr
    assert run.status is RunStatus.COMPLETED
    assert run.error and "127.0.0.3:" in run.error and "--keep-going" in run.error
    together = {r.test for r in run.results if r.hostname is None}
    assert together == {"qd1-jobs1", "qd2-jobs1", "qd4-jobs1", "qd8-jobs1"}
    assert "went on without it" in proc.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--target", "127.0.0.9:/tmp/x"), "127.0.0.9 is not in --hosts"),
        (("--target", "/tmp/x"), "need --size"),
        (("--target", "/tmp/x", "--size", "1m", "--abort-on-stall"), "--abort-on-stall cannot"),
    ],
)
def test_bad_multi_host_input(volbench: Volbench, options: tuple[str, ...], message: str) -> None:
    proc = volbench("run", "quick", "--hosts", "127.0.0.2", *options)
    assert message in error_line(proc, 2)


def test_remote_writes_need_force(volbench: Volbench, fio_server: StartServer) -> None:
    a = fio_server("127.0.0.2")
    proc = volbench("run", "quick", "--hosts", a.host, "--target", "/tmp/x", "--size", "16m")
    line = error_line(proc, 2)
    assert "cannot check a file on another host" in line and "--force" in line


BLKIO = Path("/sys/fs/cgroup/blkio")


def test_local_targets_sharing_one_cgroup_limit(
    volbench: Volbench, loop_device: Callable[..., str]
) -> None:
    """Two partitions of one loop device, whose reads a ``volbench-`` cgroup caps at
    1,000 IOPS (blkio throttles the whole disk): alone each reaches the cap, together
    they share it, and the shared-limit finding says so."""
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    sfdisk = "/usr/sbin/sfdisk" if Path("/usr/sbin/sfdisk").exists() else "sfdisk"

    def two_partitions(image: Path) -> None:
        subprocess.run(
            [sfdisk, "-q", str(image)], input="label: gpt\n,8M\n,8M\n", text=True, check=True
        )

    device = loop_device(32, setup=two_partitions, partitions=True)
    parts = [f"{device}p1", f"{device}p2"]
    if not all(Path(p).exists() for p in parts):
        pytest.skip("the kernel shows no partitions of loop devices here")
    rdev = os.stat(device).st_rdev
    group = BLKIO / f"volbench-shared-{os.getpid()}"
    group.mkdir()
    try:
        (group / "blkio.throttle.read_iops_device").write_text(
            f"{os.major(rdev)}:{os.minor(rdev)} 1000"
        )
        args = [
            *SWEEP,
            *("--iodepth", "4", "--size", "4m", "--targets", ",".join(parts), "--solo"),
            *("--runs-dir", str(volbench.runs_dir), "--format", "json"),
        ]
        proc = in_cgroup(volbench, group, *args)
    finally:
        group.rmdir()
    assert proc.returncode == 0, proc.stderr
    places = json.loads(proc.stdout)["places"]
    (finding,) = places["shared_limits"]
    assert finding["found"], places
    # the cap binds (never above it); a busy 2-core machine may starve fio below it
    assert 600 <= finding["together"] <= 1050
    assert all(600 <= v <= 1050 for v in finding["alone"].values())
    assert finding["together"] < 0.75 * sum(finding["alone"].values())  # one shared limit
    run = _stored(volbench)
    (aggregate,) = [r for r in run.results if r.hostname is None]
    assert aggregate.iops == finding["together"]
    shown = volbench("show", "latest").stdout
    assert "shared limit: qd4-jobs1: the 2 targets together did" in shown
    assert f"places: 1 = {parts[0]}, 2 = {parts[1]}" in shown  # the series TEST@1, TEST@2


def test_pts_rounds_on_two_hosts(
    volbench: Volbench, fio_server: StartServer, tmp_path: Path
) -> None:
    """PTS cells on several hosts: every WSAT round runs on both at once; the run's
    figures (what steady state and the report read) are the sums of the hosts'."""
    a, b = fio_server("127.0.0.2"), fio_server("127.0.0.3")
    common = ("--hosts", f"{a.host},{b.host}", "--target", str(tmp_path / "w.img"))
    refused = volbench("pts", "wsat", *common, "--size", "16m", "--force")
    assert "cannot purge a target on another host" in error_line(refused, 2)
    proc = volbench(
        *("pts", "wsat", *common, "--size", "16m", "--force", "--no-purge"),
        *("--cell-seconds", "1", "--wsat-max-rounds", "3", "--runs-dir", str(volbench.runs_dir)),
    )
    assert proc.returncode == 0, proc.stderr
    run = _stored(volbench)
    assert run.status is RunStatus.COMPLETED and 1 <= len(run.raw_outputs) <= 3
    assert run.setup(PtsSetup).purge_method == "none (--no-purge)"
    for round_no, raw in enumerate(run.raw_outputs):
        (together,) = [r for r in run.results if r.round == round_no and r.hostname is None]
        shares = [r for r in run.results if r.round == round_no and r.hostname]
        assert len(shares) == 2
        assert together.iops == pytest.approx(sum(r.iops for r in shares))
        per_host: dict[str, float] = {}  # TC 4: four clone entries per host
        for entry in _entries(raw):
            host = str(entry["hostname"])
            per_host[host] = per_host.get(host, 0.0) + entry["write"]["iops"]  # type: ignore[index]
        assert sorted(r.iops for r in shares) == pytest.approx(sorted(per_host.values()))
    assert "WSAT" in proc.stdout and "2 places at once" in proc.stdout


def test_remote_device_paths_are_normalised_and_links_checked_on_the_host(
    volbench: Volbench, fio_server: StartServer, ext4_device: Protected, tmp_path: Path
) -> None:
    """A loop device holding ext4, named on a host (fio's server on loopback) as
    ``/./dev/loopN``, ``//dev/loopN``, for every host, and through a link: every write
    is refused (a device path after normalisation needs --destroy-data naming it; a
    link is found by the host's own fio) and the device's image is unchanged."""
    device, name = ext4_device.device, os.path.basename(ext4_device.device)
    link = tmp_path / "link"
    link.symlink_to(device)
    a = fio_server("127.0.0.2")
    write = (*SWEEP[:3], "randwrite", "--hosts", a.host, "--size", "4m", "--force")
    for target in (f"{a.host}:/./dev/{name}", f"/./dev/{name}", f"{a.host}://dev/{name}"):
        line = error_line(volbench(*write, "--target", target), 2)
        assert f"refusing to write {a.host}:/dev/{name}: volbench cannot check a device" in line
    linked = error_line(volbench(*write, "--target", f"{a.host}:{link}"), 2)
    assert f"refusing to write {a.host}:{link}: on that host it is a device or a link" in linked
    under = error_line(
        volbench(*write, "--target", f"{a.host}:{tmp_path}/../{tmp_path.name}/link"), 2
    )
    assert f"{a.host}:{link}: on that host it is a device or a link" in under
    relative = error_line(volbench(*write, "--target", "dev/x"), 2)
    assert "needs an absolute path" in relative
    assert ext4_device.unchanged()


def test_a_remote_file_re_pointed_at_a_device_mid_run_is_not_written(
    volbench: Volbench, fio_server: StartServer, ext4_device: Protected, tmp_path: Path
) -> None:
    """A remote file target (``--force``) replaced by a link to an ext4 device while
    the run's first round writes it (fio has the file open): the host's own fio checks
    the path again before each round that writes, so the run stops at the next one in
    one line and the device is unchanged (before, the next rounds wrote the device and
    the run "completed"). A swap between that check and fio's open on the host is the
    window that remains: nothing on this machine can hold a remote file open."""
    device = ext4_device.device
    a = fio_server("127.0.0.2")
    target = tmp_path / "remote.dat"
    proc = volbench.start(
        "run",
        "sweep",
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--iodepth",
        "1,2",
        "--runtime",
        "4s",
        "--ramp-time",
        "0",
        "--hosts",
        a.host,
        "--target",
        f"{a.host}:{target}",
        "--size",
        "4m",
        "--force",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    try:
        deadline = time.monotonic() + 60
        while not list(volbench.runs_dir.glob("*/round-000/job-0.fio")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.02)
        time.sleep(2)  # round 0's fio has its file open: it writes that file to its end
        swapped = tmp_path / "swap.tmp"
        swapped.symlink_to(device)
        os.replace(swapped, target)
    finally:
        done = finish(proc)
    line = error_line(done, 2)
    assert f"refusing to write {a.host}:{target}: on that host it is a device or a link" in line
    assert ext4_device.unchanged()


def test_a_remote_write_fio_refused_fails_the_run(
    volbench: Volbench,
    fio_server: StartServer,
    ext4_device: Protected,
    system_tool: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """A device mounted on the host, named with --destroy-data: the host's fio refuses
    it (allow_mounted_write=0) with error 0 and no I/O. The run fails in one line with
    fio's words, where it was stored as "completed" with 0 IOPS."""
    device = ext4_device.device
    where = tmp_path / "mnt"
    where.mkdir()
    subprocess.run([system_tool("mount"), device, str(where)], check=True)
    try:
        a = fio_server("127.0.0.2")
        done = volbench(
            *SWEEP[:3],
            "randwrite",
            "--hosts",
            a.host,
            "--target",
            f"{a.host}:{device}",
            f"--destroy-data={a.host}:{device}",
            "--size",
            "4m",
            "--runs-dir",
            str(volbench.runs_dir),
        )
    finally:
        subprocess.run([system_tool("umount"), str(where)], check=False)
    line = error_line(done, 3)
    assert "did no I/O at all" in line and "appears mounted" in line, line
    assert _stored(volbench).status is RunStatus.FAILED
