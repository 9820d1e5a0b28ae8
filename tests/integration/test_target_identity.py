"""A target is an identity, not a text: the writes a hostile or unlucky user made
volbench do to protected data, each refused now.

Every protected device is a loop device over an ext4 image file made here; each
test checks that the image's bytes are unchanged (sha256) and that nothing new
appeared in ``/dev``. Devices come from the ``loop_device`` fixture (detached
again); loop devices attached by hand here are detached in ``finally`` blocks, and
only the processes this test started are signalled.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, finish
from test_cli_kill import fio_processes, wait_for
from test_cli_qos_cgroup import _plan, owned

from loops import backing, losetup, reattach
from volbench.errors import VolbenchError
from volbench.fio.job_text import opened_file
from volbench.store.repository import Store

IDENTITY_NAMES = ("qos-id40", "qos-id60", "qos-id80")
"""This module's QoS tenants: names no other module's tests use, so their cgroups are
its alone (test_cli_qos_cgroup.py's, running at once on another worker, had the same)."""
TENANTS = tuple(
    a for n, g in zip(IDENTITY_NAMES, (40, 60, 80), strict=True) for a in ("--tenant", f"{n}:{g}")
)


@pytest.fixture
def own_cgroups() -> Iterator[None]:
    """No cgroup of this module's tenants before the test, none after."""
    with owned(IDENTITY_NAMES):
        yield


pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]

Loop = Callable[..., str]
SHORT = ("--runtime", "1s", "--ramp-time", "0", "--size", "8m")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _image(device: str) -> Path:
    found = backing(device)
    assert found is not None, f"{device} is not attached"
    return found


@pytest.fixture
def ext4(loop_device: Loop, system_tool: Callable[[str], str]) -> Callable[[], str]:
    """Factory: a loop device over a 32 MiB image holding an ext4 filesystem."""
    mkfs = system_tool("mkfs.ext4")
    return lambda: loop_device(
        32, setup=lambda image: subprocess.run([mkfs, "-q", "-F", str(image)], check=True)
    )


@contextlib.contextmanager
def attached(
    image: Path, *options: str, device: str | None = None, replacing: Path | None = None
) -> Iterator[str]:
    """``losetup [options] DEVICE|-f IMAGE`` for the block (``replacing``: ``DEVICE``
    reads that image of this test now, swapped for ``image`` with no other worker's
    attach in between: :func:`loops.reattach`), detached again only if it is still ours."""
    if device is not None and replacing is not None:
        proc = reattach(device, replacing, image, options)
    else:
        where = [device] if device else ["-f", "--show"]
        proc = losetup(["losetup", *options, *where, str(image)])
    if proc.returncode != 0:
        pytest.skip(f"cannot attach {image}: {proc.stderr.strip()}")
    name = device or proc.stdout.strip()
    try:
        yield name
    finally:
        if backing(name) == image:
            subprocess.run(["losetup", "-d", name], capture_output=True, check=False)


def test_relative_targets_from_a_deep_folder_stay_where_they_point(
    volbench: Volbench, ext4: Callable[[], str], tmp_path: Path
) -> None:
    """``--targets ../../../../../dev/loopN,...`` from five folders down, whose top has a
    ``dev/`` folder: the files are made there, fio (run in the run's own folder) opens
    those very files, and the device /dev/loopN is not touched."""
    device = ext4()
    image, before = _image(device), _sha(_image(device))
    top = tmp_path / "top"
    (top / "dev").mkdir(parents=True)
    deep = top / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    name = os.path.basename(device)
    relative = f"../../../../../dev/{name},../../../../../dev/{name}x"
    proc = finish(
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "volbench",
                "run",
                "quick",
                "--targets",
                relative,
                *SHORT,
                "--runs-dir",
                str(volbench.runs_dir),
            ],
            cwd=deep,
            env=volbench.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        300,
    )
    assert proc.returncode == 0, proc.stderr
    assert _sha(image) == before
    assert not Path(f"/dev/{os.path.basename(device)}x").exists()
    made = {top / "dev" / name, top / "dev" / f"{name}x"}
    assert all(p.is_file() and p.stat().st_size == 8 << 20 for p in made)
    for job in volbench.runs_dir.rglob("job*.fio"):  # every job file names them alone
        options = [line.split("=", 1) for line in job.read_text().splitlines()]
        named = [o[1] for o in options if o[0] == "filename" and not o[1].startswith("/proc/")]
        held = [
            opened_file({"filename": "/proc/1/fd/3", o[0]: o[1]})
            for o in options
            if o[0] == "description"
        ]
        assert {*named, *held} <= {str(p) for p in made}, job


