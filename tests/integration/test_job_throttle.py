"""``volbench run job`` with the real fio on a loop device a blkio cgroup throttles: a
user's job file of three stonewalled groups (an ``include``, ``${VAR}``, two jobs each),
its figures against fio's own run by hand of the same file on the same device, then
volbench killed (SIGKILL, by its pid) and the run resumed: the groups finished before
are kept, the others run.

The device is a loop device over an image in /dev/shm made by the ``loop_device``
fixture (which detaches it, and only it); the cgroup is this test's own
(``volbench-job-PID``), removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench, cgroup_prefix, finish, fio_json
from test_cli_kill import fio_processes, wait_for

from blkio import throttled_group
from measured import record

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

CAP_IOPS = 400
HELD = 0.5
"""The least share of the cap a run held by it is taken to reach on a busy machine."""
Loop = Callable[..., str]

SETTINGS = """\
; included by job.fio
ioengine=libaio
direct=1
size=${SIZE}
runtime=2
time_based
"""

JOB = """\
; three groups of two jobs, each group after the one before (stonewall)
[global]
include settings.inc
filename=${DEVICE}

[read-qd1]
rw=randread
bs=4k
[read-qd4]
rw=randread
bs=4k
iodepth=4

[write-qd1]
stonewall
rw=randwrite
bs=4k
[write-qd2]
rw=randwrite
bs=4k
iodepth=2

[seq-read]
stonewall
rw=read
bs=64k
iodepth=4
[seq-write]
rw=write
bs=64k
iodepth=4
"""
TESTS = ("read-qd1", "write-qd1", "seq-read")


@pytest.fixture
def throttled(loop_device: Loop) -> Iterator[tuple[str, Path]]:
    """A 64 MiB loop device and this test's cgroup capping its reads and its writes at
    400 IOPS each; the cgroup is removed once its processes have ended."""
    device = loop_device(64, in_memory=True)
    with throttled_group(device, "job", CAP_IOPS) as group:
        yield device, group


def _by_group(document: dict[str, Any]) -> dict[tuple[int, str], float]:
    """IOPS of each reporting group and direction of one fio document: its jobs' sum."""
    sums: dict[tuple[int, str], float] = {}
    for job in document["jobs"]:
        for direction in ("read", "write"):
            if job[direction]["total_ios"]:
                key = (job["groupid"], direction)
                sums[key] = sums.get(key, 0.0) + job[direction]["iops"]
    return sums


def _in_group(
    volbench: Volbench, group: Path, *args: str, env: dict[str, str]
) -> subprocess.Popen[str]:
    """``volbench ARGS`` started in cgroup ``group`` (its pid is volbench's: sh execs it)."""
    return subprocess.Popen(
        [*cgroup_prefix(group), sys.executable, "-m", "volbench", *args],
        env={**volbench.env, **env},
        cwd=volbench.home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_job_file_gives_fios_own_figures_and_resumes_its_unfinished_groups(
    volbench: Volbench, throttled: tuple[str, Path], request: pytest.FixtureRequest
) -> None:
    device, group = throttled
    (volbench.home / "settings.inc").write_text(SETTINGS)
    (volbench.home / "job.fio").write_text(JOB)
    env = {"DEVICE": device, "SIZE": "32m"}
    by_hand = subprocess.run(
        [*cgroup_prefix(group), "fio", "--output-format=json+", "job.fio"],
        cwd=volbench.home,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    fio_own = _by_group(fio_json(by_hand.stdout))
    assert len({g for g, _ in fio_own}) == 3, fio_own
    args = ("run", "job", "job.fio", "--runs-dir", str(volbench.runs_dir))
    proc = _in_group(volbench, group, *args, env=env)
    try:
        assert wait_for(lambda: _stored_tests(volbench) >= 1, 60), proc.stderr
    finally:
        proc.kill()  # SIGKILL of the volbench this test started, by its pid
        finish(proc)
    assert wait_for(lambda: not fio_processes(volbench.runs_dir), 10), "fio outlived volbench"
    killed = volbench.stored()
    assert killed["status"] == "interrupted"
    finished = sorted({r["test"] for r in killed["results"]})
    assert 1 <= len(finished) < 3, finished
    resumed = _in_group(
        volbench, group, "resume", "latest", "--runs-dir", str(volbench.runs_dir), env=env
    )
    done = finish(resumed, 120)
    assert done.returncode == 0, done.stderr
    run = volbench.stored()
    assert run["status"] == "completed" and run["plan"] == "job"
    rounds = {(r["test"], r["round"]) for r in run["results"]}
    assert rounds == {(name, n) for n, name in enumerate(TESTS)}, rounds
    assert [r for r in run["results"] if r["test"] in finished] == [
        r for r in killed["results"]
    ]  # the groups finished before the kill are kept as they were
    outputs = [json.loads(raw) for raw in run["fio_outputs"]]
    for number, name in enumerate(TESTS):
        (own,) = [o for o in outputs if o["jobs"][0]["jobname"] == name]
        assert {j["jobname"] for j in own["jobs"]} == {name}  # both jobs, under the test's name
        mine = {r["direction"]: r["iops"] for r in run["results"] if r["test"] == name}
        from_raw = {d: v for (_, d), v in _by_group(own).items()}
        assert mine == pytest.approx(from_raw, rel=1e-9)  # fio's own figures of the same run
        by_fio = {d: v for (g, d), v in fio_own.items() if g == number}
        record(request, f"{name}: volbench {mine}, fio by hand {by_fio}")
        # two runs of a throttled device, each held by the cap: at most 10 % above it (a
        # job outside the cgroup would run at the loop device's 100,000 IOPS and more), and
        # at least half of it. Below the cap is not the job file's doing: a busy machine
        # held both directions of the 64 KiB group at 316 of 400 (CI, QD 4; at QD 1 a
        # job alone 359), while the groups before it and fio by hand ran at 400-402.
        for figures in (mine, by_fio):
            assert all(HELD * CAP_IOPS <= v <= 1.1 * CAP_IOPS for v in figures.values()), (
                name,
                mine,
                by_fio,
            )
    assert run["settings"]["named"][0]["target"]["path"] == device
    assert run["settings"]["job"]["tests"][0] == {
        "name": "read-qd1",
        "jobs": ["read-qd1", "read-qd4"],
        "round": 0,
    }


def _stored_tests(volbench: Volbench) -> int:
    if not volbench.db.exists():
        return 0
    try:
        return len({r["test"] for r in volbench.stored()["results"]})
    except Exception:
        return 0
