"""Attacks on the job file, on real loop devices that carry data.

Every option whose value reaches an fio job file is given a payload that, written
as it is, would make fio open a protected device (a newline and ``filename=``, a
comment character, ``${VAR}``, a trailing blank, NUL through input files, ``=``).
Each attempt must be refused with one line and exit 2, and not one byte of the
protected devices may change (sha256 of the whole device before and after).
Before the job builder checked its values, the first payload here destroyed a
vfat filesystem and an MBR (fio ran with ``filename=/dev/loopN`` in every section).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench

from volbench.cli.main import main
from volbench.fio.job_text import opened_file

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]

Loop = Callable[..., str]
FAST = ("--size", "16m", "--runtime", "1s", "--ramp-time", "0")


def _digest(device: str) -> str:
    with open(device, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@pytest.fixture
def protected(loop_device: Loop) -> Iterator[list[str]]:
    """Two loop devices with data volbench must never write: vfat and an MBR."""
    mkfs_vfat = shutil.which("mkfs.vfat") or shutil.which("/usr/sbin/mkfs.vfat")
    if mkfs_vfat is None:
        pytest.skip("mkfs.vfat is not installed (dosfstools)")

    def vfat(image: Path) -> None:
        subprocess.run([mkfs_vfat, str(image)], capture_output=True, check=True)

    def mbr(image: Path) -> None:
        with image.open("r+b") as f:
            f.seek(446)
            f.write(bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little"))
            f.write((8192).to_bytes(4, "little") + bytes(48) + b"\x55\xaa")

    devices = [loop_device(16, setup=vfat), loop_device(16, setup=mbr)]
    before = [_digest(d) for d in devices]
    yield devices
    assert [_digest(d) for d in devices] == before, "a protected device was written"


def _refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


def _payloads(device: str, scratch: Path) -> list[tuple[str, ...]]:
    """Command lines that, unchecked, would write ``device`` through the job file."""
    path = str(scratch)
    quick = ("run", "quick", "--target", path, *FAST)
    return [
        (*quick, "--ioengine", f"psync\nfilename={device}"),
        (*quick, "--ioengine", f"psync filename={device}"),
        (*quick, "--ioengine", f"psync;filename={device}"),
        (*quick, "--ioengine", f"external:{device}"),
        ("run", "quick", "--target", f"{scratch.parent}/a\nfilename={device}/x.img", *FAST),
        ("run", "quick", "--target", f"{device};{path}", *FAST),
        ("run", "quick", "--target", f"{device}#{path}", *FAST),
        ("run", "quick", "--target", f"{device} ", *FAST),
        ("run", "quick", "--target", "${VB_ATTACK}", *FAST),
        ("run", "quick", "--targets", f"{path},{device};x", *FAST),
        (*quick, "--runs-dir", f"/tmp/rd\nfilename={device}\ndescription="),
        (*quick, "--runs-dir", f"/tmp/rd;{device}"),
        (*quick, "--label", f"k=v\nfilename={device}"),
        ("run", "sweep", "--target", f"{device};x", "--iodepth", "1", *FAST),
        (
            "run",
            "sweep",
            "--target",
            path,
            "--iodepth",
            "1",
            "--ioengine",
            f"a\nfilename={device}",
            *FAST,
        ),
        ("run", "iometer", "--target", f"{device}\n", "--workers", "1", *FAST),
        ("run", "scan", "--target", f"{device};x", "--size", "16m"),
        ("run", "filebench", "--target", path, "--runs-dir", f"/x\nfilename={device}"),
        (
            "pts",
            "iops",
            "--target",
            path,
            "--size",
            "16m",
            "--ioengine",
            f"libaio\nfilename={device}",
        ),
        ("pts", "iops", "--target", f"{device}${{VB_ATTACK}}", "--size", "16m"),
        (
            "pts",
            "iops",
            "--target",
            path,
            "--size",
            "16m",
            "--runs-dir",
            f"/rd\nfilename={device}",
        ),
        ("qos", "verify", "plan.json", "--device", f"{device}\n", "--ioengine", "psync"),
        (
            "qos",
            "verify",
            "plan.json",
            "--device",
            device,
            "--ioengine",
            f"psync\nfilename={device}",
        ),
        (
            "qos",
            "verify",
            "plan.json",
            "--device",
            device,
            "--runs-dir",
            f"/rd\nfilename={device}",
        ),
    ]


def _plan(volbench: Volbench, tenant: str = "web") -> Path:
    """A real QoS plan file in the command's folder, its first tenant named ``tenant``."""
    proc = volbench(
        "qos",
        "plan",
        "--capability",
        "iops=1000,bps=100m",
        "--tenant",
        "web:1",
        "--tenant",
        "db:1",
        "--nominal-sizes",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    document["tenants"][0]["name"] = tenant
    path = volbench.home / "plan.json"
    path.write_text(json.dumps(document))
    return path


def _in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> subprocess.CompletedProcess[str]:
    """``volbench ARGS`` run by the real entry point in this process (a fresh Python
    per payload would cost a second each), as a finished command."""
    monkeypatch.setattr(sys, "argv", ["volbench", *args])
    with pytest.raises(SystemExit) as ended:
        main()
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, int(ended.value.code or 0), out.out, out.err)


