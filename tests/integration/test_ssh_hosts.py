"""``--hosts ssh://...`` for real: OpenSSH servers started by the test on 127.0.0.2
and 127.0.0.3 (their own config, host key and a client key made here) play two
hosts. volbench reaches fio's server on each through ``ssh -L`` with the test's
client config (``VOLBENCH_SSH_CONFIG``): the user's ``~/.ssh`` is never read.

While a run goes on, a watcher samples ``ss -ltnp`` and the process tree every
0.1 s: no fio server or ssh started for the run may listen anywhere but loopback,
and after the run (also an interrupted one) none of the ssh processes and none of
the fio processes under the test's sshd may be left. Every process the test
starts is ended by its id; sshd's sessions are found from its id in ``/proc``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, finish, fio_jobs, fio_json

from volbench.model import RunStatus
from volbench.store.repository import Store

SSHD = Path("/usr/sbin/sshd")
SWEEP = ("run", "sweep", "--rw", "randread", "--bs", "4k", "--runtime", "1s", "--ramp-time", "0")


def _tree() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command line)."""
    found: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            found[int(entry.name)] = (ppid, cmdline)
    return found


def descendants(roots: set[int]) -> dict[int, str]:
    """The processes below ``roots`` (not the roots): pid -> command line."""
    tree = _tree()
    below: dict[int, str] = {}
    changed = True
    while changed:
        changed = False
        for pid, (ppid, cmdline) in tree.items():
            if pid not in below and (ppid in roots or ppid in below):
                below[pid] = cmdline
                changed = True
    return below


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "(Z)" not in _state(pid)


def _state(pid: int) -> str:
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return f"({stat[stat.rindex(')') + 2]})"
    return ""


def _listening(address: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((address, port)) == 0


def _free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


@dataclass
class SshServers:
    """The test's sshd processes and what a client needs to reach them."""

    hosts: list[str]
    config: Path
    procs: list[subprocess.Popen[bytes]]

    @property
    def env(self) -> dict[str, str]:
        return {"VOLBENCH_SSH_CONFIG": str(self.config)}

    @property
    def pids(self) -> set[int]:
        return {p.pid for p in self.procs}


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


@pytest.fixture(scope="module")
def ssh_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServers]:
    """sshd on 127.0.0.2 and 127.0.0.3 (free ports), root login by the test's key
    only, forwarding from the client only (volbench forwards to a Unix socket); a client config
    that trusts exactly their host key. Both are ended by pid, with every session
    process they forked, however the tests end."""
    if not SSHD.exists() or shutil.which("ssh") is None:
        pytest.skip("openssh-server or openssh-client is not installed (apt-get install)")
    folder = tmp_path_factory.mktemp("sshd")
    host_key = _keygen(folder / "host_key")
    client_key = _keygen(folder / "client_key")
    (folder / "authorized_keys").write_text(client_key + "\n")
    privsep = Path("/run/sshd")  # sshd's compiled-in privilege separation directory
    privsep.mkdir(mode=0o755, exist_ok=True)
    procs: list[subprocess.Popen[bytes]] = []
    hosts: list[str] = []
    known: list[str] = []
    try:
        for address in ("127.0.0.2", "127.0.0.3"):
            port = _free_port(address)
            config = folder / f"sshd_config-{address}"
            config.write_text(
                f"ListenAddress {address}:{port}\nHostKey {folder / 'host_key'}\n"
                f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"
                "AllowTcpForwarding local\nAllowStreamLocalForwarding local\nX11Forwarding no\n"
                "PermitTTY no\nPrintMotd no\n"
            )
            procs.append(
                subprocess.Popen(
                    [str(SSHD), "-D", "-e", "-f", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=(folder / f"sshd-{address}.log").open("wb"),
                    start_new_session=True,
                )
            )
            deadline = time.monotonic() + 10
            while not _listening(address, port):
                assert procs[-1].poll() is None, (folder / f"sshd-{address}.log").read_text()
                assert time.monotonic() < deadline, "sshd did not start"
                time.sleep(0.05)
            hosts.append(f"ssh://root@{address}:{port}")
            known.append(f"[{address}]:{port} {host_key}")
        (folder / "known_hosts").write_text("\n".join(known) + "\n")
        client = folder / "ssh_config"
        client.write_text(
            f"Host *\n  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {folder / 'known_hosts'}\n  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
        )
        yield SshServers(hosts, client, procs)
    finally:
        for proc in procs:
            sessions = descendants({proc.pid})
            for pid in [proc.pid, *sessions]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)  # this fixture's sshd and its sessions
            proc.wait(timeout=10)


