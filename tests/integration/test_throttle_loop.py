"""A real rate limiter: a loop device throttled by a blkio cgroup (v1) to 2,000
IOPS, measured with quick runs at several queue depths inside that cgroup.

The fingerprint must find the cap within 5%, and the check against a matching
catalogue entry (AWS io1 provisioned at 2,000 IOPS, seed 003) must say "meets".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import SHORT_RUN, Volbench

BLKIO = Path("/sys/fs/cgroup/blkio")
Loop = Callable[..., str]
CAP_IOPS = 2000


@pytest.fixture
def throttled(loop_device: Loop) -> Iterator[tuple[str, Path]]:
    """A 64 MiB loop device and a ``volbench-`` cgroup capping it at 2,000 read and
    write IOPS; the cgroup is removed afterwards (its processes have ended)."""
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    device = loop_device(64)
    rdev = os.stat(device).st_rdev
    group = BLKIO / f"volbench-throttle-{os.getpid()}"
    group.mkdir()
    try:
        rule = f"{os.major(rdev)}:{os.minor(rdev)} {CAP_IOPS}"
        (group / "blkio.throttle.read_iops_device").write_text(rule)
        (group / "blkio.throttle.write_iops_device").write_text(rule)
        yield device, group
    finally:
        group.rmdir()


def _quick_in(volbench: Volbench, group: Path, device: str, iodepth: int) -> int:
    """``volbench run quick`` at ``iodepth``, its process moved into ``group`` first."""
    args = [
        *("run", "quick", "--target", device, *SHORT_RUN),
        "--iodepth",
        str(iodepth),
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    ]
    script = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
    proc = subprocess.run(
        ["sh", "-c", script, str(group), sys.executable, "-m", "volbench", *args],
        env=volbench.env,
        cwd=volbench.home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr, proc.stdout[-2000:])
    run_id: int = json.loads(proc.stdout)["id"]
    return run_id


def test_fingerprint_finds_the_cgroup_cap_and_check_meets(
    volbench: Volbench, throttled: tuple[str, Path]
) -> None:
    device, group = throttled
    runs = [str(_quick_in(volbench, group, device, qd)) for qd in (4, 16)]
    document = volbench.document("fingerprint", *runs)
    by_workload = {w["workload"]: w for w in document["workloads"]}
    randread = by_workload["randread 4k"]
    assert randread["depths"] == "1 4 16"
    assert randread["limited"], document
    assert abs(randread["cap_iops"] - CAP_IOPS) <= 0.05 * CAP_IOPS
    check = volbench(
        "check",
        runs[-1],
        "--product",
        "aws-io1",
        "--size",
        "200",
        "--provisioned-iops",
        str(CAP_IOPS),
        "--format",
        "json",
    )
    assert check.returncode == 0, check.stdout + check.stderr
    verdicts = json.loads(check.stdout)["verdicts"]
    assert len(verdicts) == 4
    assert {v["verdict"] for v in verdicts} == {"meets"}, verdicts
