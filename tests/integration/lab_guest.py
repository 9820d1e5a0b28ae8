"""The lab guest the lab's test modules share the making of: a module's own lab folder
(its guests' disks in RAM), one TCG guest booted for the module, and what that guest
does with no limit here and now (:class:`Capacity`), which each test sets its limits a
share of (tests/integration/test_lab.py says why). Each test module that uses them gets
a guest of its own, so pytest-xdist (``--dist loadfile``) runs them side by side."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_harness import Volbench

from measured import record
from volbench.cli.options import parse_duration
from volbench.lab import guest as guests

NAME = "itest"
PRODUCT = """\
products:
  - id: lab-flat
    vendor: Our lab
    name: a {iops} IOPS volume
    size_unit: GiB
    capacity: {{min: 1, max: 1000}}
    editions:
      - from: 2024-01-01
        iops: {{expr: "{iops}"}}
"""
DEEP_SHARE = 0.4
"""A limit for tests at QD 16 or more: at most this share of the guest's own rate there
(the slowest deep workload), so the guest keeps 2.5 times the limit's rate should the
machine get busier after the measurement."""
LIMITS_SHARE = 0.3
"""The limits experiments' rates: at most this share of the guest's own rate at QD 16,
so its deepest tests (QD 256) hold them while other lab tests' guests share the cores."""
QD1_SHARE = 0.5
"""A limit that must pace QD 1 too (one budget from QD 1 on): at most this share of the
guest's own QD 1 rate, so each I/O's round trip through the guest takes at most half of
the limiter's interval."""