def test_a_loop_device_stacked_on_the_target_is_seen(
    volbench: Volbench, loop_device: Loop, system_tool: Callable[[str], str], tmp_path: Path
) -> None:
    """loop A backs loop B (``losetup -o 1M``), B holds a mounted ext4: writing A is
    refused with or without --destroy-data, naming B and where it is mounted."""
    below = loop_device(32)
    image, where = _image(below), tmp_path / "mnt"
    with attached(Path(below), "-o", str(1 << 20)) as above:
        subprocess.run([system_tool("mkfs.ext4"), "-q", "-F", above], check=True)
        where.mkdir()
        # read-only: a mounted ext4 writes its image by itself (ext4lazyinit zeroes the
        # inode tables after mount), and the image is compared byte for byte
        subprocess.run([system_tool("mount"), "-o", "ro", above, str(where)], check=True)
        try:
            before = _sha(image)
            for extra in ((), ("--destroy-data", below)):
                proc = volbench(
                    "run", "sweep", "--target", below, "--rw", "randwrite", *SHORT, *extra
                )
                line = error_line(proc, 2)
                assert f"{above}, stacked on it, is mounted on {where}" in line, line
            assert _sha(image) == before
        finally:
            subprocess.run([system_tool("umount"), str(where)], check=False)
        unmounted = volbench("run", "sweep", "--target", below, "--rw", "randwrite", *SHORT)
        assert f"it is held by {os.path.basename(above)} (a loop device backed by it" in (
            error_line(unmounted, 2)
        )


def _stored_rounds(volbench: Volbench) -> int:
    if not volbench.db.exists():
        return 0
    try:
        with Store.open(str(volbench.db)) as store:
            return len(store.get_run("latest").raw_outputs)
    except VolbenchError:
        return 0


