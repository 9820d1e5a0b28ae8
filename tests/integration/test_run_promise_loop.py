"""One command for "did I get what I paid for" (issue 25), on a real rate limiter: a loop
device whose reads and writes a blkio cgroup (v1) caps, measured by ``run quick
--product aws-io1 --product-size 100 --provisioned-iops 5000``.

Capped at 1,000 IOPS (a fifth of the 5,000 promised) the run ends with check's
verdicts, every deep-queue test below, and exits 1; capped at 50,000 (above what the
promise asks) it exits 0. A user's own product, written with nothing but what defines
it, is stored and checked the same way with ``--catalogue``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import MY_ARRAY, Volbench, in_cgroup

BLKIO = Path("/sys/fs/cgroup/blkio")
PROMISED_IOPS = 5000
DEEP_TESTS = {
    "randwrite-4k-iops",
    "randread-4k-iops",
    "randwrite-16k-throughput",
    "randread-16k-throughput",
}
"""quick's tests at QD 64: io1 promises IOPS only (it states no latency for QD 1)."""

Capped = Callable[[int], tuple[str, Path]]


@pytest.fixture
def tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """In RAM (/dev/shm) when it can be: the cap measured must be the cgroup's, not the
    machine's disk's (as in test_throttle_loop)."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path_factory.mktemp("promise")
        return
    folder = Path(tempfile.mkdtemp(prefix="volbench-promise-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def capped(loop_device: Callable[..., str]) -> Iterator[Capped]:
    """``capped(iops)``: a 64 MiB loop device and a ``volbench-`` cgroup capping its
    reads and writes at ``iops`` each; every cgroup made is removed afterwards."""
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        pytest.skip("blkio cgroup v1 throttling is not available")
    made: list[Path] = []

    def make(iops: int) -> tuple[str, Path]:
        device = loop_device(64, in_memory=True)
        rdev = os.stat(device).st_rdev
        group = BLKIO / f"volbench-promise-{os.getpid()}-{len(made)}"
        group.mkdir()
        made.append(group)
        rule = f"{os.major(rdev)}:{os.minor(rdev)} {iops}"
        (group / "blkio.throttle.read_iops_device").write_text(rule)
        (group / "blkio.throttle.write_iops_device").write_text(rule)
        return device, group

    try:
        yield make
    finally:
        for group in made:
            group.rmdir()


def _quick(volbench: Volbench, group: Path, device: str, *promise: str) -> tuple[int, str, str]:
    """``run quick`` of 2 s tests on ``device`` inside ``group``, with the promise's options;
    ``--fill`` first, as the cloud pages ask: reads of blocks never written are not the
    volume's figures, and a check does not judge them."""
    args = [
        *("run", "quick", "--target", device, "--size", "32m", "--fill"),
        *("--runtime", "2s", "--ramp-time", "0", "--runs-dir", str(volbench.runs_dir)),
        *promise,
    ]
    proc = in_cgroup(volbench, group, *args)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


IO1 = ("--product", "aws-io1", "--product-size", "100", "--provisioned-iops", "5000")


def test_capped_below_the_promise_the_run_ends_with_the_verdicts_and_exit_1(
    volbench: Volbench, capped: Capped
) -> None:
    device, group = capped(1000)
    code, out, err = _quick(volbench, group, device, *IO1, "--format", "json")
    assert code == 1, err
    assert "measured figure(s) below the promise" in err.splitlines()[-1]
    report = json.loads(out)
    check = report["check"]
    assert (check["product"], check["size"], check["passed"]) == ("aws-io1", 100, False)
    verdicts = {v["test"]: v for v in check["verdicts"]}
    assert set(verdicts) == DEEP_TESTS
    for verdict in verdicts.values():
        assert verdict["expected"] == PROMISED_IOPS and verdict["verdict"] == "below"
        assert verdict["measured"] <= 1000 * 1.2  # the cgroup's cap (2 s: 3% over), not 5,000
    assert {r["test"] for r in check["limits"]} >= DEEP_TESTS  # the limit verdicts
    assert (
        volbench.stored()["labels"]
        == report["labels"]
        == {
            "product": "aws-io1",
            "size_gib": "100",
            "provisioned_iops": "5000",
        }
    )
    # the labels are the promise: check alone gives the same verdicts
    again = volbench("check", "latest", "--format", "json")
    assert again.returncode == 1
    assert json.loads(again.stdout)["verdicts"] == check["verdicts"]


def test_capped_above_the_promise_exits_0_and_a_users_product_is_checked(
    volbench: Volbench, capped: Capped, tmp_path: Path
) -> None:
    device, group = capped(50_000)
    code, out, err = _quick(volbench, group, device, *IO1)
    assert code == 0, err + out[-3000:]
    table = out.split("vs AWS EBS Provisioned IOPS SSD (io1) at 100 GiB", 1)[1]
    verdicts = table.split("expected:", 1)[0]  # the check's table, before its notes
    rows = [[c.strip() for c in line.split("│")] for line in verdicts.splitlines()]
    column = [cells[7] for cells in rows if len(cells) > 8 and cells[1]]  # a test's first line
    # a busy machine starves fio at 50,000 IOPS: "not judged" (the figure is the CPU's)
    assert len(column) == 4 and set(column) <= {"above", "meets", "not judged"}, verdicts
    assert ": limited by " in table or ": limit not determined" in table  # the limit verdicts
    mine = tmp_path / "my-array.yaml"
    mine.write_text(MY_ARRAY, encoding="utf-8")
    product = ("--catalogue", str(mine), "--product", "my-array", "--product-size", "10")
    code, out, err = _quick(volbench, group, device, *product, "--format", "json")
    assert code == 0, err
    check = json.loads(out)["check"]
    assert (check["product"], check["size_unit"], check["edition"]) == (
        "my-array",
        "GiB",
        "2024-01-01",
    )
    assert {v["expected"] for v in check["verdicts"]} == {1000}  # min(100 x 10, 50000)
    for verdict in check["verdicts"]:  # a busy machine's marked figure is not judged
        judged = verdict["verdict"] in {"meets", "above"}
        by_figure = re.search(r"\((meets|above) by its figure\)", verdict["reason"])
        assert judged or (verdict["verdict"] == "not judged" and by_figure), verdict
    assert volbench.stored()["labels"] == {"product": "my-array", "size_gib": "10"}
    without = volbench("check", "latest")
    assert without.returncode == 2 and "unknown product 'my-array'" in without.stderr
    rechecked = volbench("check", "latest", "--catalogue", str(mine), "--format", "json")
    assert rechecked.returncode == 0, rechecked.stderr
    assert json.loads(rechecked.stdout)["verdicts"] == check["verdicts"]