def _live_qemus(lab: Path) -> list[int]:
    """Pids of running (not zombie) qemu processes of guests under ``lab``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            arguments = guests.command_line(int(entry.name))
            if (
                arguments
                and Path(arguments[0]).name.startswith("qemu-system-")
                and any(str(lab) in a for a in arguments)
                and guests.exists(int(entry.name))
            ):
                found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[Volbench, Path]]:
    """A Volbench whose lab folder is the module's own; every guest downed after. The
    downloaded kernel and the built initramfs are kept in pytest's cache folder
    (.pytest_cache) for later sessions: 160 MiB and 6 s a session otherwise.

    The lab folder is made as a user would have it, 0755 in a folder every user may
    enter (pytest's own temporary folder is 0700): volbench must close it itself."""
    home = tmp_path_factory.mktemp("lab")
    cache = request.config.cache.mkdir("volbench-lab") if request.config.cache else None
    shm = Path("/dev/shm")  # guests' disk images in RAM: no writeback of the host's disk
    in_ram = shm if shm.is_dir() else None  # between a guest's writes and its limiter
    open_parent = Path(tempfile.mkdtemp(prefix="volbench-lab-", dir=in_ram))
    open_parent.chmod(0o755)
    lab_folder = open_parent / "lab"
    lab_folder.mkdir(mode=0o755)
    for part in ("kernels", "images") if cache is not None else ():
        (cache / part).mkdir(exist_ok=True)
        (lab_folder / part).symlink_to(cache / part)
    tool = Volbench(home / "volbench")
    tool.env["VOLBENCH_LAB_DIR"] = str(lab_folder)
    saved = os.environ.get("VOLBENCH_LAB_DIR")
    os.environ["VOLBENCH_LAB_DIR"] = str(lab_folder)
    try:
        yield tool, lab_folder
    finally:
        tool("lab", "down", "--all")
        for pid in _live_qemus(lab_folder):  # only if lab down failed
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(open_parent, ignore_errors=True)
        if saved is None:
            os.environ.pop("VOLBENCH_LAB_DIR")
        else:
            os.environ["VOLBENCH_LAB_DIR"] = saved


@pytest.fixture(scope="module")
def guest(lab: tuple[Volbench, Path]) -> guests.Guest:
    tool, _ = lab
    up = tool("lab", "up", NAME, "--iops-total", "1000", "--size", "256m", "--accel", "tcg")
    assert up.returncode == 0, up.stderr
    assert f"lab://{NAME} up:" in up.stdout
    assert "iops-total 1,000" in up.stdout
    assert "booting itest under tcg" in up.stderr
    return guests.load(NAME)


def fio_iops(
    guest: guests.Guest, folder: Path, jobs: dict[str, str], seconds: int
) -> dict[str, float]:
    """fio's own IOPS (reads + writes) of each of ``jobs`` (name: its options, one a
    line) on the guest's disk, one after the other, through fio's client."""
    job = folder / "measure.fio"
    job.write_text(
        "[global]\nfilename=/dev/vda\nioengine=libaio\ndirect=1\nsize=64m\ntime_based=1\n"
        f"runtime={seconds}\nstonewall\n"
        + "".join(f"[{name}]\n{options}\n" for name, options in jobs.items())
    )
    done = subprocess.run(
        ["fio", f"--client={guest.address},{guest.fio_port}", str(job), "--output-format=json"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60 + 10 * len(jobs),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout[done.stdout.index("{") :])
    found = {j["jobname"]: j for j in document["client_stats"]}
    return {name: found[name]["read"]["iops"] + found[name]["write"]["iops"] for name in jobs}


@dataclass(frozen=True)
class Capacity:
    """What the guest does with no limit, here and now (fio's own IOPS, 1 s each):
    ``deep`` the slower of 4 KiB random reads and 16 KiB random writes at QD 16 (the
    quick plan's cheapest and dearest deep tests), ``qd1`` the slower of 4 KiB random
    reads and writes at QD 1, ``mbps`` the slower of 256 KiB random reads and writes at
    QD 16 in MB/s (a TCG guest copies each byte through its one emulated CPU)."""

    deep: float
    qd1: float
    mbps: float = 0.0

    def text(self) -> str:
        return (
            f"the guest alone: {self.deep:,.0f} IOPS deep, {self.qd1:,.0f} at QD 1,"
            f" {self.mbps:,.0f} MB/s"
        )


@pytest.fixture(scope="module")
def capacity(
    lab: tuple[Volbench, Path], guest: guests.Guest, tmp_path_factory: pytest.TempPathFactory
) -> Capacity:
    """The guest measured with its limits lifted (``lab limit NAME``, no figures)."""
    tool, _ = lab
    lifted = tool("lab", "limit", NAME)
    assert lifted.returncode == 0, lifted.stderr
    assert "unlimited" in lifted.stdout, lifted.stdout
    options = {
        "r4k-qd16": "rw=randread\nbs=4k\niodepth=16",
        "w16k-qd16": "rw=randwrite\nbs=16k\niodepth=16",
        "r4k-qd1": "rw=randread\nbs=4k\niodepth=1",
        "w4k-qd1": "rw=randwrite\nbs=4k\niodepth=1",
        "r256k-qd16": "rw=randread\nbs=256k\niodepth=16",
        "w256k-qd16": "rw=randwrite\nbs=256k\niodepth=16",
    }
    iops = fio_iops(guest, tmp_path_factory.mktemp("capacity"), options, 1)
    return Capacity(
        deep=min(iops["r4k-qd16"], iops["w16k-qd16"]),
        qd1=min(iops["r4k-qd1"], iops["w4k-qd1"]),
        mbps=min(iops["r256k-qd16"], iops["w256k-qd16"]) * 256 * 1024 / 1e6,
    )


def limits(request: pytest.FixtureRequest, capacity: Capacity, chosen: str) -> None:
    """The guest's measured figures and the limits the test chose, in the summary."""
    record(request, f"{capacity.text()}; limits chosen: {chosen}")


def run_limits(tool: Volbench, budget: str = "120s") -> int:
    """``run limits`` on the guest (1 s tests); its run's id. The budget bounds fio's
    time, not the gaps between rounds and the drains' rounds: a bursting draw takes up
    to 150 s of a 120 s budget (BENCHMARKS.md, bench/limits)."""
    run = tool(
        "run",
        "limits",
        "--hosts",
        f"lab://{NAME}",
        "--budget",
        budget,
        "--runtime",
        "1s",
        "--ramp-time",
        "1s",
        "--runs-dir",
        str(tool.runs_dir),
        timeout=3 * parse_duration(budget),
    )
    assert run.returncode == 0, run.stderr
    return int(tool.show()["run"])


def set_limits(tool: Volbench, *options: str) -> None:
    lifted = tool("lab", "limit", NAME)  # a bucket set anew starts full
    changed = tool("lab", "limit", NAME, *options)
    assert lifted.returncode == 0 and changed.returncode == 0, changed.stderr