def test_a_link_re_pointed_between_rounds_writes_nothing_new(
    volbench: Volbench, ext4: Callable[[], str], tmp_path: Path
) -> None:
    """A ``--target`` link to a scratch file, re-pointed at an ext4 device once the
    first point is stored: fio goes on with the file it was given (the canonical
    path), the device is untouched."""
    device = ext4()
    image, before = _image(device), _sha(_image(device))
    scratch, link = tmp_path / "scratch.img", tmp_path / "target"
    link.symlink_to(scratch)
    proc = volbench.start(
        "run",
        "sweep",
        "--rw",
        "randwrite",
        "--iodepth",
        "1,2,4,8",
        *SHORT,
        "--target",
        str(link),
        "--runs-dir",
        str(volbench.runs_dir),
    )
    try:
        assert wait_for(lambda: _stored_rounds(volbench) >= 1, 120), "no point was stored"
        link.unlink()
        link.symlink_to(device)
        done = finish(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert done.returncode == 0, done.stderr
    assert _sha(image) == before
    jobs = list(volbench.runs_dir.rglob("job*.fio"))
    held = f"description=volbench target: {scratch}\n"  # fio's filename: volbench's hold
    assert len(jobs) == 4 and all(held in j.read_text() for j in jobs)


def test_a_file_replaced_between_rounds_stops_the_run(volbench: Volbench, tmp_path: Path) -> None:
    """The scratch file is replaced by another file under the same name while the
    second point runs (fio has the first file open): the next round is refused in one
    line naming both, and the new file is not written. (A change in the moment between
    the check and fio's open is not seen before that round: fio opens the path.)"""
    target, other = tmp_path / "t.img", tmp_path / "other.img"
    other.write_bytes(os.urandom(8 << 20))
    before = _sha(other)
    proc = volbench.start(
        "run",
        "sweep",
        "--rw",
        "randwrite",
        "--iodepth",
        "1,2,4,8",
        *SHORT,
        "--target",
        str(target),
        "--runs-dir",
        str(volbench.runs_dir),
        "--force",
    )
    try:
        assert wait_for(lambda: _stored_rounds(volbench) >= 1, 120), "no point was stored"
        assert wait_for(lambda: _fio_started(volbench), 60), "the second point did not start"
        time.sleep(0.4)  # fio has opened its file (its 1 s runtime goes on)
        os.replace(other, target)
        done = finish(proc, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
    line = error_line(done, 2)
    assert f"target {target} is no longer what the run started on: it was file inode" in line
    assert "stored as failed" in line
    assert _sha(target) == before
    assert 2 <= _stored_rounds(volbench) < 4


def _pts_args(volbench: Volbench, device: str) -> tuple[str, ...]:
    return (
        "pts",
        "iops",
        "--target",
        device,
        "--block-sizes",
        "4k",
        "--mixes",
        "100/0,0/100",
        "--cell-seconds",
        "500ms",
        "--runs-dir",
        str(volbench.runs_dir),
    )


PLANS: dict[str, Callable[[Volbench, str, Path], tuple[str, ...]]] = {
    "quick": lambda v, d, _: ("run", "quick", "--target", d, *SHORT, "--runs-dir", str(v.runs_dir)),
    "sweep": lambda v, d, _: (
        "run",
        "sweep",
        "--rw",
        "randwrite",
        "--iodepth",
        "1,2,4",
        "--target",
        d,
        *SHORT,
        "--runs-dir",
        str(v.runs_dir),
    ),
    "pts": lambda v, d, _: _pts_args(v, d),
    "qos-verify": lambda v, d, tmp: (
        "qos",
        "verify",
        str(_plan(v, tmp, "--capability", "iops=1000", *TENANTS, "--volume-size", "246")),
        "--device",
        d,
        "--duration",
        "3s",
        "--runs-dir",
        str(v.runs_dir),
    ),
}


def _fio_started(volbench: Volbench) -> bool:
    return bool(fio_processes(volbench.runs_dir))


def _killed_when(
    volbench: Volbench, proc: subprocess.Popen[str], ready: Callable[[], bool]
) -> None:
    """Once ``ready``: volbench killed (SIGKILL), and the fio it started if that did not
    die with it; returns when no fio of the runs folder is left."""
    try:
        assert wait_for(ready, 120), proc.stderr
        fio = fio_processes(volbench.runs_dir)
        proc.kill()
        for pid in fio:  # the fio this test started, if it did not die with volbench
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        finish(proc, 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert wait_for(lambda: not fio_processes(volbench.runs_dir), 30)


@pytest.mark.usefixtures("own_cgroups")
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_a_device_swapped_before_resume_is_refused(
    volbench: Volbench, loop_device: Loop, ext4: Callable[[], str], tmp_path: Path, plan: str
) -> None:
    """A run on a blank loop device is killed; the loop device is attached to another
    image holding ext4 under the same name; ``resume`` of any plan (QoS verification
    too, whose stored --destroy-data would be reused) is refused before anything is
    written, naming what the device was and is."""
    device = loop_device(32)
    protected = ext4()
    image = _image(protected)
    subprocess.run(["losetup", "-d", protected], check=True)  # the image alone, not attached
    before = _sha(image)
    proc = volbench.start(*PLANS[plan](volbench, device, tmp_path))
    started = lambda: _fio_started(volbench) and bool(volbench.stored_runs())  # noqa: E731
    _killed_when(volbench, proc, started)
    blank = _image(device)
    with attached(image, device=device, replacing=blank):
        resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
        line = error_line(resumed, 2)
        assert f"target {device} is no longer what the run started on: it was block" in line
        assert f"loop over {blank}" in line and f"loop over {image}" in line
    assert _sha(image) == before


def test_a_device_attached_again_resumes_with_same_volume(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    """A sweep on a loop device is killed; the device is detached and attached again
    over the same image (a new diskseq): ``resume`` is refused and names
    ``--same-volume``, which then finishes the run and says so in its note. Another
    image of the same size is not taken as the same volume."""
    device = loop_device(32)
    proc = volbench.start(*PLANS["sweep"](volbench, device, tmp_path))
    _killed_when(volbench, proc, lambda: _stored_rounds(volbench) >= 1)
    image = _image(device)
    other = tmp_path / "other.img"
    other.write_bytes(b"\0" * (32 << 20))
    with attached(other, device=device, replacing=image):
        refused = volbench(
            "resume", "latest", "--same-volume", "--runs-dir", str(volbench.runs_dir)
        )
        assert "it cannot be the same volume" in error_line(refused, 2)
        with attached(image, device=device, replacing=other):
            resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
            line = error_line(resumed, 2)
            assert "no longer what the run started on" in line and "--same-volume" in line
            resumed = volbench(
                "resume",
                "latest",
                "--same-volume",
                "--runs-dir",
                str(volbench.runs_dir),
                "--format",
                "json",
            )
            assert resumed.returncode == 0, resumed.stderr
    run = volbench.stored()
    assert run["status"] == "completed"
    assert "the same volume, as --same-volume said" in (run["error"] or ""), run["error"]
    assert [r["test"] for r in run["results"]] == ["qd1-jobs1", "qd2-jobs1", "qd4-jobs1"]