def _loopback(address: str) -> bool:
    return ipaddress.ip_address(address.strip("[]").split("%")[0]).is_loopback


_SS = re.compile(r"^\S+\s+\d+\s+\d+\s+(?P<addr>\S+):(?P<port>\d+)\s.*?pid=(?P<pid>\d+)")


@dataclass
class Watch:
    """Samples, every 0.1 s while a run goes on, what the run's processes listen on
    and which ssh and remote fio processes exist."""

    volbench_pid: int
    sshd_pids: set[int]
    listeners: set[tuple[str, int, str]] = field(default_factory=set)
    ssh_pids: set[int] = field(default_factory=set)
    remote_fio_pids: set[int] = field(default_factory=set)
    remote_pids: set[int] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> None:
        ours = descendants({self.volbench_pid})
        remote = descendants(self.sshd_pids)
        self.ssh_pids |= {pid for pid, cmd in ours.items() if cmd.startswith("ssh ")}
        self.remote_fio_pids |= {pid for pid, cmd in remote.items() if cmd.startswith("fio ")}
        self.remote_pids |= set(remote)
        listed = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        for line in listed.splitlines():
            match = _SS.match(line)
            if match and int(match["pid"]) in {*ours, *remote}:
                name = (ours | remote)[int(match["pid"])].split()[0]
                self.listeners.add((match["addr"], int(match["port"]), name))

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            time.sleep(0.1)


