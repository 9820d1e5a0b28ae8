"""Capture, characterise and replay a known workload on loop devices (issue 16).

A known fio mix (70% random 4 KiB reads, 30% sequential 64 KiB writes at QD 8) runs on
one loop device while ``volbench capture`` traces it; the characterisation must
reproduce the mix; the exact replay on a second loop device must issue the same
requests (fio's counts, and a capture of the replay with the same size and direction
mix); the synthetic job's run, captured too, must match the mix within 3 points.
Every device is a loop device over an image under tmp_path (``loop_device``
detaches them); the captures use trace instances of their own, which the capture
removes (checked: no ``volbench-`` instance is left).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench, finish

from volbench.plans.capture import CaptureSetup, find_capture
from volbench.store.repository import Store
from volbench.targets.blockdev import read_mounts
from volbench.trace.tracefs import EVENTS, INSTANCE_PREFIX, mounted_tracefs

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]

MIX = (
    "--rw=randrw",
    "--rwmixread=70",
    "--bssplit=4k/100,64k/100",
    "--percentage_random=100,0",
    "--iodepth=8",
    "--direct=1",
    "--ioengine=libaio",
)


def _fio(device: str, seconds: float, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            "fio",
            "--name=known",
            f"--filename={device}",
            *MIX,
            f"--runtime={seconds}",
            "--time_based",
            "--output-format=json",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _profile(volbench: Volbench, name: str) -> dict[str, Any]:
    """The stored characterisation of capture ``name`` (what ``volbench workload`` shows)."""
    with Store.open(str(volbench.db), create=False) as store:
        return dict(find_capture(store, name).setup(CaptureSetup).profile)


def _shares(profile: dict[str, Any]) -> dict[tuple[str, str, int], float]:
    return {
        (r["access"], r["op"], r["size_bytes"]): r["share_pct"] for r in profile["pattern_shares"]
    }


def _sizes(profile: dict[str, Any]) -> dict[tuple[str, int], int]:
    return {(s["op"], s["size_bytes"]): s["count"] for s in profile["sizes"]}


def _capture_while(
    volbench: Volbench, device: str, name: str, load: list[str]
) -> subprocess.CompletedProcess[str]:
    """Capture ``device`` while ``volbench *load`` runs: started once the trace is on,
    the capture ended with Ctrl-C once it is done (a fixed window missed a replay that
    a busy machine started late)."""
    capture = _capture(volbench, device, name, 120)
    loaded = volbench(*load, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    _stop(capture)
    return loaded


def _stop(capture: subprocess.Popen[str]) -> None:
    """End a capture with Ctrl-C (it keeps what it traced) and check it stored it."""
    capture.send_signal(signal.SIGINT)  # the capture this test started
    done = finish(capture, 60)
    assert done.returncode == 130 and "stored workload" in done.stderr, done.stderr


def _no_instances_left() -> None:
    root = mounted_tracefs()
    if root is not None:
        assert not [p for p in (root / "instances").iterdir() if p.name.startswith(INSTANCE_PREFIX)]


def _capture(volbench: Volbench, device: str, name: str, seconds: float) -> subprocess.Popen[str]:
    """``capture`` of ``device`` started, returned once its trace is on: every block
    event of its tracefs instance enabled (a fixed wait of 1.5 s started the load before
    that on a busy machine, and the capture missed the first requests)."""
    capture = volbench.start(
        "capture",
        "--device",
        device,
        "--duration",
        f"{seconds}s",
        "-o",
        name,
        "--runs-dir",
        str(volbench.runs_dir),
    )
    deadline = time.monotonic() + 30
    while not _tracing() and time.monotonic() < deadline:
        assert capture.poll() is None, capture.stderr
        time.sleep(0.05)
    return capture


def _tracing() -> bool:
    """A capture's instance in a tracefs mounted here (the system's, or the one a
    capture mounts for itself) has every block event it traces enabled."""
    roots = [Path(m.mountpoint) for m in read_mounts() if m.fstype == "tracefs"]
    instances = [
        i for root in roots if (root / "instances").is_dir() for i in (root / "instances").iterdir()
    ]
    for instance in instances:
        if instance.name.startswith(INSTANCE_PREFIX):
            enabled = [instance / "events" / "block" / event / "enable" for event in EVENTS]
            with contextlib.suppress(OSError):
                if all(path.read_text().strip() == "1" for path in enabled):
                    return True
    return False


def test_capture_characterise_replay(loop_device: Any, volbench: Volbench) -> None:
    source, other = loop_device(64), loop_device(64)
    capture = _capture(volbench, source, "known", 120)
    fio = _fio(source, 1.5)
    out, err = fio.communicate(timeout=60)
    assert fio.returncode == 0, err
    _stop(capture)
    _no_instances_left()
    job = json.loads(out)["jobs"][0]
    shown = volbench("workload", "known", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    profile = json.loads(shown.stdout)["profile"]

    # the characterisation reproduces the known mix
    assert profile["counts"]["read"] == job["read"]["total_ios"]
    assert profile["counts"]["write"] == job["write"]["total_ios"]
    assert set(_sizes(profile)) == {("read", 4096), ("write", 65536)}  # block sizes exact
    assert profile["read_pct"] == pytest.approx(70, abs=3)
    shares = _shares(profile)
    assert shares[("RND", "read", 4096)] == pytest.approx(70, abs=3)
    assert shares[("SEQ", "write", 65536)] == pytest.approx(30, abs=3)
    assert profile["sequential_by_op"]["read"] <= 3
    assert profile["sequential_by_op"]["write"] >= 97
    assert profile["qd_percentile"] == pytest.approx(8, rel=0.2)
    assert profile["synthetic"]["iodepth"] == pytest.approx(8, rel=0.2)

    # the exact replay on the other device: the same requests (fio's counts, and what
    # a capture of the replay saw: the block layer of this test device merges nothing)
    Path(f"/sys/block/{Path(other).name}/queue/nomerges").write_text("2")
    replay = _capture_while(
        volbench,
        other,
        "replayed",
        [
            "run",
            "replay",
            "--workload",
            "known",
            "--target",
            other,
            "--as-fast-as-possible",
            "--runs-dir",
            str(volbench.runs_dir),
            "--format",
            "json",
        ],
    )
    output = json.loads(json.loads(replay.stdout)["fio_outputs"][0])["jobs"][0]
    assert output["read"]["total_ios"] == profile["counts"]["read"]
    assert output["write"]["total_ios"] == profile["counts"]["write"]
    # writes exactly; reads too, give or take udev's probe of the device after a writer
    # closed it (a few reads of its own sizes: not the replay's)
    replayed, known = _sizes(_profile(volbench, "replayed")), _sizes(profile)
    assert replayed[("write", 65536)] == known[("write", 65536)]
    assert known[("read", 4096)] <= replayed[("read", 4096)] <= known[("read", 4096)] * 1.01 + 64
    others = sum(n for key, n in replayed.items() if key not in known)
    assert others <= 0.01 * sum(known.values())

    # the synthetic job's run, captured, matches the captured mix within 3 points
    _capture_while(
        volbench,
        other,
        "synthetic",
        [
            "run",
            "replay",
            "--workload",
            "known",
            "--target",
            other,
            "--synthetic",
            "--duration",
            "1500ms",
            "--runs-dir",
            str(volbench.runs_dir),
        ],
    )
    synthetic = _shares(_profile(volbench, "synthetic"))
    for pattern, share in shares.items():
        if share >= 1:
            assert synthetic.get(pattern, 0.0) == pytest.approx(share, abs=3), pattern
    _no_instances_left()


def test_replay_with_writes_refuses_a_protected_device(
    loop_device: Any, volbench: Volbench, system_tool: Any
) -> None:
    source = loop_device(32)
    capture = _capture(volbench, source, "writes", 120)
    _fio(source, 0.5).communicate(timeout=60)
    _stop(capture)
    mkfs = system_tool("mkfs.ext4")
    protected = loop_device(
        32, setup=lambda image: subprocess.run([mkfs, "-q", "-F", str(image)], check=True)
    )
    done = volbench(
        "run",
        "replay",
        "--workload",
        "writes",
        "--target",
        protected,
        "--runs-dir",
        str(volbench.runs_dir),
    )
    assert done.returncode == 2
    assert f"refusing to write {protected}: it holds an ext4 filesystem" in done.stderr


def test_capture_of_a_read_only_partition_ends_on_ctrl_c(
    volbench: Volbench, tmp_path: Path, system_tool: Any
) -> None:
    """A partition of a read-only loop device (``losetup -r``: it cannot be opened for
    writing): the capture traces it all the same (it never opens it; a partition's
    requests show on its disk, from its first sector), and Ctrl-C keeps what it traced."""
    image = tmp_path / "ro.img"
    with image.open("wb") as handle:
        handle.truncate(64 << 20)
    subprocess.run(
        [system_tool("sfdisk"), "-q", str(image)],
        input="label: gpt\n,16M\n,16M\n",
        text=True,
        check=True,
    )
    losetup, partx = system_tool("losetup"), system_tool("partx")
    disk = subprocess.run(
        [losetup, "-f", "--show", "-r", "-P", str(image)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        part = f"{disk}p2"
        if not Path(part).exists():  # kernels without a partition parser for loop devices
            subprocess.run([partx, "-a", disk], check=True)
        assert Path(f"/sys/class/block/{Path(part).name}/ro").read_text().strip() == "1"
        capture = _capture(volbench, part, "ro", 60)
        reader = subprocess.run(
            [
                "fio",
                "--name=r",
                f"--filename={part}",
                "--rw=randread",
                "--bs=4k",
                "--direct=1",
                "--readonly",
                "--runtime=1",
                "--time_based",
                "--output-format=json",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        reads = json.loads(reader.stdout)["jobs"][0]["read"]["total_ios"]
        capture.send_signal(signal.SIGINT)
        done = finish(capture, 60)
        assert done.returncode == 130, done.stderr
        assert "stored workload ro as run" in done.stderr
        profile = _profile(volbench, "ro")
        assert profile["counts"]["read"] == reads
        assert profile["counts"]["write"] == 0
        assert profile["lowest_offset"] >= 0
        assert profile["lowest_offset"] + profile["span_bytes"] <= 16 << 20  # the partition's
        runs = json.loads(volbench("runs", "--plan", "capture", "--format", "json").stdout)
        assert runs["runs"][0]["status"] == "interrupted"
    finally:
        subprocess.run([partx, "-d", disk], capture_output=True, check=False)
        subprocess.run([losetup, "-d", disk], check=False)
    _no_instances_left()
