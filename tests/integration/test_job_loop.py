"""``volbench run job`` with the real fio: an ext4 device a job file names (directly,
through a link, by a relative path, in an included file) refused and unchanged, and
``--target`` in place of the job file's files; refused options, one line each; a job
file on another host through fio's server, and through ssh. (The figures against fio's
own, and resume: tests/integration/test_job_throttle.py.)

Every device is a loop device over an image file made by the ``loop_device`` fixture
(which detaches it, and only it); only processes this test started are signalled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, finish, run_all
from test_fleet_loopback import StartServer, fio_server  # noqa: F401 (a fixture)
from test_ssh_hosts import SshServers, _assert_all_gone, ssh_servers, watching  # noqa: F401

from volbench.store.repository import Store

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

Loop = Callable[..., str]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_ext4_device_a_job_file_names_is_refused_and_unchanged(
    volbench: Volbench, loop_device: Loop, system_tool: Callable[[str], str]
) -> None:
    """Named directly, through a link, by a relative path or in an included file:
    refused in one line naming the device, nothing written; with ``--target`` in their
    place the jobs run on the target alone."""
    mkfs = system_tool("mkfs.ext4")
    device = loop_device(
        16,
        setup=lambda image: subprocess.run(
            [mkfs, "-q", "-F", str(image)], check=True, capture_output=True
        ),
    )
    image = Path(
        Path(f"/sys/class/block/{Path(device).name}/loop/backing_file").read_text().strip()
    )
    before = _sha(image)
    home = volbench.home
    (home / "link").symlink_to(device)
    (home / "device.inc").write_text(f"filename={device}\n")
    names = {
        "direct.fio": f"filename={device}",
        "link.fio": "filename=link",
        "relative.fio": f"filename={os.path.relpath(device, home)}",
        "include.fio": "include device.inc",
    }
    for name, line in names.items():
        (home / name).write_text(f"[job]\nrw=write\nbs=64k\nsize=8m\n{line}\n")
    done = run_all(
        [
            (volbench, ("run", "job", name, "--runs-dir", str(volbench.runs_dir)), None)
            for name in names
        ]
    )
    for name, proc in zip(names, done, strict=True):
        line = error_line(proc, 2)
        assert line == (
            f"volbench: error: refusing to write {device}: it holds an ext4 filesystem"
            f" (use --destroy-data={device} to overwrite it)"
        ), (name, line)
    assert _sha(image) == before
    assert not volbench.stored_runs()
    target = home / "scratch.img"
    replaced = volbench(
        "run",
        "job",
        "direct.fio",
        "--target",
        str(target),
        "--size",
        "16m",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert replaced.returncode == 0, replaced.stderr
    run = json.loads(replaced.stdout)
    assert run["target"]["path"] == str(target) and run["settings"]["job"]["replaced"]
    (job,) = volbench.runs_dir.glob("*/round-000/job.fio")
    assert device not in job.read_text() and "filename=/proc/" in job.read_text()
    assert _sha(image) == before


def test_refused_options_are_one_line_each_and_nothing_runs(volbench: Volbench) -> None:
    lines = {
        "exec_prerun=touch ran": "exec_prerun runs a command before the job",
        "ioengine=external:/tmp/engine.so": "loads a library into fio",
        "write_bw_log=/tmp/bw": "write_bw_log='/tmp/bw' names a file outside the run's folder",
        "trigger-file=/tmp/go": "trigger-file runs a command when a file appears",
    }
    for number, line in enumerate(lines):
        (volbench.home / f"bad{number}.fio").write_text(f"[job]\nfilename=x.dat\nsize=1m\n{line}\n")
    done = run_all([(volbench, ("run", "job", f"bad{n}.fio"), None) for n in range(len(lines))])
    for number, (proc, said) in enumerate(zip(done, lines.values(), strict=True)):
        line = error_line(proc, 2)
        assert line.startswith(f"volbench: error: bad{number}.fio:4: ") and said in line, line
    assert not (volbench.home / "ran").exists() and not (volbench.home / "x.dat").exists()
    assert not volbench.stored_runs()


def test_a_job_file_on_another_host_through_fios_server(
    volbench: Volbench,
    fio_server: StartServer,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    server = fio_server("127.0.0.2")
    target = tmp_path / "remote.dat"
    (volbench.home / "job.fio").write_text(
        "[global]\nioengine=psync\nsize=8m\nruntime=1\ntime_based\n"
        "[reads]\nrw=randread\n[writes]\nstonewall\nrw=randwrite\n"
    )
    proc = volbench(
        "run",
        "job",
        "job.fio",
        "--hosts",
        server.host,
        "--target",
        str(target),
        "--force",
        "--size",
        "8m",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    assert sorted({r.test for r in run.results if r.place is None}) == ["reads", "writes"]
    assert {r.place for r in run.results if r.place} == {f"{server.host}:{target}"}
    assert target.stat().st_size == 8 << 20  # fio's server wrote it


def test_a_job_file_on_an_ssh_host(
    volbench: Volbench,
    ssh_servers: SshServers,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """``--hosts ssh://...``: the job file's two groups run on the host (fio's server
    reached through ssh), each a test with the host's share, and no ssh or fio process
    of the run is left afterwards."""
    host = ssh_servers.hosts[0]
    target = tmp_path / "ssh.dat"
    (volbench.home / "job.fio").write_text(
        "[global]\nioengine=psync\nsize=8m\nruntime=1\ntime_based\n"
        "[reads]\nrw=randread\n[writes]\nstonewall\nrw=randwrite\n"
    )
    started = volbench.start(
        *("run", "job", "job.fio", "--hosts", host, "--target", f"{host}:{target}"),
        *("--force", "--size", "8m", "--runs-dir", str(volbench.runs_dir)),
        env=ssh_servers.env,
    )
    with watching(started, ssh_servers) as watch:
        proc = finish(started)
    assert proc.returncode == 0, proc.stderr
    _assert_all_gone(watch)
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    assert sorted({r.test for r in run.results if r.place is None}) == ["reads", "writes"]
    assert {r.place for r in run.results if r.place} == {f"{host}:{target}"}
    assert target.stat().st_size == 8 << 20


def test_the_options_a_job_file_decides_are_not_offered(volbench: Volbench) -> None:
    """``--ioengine`` and ``--cache`` are the job file's own (``ioengine=``, ``direct=``):
    ``run job`` neither lists them nor takes them."""
    shown = volbench("run", "job", "--help")
    assert shown.returncode == 0 and "--fill" in shown.stdout, shown.stderr
    assert "--ioengine" not in shown.stdout and "--cache" not in shown.stdout
    (volbench.home / "one.fio").write_text("[job]\nfilename=x.dat\nsize=1m\n")
    for option in (("--ioengine", "psync"), ("--cache", "buffered")):
        refused = volbench("run", "job", "one.fio", *option)
        assert refused.returncode == 2 and f"No such option '{option[0]}'" in refused.stderr
    assert not volbench.stored_runs()