@contextlib.contextmanager
def watching(proc: subprocess.Popen[str], servers: SshServers) -> Iterator[Watch]:
    watch = Watch(proc.pid, servers.pids)
    thread = threading.Thread(target=watch.run, daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        watch.stop.set()
        thread.join(timeout=10)


def _assert_all_gone(watch: Watch) -> None:
    assert watch.ssh_pids, "the watcher saw no ssh process"
    assert watch.remote_fio_pids, "the watcher saw no fio under sshd"
    deadline = time.monotonic() + 10  # sshd reaps its sessions a moment after ssh ends
    started = watch.ssh_pids | watch.remote_pids
    while any(alive(p) for p in started):
        assert time.monotonic() < deadline, [(p, _tree().get(p)) for p in started if alive(p)]
        time.sleep(0.1)

    def left() -> list[Path]:
        return [p for p in Path("/tmp").glob("volbench-fio-*") if p.is_dir()]

    while left() and time.monotonic() < deadline:  # the watcher removes it once fio ended
        time.sleep(0.1)
    assert not left(), "socket folder left"


def _assert_loopback_only(watch: Watch) -> None:
    assert watch.listeners, "the watcher saw no listening socket"
    assert all(_loopback(addr) for addr, _, _ in watch.listeners), watch.listeners
    assert {name for _, _, name in watch.listeners} == {"ssh"}, watch.listeners


def test_runs_through_ssh_hosts(
    volbench: Volbench, ssh_servers: SshServers, tmp_path: Path
) -> None:
    """A sweep on two ssh:// hosts: each host's share is what fio measured there
    (its client_stats entry), the aggregate their sum, the hosts named by their ssh
    address; only ssh listened (on loopback), and nothing is left afterwards."""
    a, b = ssh_servers.hosts
    files = {a: tmp_path / "a.img", b: tmp_path / "b.img"}
    started = volbench.start(
        *SWEEP,
        *("--iodepth", "1,4", "--size", "16m", "--hosts", f"{a},{b}", "--force"),
        *(f"--target={host}:{path}" for host, path in files.items()),
        *("--runs-dir", str(volbench.runs_dir), "--format", "json"),
        env=ssh_servers.env,
    )
    with watching(started, ssh_servers) as watch:
        proc = finish(started)
    assert proc.returncode == 0, proc.stderr
    _assert_loopback_only(watch)
    _assert_all_gone(watch)
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    assert run.status is RunStatus.COMPLETED
    assert [h.address for h in run.settings.hosts] == [a, b]
    assert all(h.answers and (h.fio_version or "").startswith("fio-") for h in run.settings.hosts)
    assert [p.host for p in run.settings.places] == [a, b]
    for raw in run.raw_outputs:
        entries = fio_jobs(fio_json(raw))
        for test in {str(e["jobname"]) for e in entries}:
            (together,) = [r for r in run.results if r.test == test and r.hostname is None]
            mine = {str(e["hostname"]): e for e in entries if e["jobname"] == test}
            assert len(mine) == 2 and all(h.startswith("127.0.0.") for h in mine)
            shares = {r.hostname: r for r in run.results if r.test == test and r.hostname}
            assert set(shares) == {f"{host}:{path}" for host, path in files.items()}
            assert sorted(s.iops for s in shares.values()) == sorted(
                e["read"]["iops"] for e in mine.values()
            )
            assert together.iops == pytest.approx(sum(s.iops for s in shares.values()))
            assert all(s.iops > 0 for s in shares.values())
    assert all(f.stat().st_size == 16 << 20 for f in files.values())  # fio laid them out


def test_interrupted_run_leaves_nothing(
    volbench: Volbench, ssh_servers: SshServers, tmp_path: Path
) -> None:
    """Ctrl-C in the middle of a round: what was measured is kept (exit 130) and
    every ssh and remote fio process is gone."""
    started = volbench.start(
        *SWEEP,
        *("--iodepth", "1,2,4,8", "--size", "16m", "--hosts", ",".join(ssh_servers.hosts)),
        *("--target", str(tmp_path / "t.img"), "--force", "--runs-dir", str(volbench.runs_dir)),
        env=ssh_servers.env,
    )
    with watching(started, ssh_servers) as watch:
        deadline = time.monotonic() + 60
        while not list(volbench.runs_dir.glob("*/round-001/job-1.fio")):
            assert started.poll() is None and time.monotonic() < deadline, started.stderr
            time.sleep(0.05)
        time.sleep(0.5)
        started.send_signal(signal.SIGINT)  # the volbench this test started
        proc = finish(started)
    assert proc.returncode == 130, proc.stderr
    _assert_loopback_only(watch)
    _assert_all_gone(watch)
    with Store.open(str(volbench.db)) as store:
        assert store.get_run("latest").status is RunStatus.INTERRUPTED


def test_agent_check_through_ssh(volbench: Volbench, ssh_servers: SshServers) -> None:
    proc = volbench("agent", "--check", *ssh_servers.hosts, "--format", "json", env=ssh_servers.env)
    assert proc.returncode == 0, proc.stderr
    hosts = json.loads(proc.stdout)["hosts"]
    assert [h["address"] for h in hosts] == ssh_servers.hosts
    assert all(h["answers"] and h["fio_version"].startswith("fio-") for h in hosts)


def test_unreachable_ssh_host_is_one_line(volbench: Volbench, ssh_servers: SshServers) -> None:
    closed = f"ssh://root@127.0.0.3:{_free_port('127.0.0.3')}"
    proc = volbench(
        *SWEEP,
        *("--hosts", closed, "--target", "/tmp/x", "--size", "1m", "--force"),
        env=ssh_servers.env,
    )
    line = error_line(proc, 3)
    assert f"ssh to {closed} failed" in line and "refused" in line


@pytest.mark.parametrize(
    "host",
    ["ssh://-oProxyCommand=x", "ssh://root@-h", "ssh://a b", "ssh://h\n-oX", "ssh://h:0", "ssh://"],
)
def test_hostile_ssh_hosts_are_refused(volbench: Volbench, host: str) -> None:
    proc = volbench(*SWEEP, "--hosts", host, "--target", "/tmp/x", "--size", "1m")
    line = error_line(proc, 2)
    assert "ssh://[USER@]HOST[:PORT]" in line or "1..65535" in line
