"""bench/find_max: the adaptive peak search against the full grid, side by side.

For each target, the same 4 KiB random-read grid (queue depth x jobs) is
measured in full (one fio process, stonewalled points) and by ``--find-max``
(one fio process per point it chooses). Figures of merit: the search's best IOPS
as a fraction of the grid's best (target >= 0.97) and the points it measured as
a fraction of the grid's (target <= 1/3).

Targets: a 256 MiB loop device throttled by a blkio cgroup of ours to LIMIT
read IOPS (a volume with a known cap), and a 256 MiB zram device. Both are
created here and removed at the end. Needs root. Usage: python bench/find_max.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from overhead import zram_device

from volbench.fio.runner import SubprocessRunner
from volbench.model import RW
from volbench.plans import sweep
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store

BLKIO = Path("/sys/fs/cgroup/blkio")
LIMIT = 20_000


@contextmanager
def throttled_loop(workdir: Path, size: int) -> Iterator[Path]:
    """A loop device of ours, and this process in a cgroup capping its reads at LIMIT IOPS."""
    image = workdir / "loop.img"
    with image.open("wb") as handle:
        handle.truncate(size)
    device = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    group = BLKIO / f"volbench-bench-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        devnum = Path(f"/sys/block/{Path(device).name}/dev").read_text().strip()
        (group / "blkio.throttle.read_iops_device").write_text(f"{devnum} {LIMIT}")
        (group / "cgroup.procs").write_text(str(os.getpid()))
        yield Path(device)
    finally:
        (BLKIO / "cgroup.procs").write_text(str(os.getpid()))  # back to the root group
        if group.exists():
            group.rmdir()
        subprocess.run(["losetup", "-d", device], check=False)


def compare(target: Path, workdir: Path, runtime: float) -> tuple[float, float, int, int]:
    """(grid best IOPS, search best IOPS, grid points, search points)."""
    options = sweep.SweepOptions(
        rw=RW.RANDREAD,
        bs_bytes=4096,
        iodepths=(1, 2, 4, 8, 16, 32, 64),
        numjobs=(1, 2, 4, 8),
        runtime_s=runtime,
        ramp_time_s=0.5,
    )
    with Store.open(str(workdir / f"{target.name}.db")) as store:
        session = Session(store, SubprocessRunner(), NullReporter(), workdir / "runs")
        info = prepare_target(str(target), False, NullReporter())
        grid = execute(session, sweep.plan(options), info, {})
        search = execute(session, sweep.find_max_plan(options), info, {})
    return (
        max(t.iops for t in grid.tests),
        max(t.iops for t in search.tests),
        len(grid.tests),
        len(search.tests),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=float, default=2.0)
    args = parser.parse_args()
    size = 256 << 20
    ok = True
    with tempfile.TemporaryDirectory(prefix="volbench-bench-") as tmp:
        workdir = Path(tmp)
        with throttled_loop(workdir, size) as loop:
            results = {
                f"loop device capped at {LIMIT:,} IOPS": compare(loop, workdir, args.runtime)
            }
        with zram_device(size) as zram:
            if zram is not None:
                subprocess.run(
                    [
                        "fio",
                        "--name=fill",
                        f"--filename={zram}",
                        "--rw=write",
                        "--bs=1m",
                        "--direct=1",
                        "--refill_buffers",
                        "--output-format=terse",
                    ],
                    check=True,
                    capture_output=True,
                )
                results["zram"] = compare(zram, workdir, args.runtime)
    for name, (grid_best, found, grid_n, search_n) in results.items():
        share, points = found / grid_best, search_n / grid_n
        ok &= share >= 0.97 and points <= 1 / 3
        print(
            f"{name}: grid best {grid_best:,.0f} IOPS ({grid_n} points), find-max "
            f"{found:,.0f} IOPS ({search_n} points): {share:.3f} of the best with "
            f"{points:.2f} of the points"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