def test_every_option_reaching_a_job_file_is_refused(
    protected: list[str],
    volbench: Volbench,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scratch = tmp_path / "scratch" / "scratch.img"
    scratch.parent.mkdir()
    _plan(volbench)
    monkeypatch.chdir(volbench.home)
    monkeypatch.setenv("VOLBENCH_DB", str(volbench.db))
    monkeypatch.setenv("VB_ATTACK", protected[0])
    for device in protected:
        for args in _payloads(device, scratch):
            _refused(_in_process(monkeypatch, capsys, args))
            assert not volbench.stored_runs(), (args, "a run was started")
    # and the same through a separate volbench process, as a user types it
    env = {"VB_ATTACK": protected[0]}
    for args in _payloads(protected[1], scratch)[:: len(_payloads(protected[1], scratch)) // 4]:
        _refused(volbench(*args, env=env))
    assert not list(Path("/dev").glob("loop*;*")), "a scratch file was made in /dev"
    assert not list(Path("/dev").glob("loop* ")), "a scratch file was made in /dev"


def test_hostile_input_files_are_refused(
    protected: list[str], volbench: Volbench, tmp_path: Path
) -> None:
    """Values that come from files can hold NUL and newlines that argv cannot."""
    device = protected[0]
    scratch = str(tmp_path / "scratch.img")
    specs = tmp_path / "specs.toml"
    for name in (f"x\\nfilename={device}", f"x\\u0000{device}", "x]\\n[y", f"x={device}"):
        specs.write_text(f'[[spec]]\nname = "{name}"\ntransfer = "4k"\nread_pct = 0\n')
        proc = volbench(
            "run",
            "iometer",
            "--target",
            scratch,
            "--spec-file",
            str(specs),
            "--spec",
            "8k-random-read",
            "--workers",
            "1",
            *FAST,
        )
        _refused(proc)
    for tenant in (f"web\nfilename={device}", "web\n", "web\u0000x", "web;x"):
        proc = volbench("qos", "verify", str(_plan(volbench, tenant)), "--device", device)
        _refused(proc)
    hosts = tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1\nfilename={device}\n127.0.0.2\x00x\n")
    proc = volbench("run", "quick", "--target", "/tmp/x.img", "--hosts-file", str(hosts), *FAST)
    _refused(proc)
    assert not volbench.stored_runs()


def test_safe_odd_paths_still_run_and_fio_opens_exactly_them(
    protected: list[str], volbench: Volbench, tmp_path: Path
) -> None:
    """``=``, ``:``, blanks inside, ``[]`` and non-ASCII are legal path characters:
    the run works and fio's own output names exactly that file."""
    odd = tmp_path / "a=b:c [d] é" / f"filename={Path(protected[0]).name}.img"
    odd.parent.mkdir()
    proc = volbench(
        "run",
        "sweep",
        "--target",
        str(odd),
        "--iodepth",
        "1",
        "--rw",
        "randwrite",
        "--runs-dir",
        str(volbench.runs_dir),
        *FAST,
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    run = volbench.stored()
    assert run["target"]["path"] == str(odd)
    assert odd.stat().st_size == 16 << 20
    fio_output = json.loads(run["fio_outputs"][0])
    assert opened_file(fio_output["global options"]) == str(odd)
