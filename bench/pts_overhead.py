"""PTS overhead: how much of a PTS run's wall time is fio measuring, beside another suite.

The issue's setup (issue 23): one loop device (an image file in a temporary folder,
``--size-mib``) whose reads and writes a blkio cgroup of this script caps at
``--iops`` IOPS each; every measured command runs in that cgroup (its fio too). The
IOPS test with 4k and 64k at R/W 100/0, 65/35 and 0/100, TC 4 x QD 32, ``--cell-seconds``
cells, 5 rounds, no purge, run by

* ``volbench pts iops`` of this tree (and of ``--tree NAME=SRC``: another tree's
  ``src`` folder, e.g. ``git archive COMMIT src | tar -x -C /tmp/before``), and
* CloudHarmony's block-storage suite (``--other DIR``, a checkout of
  github.com/cloudharmony/block-storage; PHP), ``run.sh --test=iops --nopurge
  --noreport --threads=4 --oio_per_thread=32 --wd_test_duration=S --ss_max_rounds=5``
  with the other block sizes and mixes skipped.

Ratio = fio's own time (each fio job's runtime, the longest of a cell's clones, WIPC
passes included: ``runtime`` of each direction in fio's JSON, volbench's stored raw
outputs or the suite's ``fio-iops.json``) / wall time of the whole command; for
volbench also / the stored run's wall time (run created -> finished). Each tool runs
``--repeat`` times, alternating; the medians are printed last.

Usage (root): ``python bench/pts_overhead.py --other /tmp/block-storage [--tree
before=/tmp/before/src] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pts_live import bytecode_env, pts_round, warm

from volbench.store.repository import Store

BLKIO = Path("/sys/fs/cgroup/blkio")
THIS_SRC = Path(__file__).resolve().parents[1] / "src"
BLOCK_SIZES = ("4k", "64k")
MIXES = ("100/0", "65/35", "0/100")
OTHER_BLOCK_SIZES = ("1m", "128k", "32k", "16k", "8k", "512b")
OTHER_MIXES = ("95/5", "50/50", "35/65", "5/95")


@dataclass(frozen=True)
class Measure:
    """One command: fio's own seconds, the command's wall seconds, the stored run's."""

    tool: str
    fio_s: float
    command_s: float
    run_s: float | None = None

    @property
    def ratio(self) -> float:
        return self.fio_s / self.command_s


def cell_seconds(document: dict[str, object]) -> float:
    """fio's own time of one fio document (s): per job name, the longest runtime of a
    direction of any of its clones (ms in fio's JSON), summed over the job names."""
    cells: dict[str, float] = {}
    jobs = document["jobs"]
    assert isinstance(jobs, list)
    for job in jobs:
        runtime = max(job[d]["runtime"] for d in ("read", "write", "trim") if d in job) / 1000
        cells[job["jobname"]] = max(cells.get(job["jobname"], 0.0), runtime)
    return sum(cells.values())


@contextmanager
def throttled_loop(workdir: Path, size: int, iops: int) -> Iterator[tuple[Path, Path]]:
    """A loop device of ours and a blkio cgroup capping its reads and writes at ``iops``."""
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
        (group / "blkio.throttle.read_iops_device").write_text(f"{devnum} {iops}")
        (group / "blkio.throttle.write_iops_device").write_text(f"{devnum} {iops}")
        yield Path(device), group
    finally:
        for _ in range(50):  # a command cut short may still be leaving the group
            if not group.exists() or not (group / "cgroup.procs").read_text().strip():
                break
            time.sleep(0.1)
        if group.exists():
            group.rmdir()
        subprocess.run(["losetup", "-d", device], check=False)


def timed(command: list[str], group: Path, env: dict[str, str] | None = None) -> float:
    """Run ``command`` in ``group`` (it joins before exec); its wall seconds."""

    def join() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))

    started = time.monotonic()
    proc = subprocess.run(
        command, capture_output=True, text=True, check=False, preexec_fn=join, env=env
    )
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall


def with_bytecode(tmp: Path, src: Path | None) -> dict[str, str]:
    """The environment of a volbench command: modules compiled once into a cache of ours
    (:func:`pts_live.warm`), as an installed volbench has them (this VM sets
    PYTHONDONTWRITEBYTECODE=1, which compiles every module again at each start: about
    3 s); ``src`` (else this tree's) first on the module path."""
    env = bytecode_env("warm", tmp)
    env["PYTHONPATH"] = str(src or THIS_SRC)
    warm(src or THIS_SRC, env)
    return env


def volbench(
    tool: str, src: Path | None, device: Path, group: Path, tmp: Path, cell_s: float
) -> Measure:
    """``volbench pts iops`` (of ``src`` when given) on ``device``."""
    folder = Path(tempfile.mkdtemp(dir=tmp))
    db = folder / "bench.db"
    env = with_bytecode(tmp, src)
    command = [*pts_command(device, cell_s, folder / "runs"), "--db", str(db), "--format", "json"]
    wall = timed(command, group, env)
    with Store.open(str(db)) as store:
        run = store.get_run("latest")
    assert run.ended_at is not None
    run_s = (
        datetime.fromisoformat(run.ended_at) - datetime.fromisoformat(run.started_at)
    ).total_seconds()
    fio_s = 0.0
    for raw in run.raw_outputs:
        fio_s += cell_seconds(json.loads(raw[raw.find("{") : raw.rfind("}") + 1]))
    return Measure(tool, fio_s, wall, run_s)


def pts_command(device: Path, cell_s: float, runs: Path) -> list[str]:
    """The measured ``volbench pts iops``: :data:`BLOCK_SIZES` x :data:`MIXES` at TC 4 x
    QD 32, 5 rounds at most, its fio files in ``runs``."""
    matrix = ("--block-sizes", ",".join(BLOCK_SIZES), "--mixes", ",".join(MIXES))
    test = ("iops", "--threads", "4", "--iodepth", "32", *matrix)
    return pts_round(test, ("--target", str(device)), cell_s, runs, rounds=5)


def other_suite(root: Path, device: Path, group: Path, tmp: Path, cell_s: float) -> Measure:
    """CloudHarmony's block-storage IOPS test on ``device``."""
    out = Path(tempfile.mkdtemp(dir=tmp))
    command = [
        str(root / "run.sh"),
        f"--target={device}",
        "--test=iops",
        "--nopurge",
        "--noreport",
        "--threads=4",
        "--oio_per_thread=32",
        f"--wd_test_duration={cell_s:g}",
        "--ss_max_rounds=5",
        f"--output={out}",
        *(f"--skip_blocksize={b}" for b in OTHER_BLOCK_SIZES),
        *(f"--skip_workload={m}" for m in OTHER_MIXES),
    ]
    wall = timed(command, group)
    document = json.loads((out / "fio-iops.json").read_text())
    return Measure("cloudharmony block-storage", cell_seconds(document), wall)


def show(m: Measure) -> str:
    run = f"{m.run_s:.1f} s / {m.fio_s / m.run_s:.3f}" if m.run_s else "-"
    return f"| {m.tool} | {m.fio_s:.1f} s | {run} | {m.command_s:.1f} s / {m.ratio:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell-seconds", type=float, default=10.0)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--iops", type=int, default=2000, help="cap of reads and of writes")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--other", type=Path, help="checkout of cloudharmony/block-storage")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=SRC",
        help="also run the volbench of another tree's src folder (repeatable)",
    )
    parser.add_argument("--no-current", action="store_true", help="leave this tree's volbench out")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("pts_overhead needs root (loop device, cgroup)", file=sys.stderr)
        return 2
    measures: list[Measure] = []
    with (
        tempfile.TemporaryDirectory(prefix="volbench-bench-") as tmp,
        throttled_loop(Path(tmp), args.size_mib << 20, args.iops) as (device, group),
    ):
        tools: list[Callable[[], Measure]] = []
        if not args.no_current:
            tools.append(
                lambda: volbench("volbench", None, device, group, Path(tmp), args.cell_seconds)
            )
        for tree in args.tree:
            name, _, src = tree.partition("=")
            tools.append(
                functools.partial(
                    volbench,
                    f"volbench {name}",
                    Path(src),
                    device,
                    group,
                    Path(tmp),
                    args.cell_seconds,
                )
            )
        if args.other:
            tools.append(
                lambda: other_suite(args.other, device, group, Path(tmp), args.cell_seconds)
            )
        print(f"load average at start: {os.getloadavg()}", flush=True)
        print("| tool | fio time | run wall / ratio | command wall / ratio |")
        print("|---|---:|---:|---:|", flush=True)
        for _ in range(args.repeat):
            for tool in tools:
                measures.append(tool())
                print(show(measures[-1]), flush=True)
        print(f"load average at end: {os.getloadavg()}")
    for name in dict.fromkeys(m.tool for m in measures):
        ratios = [m.ratio for m in measures if m.tool == name]
        print(f"median command ratio, {name}: {statistics.median(ratios):.3f} ({len(ratios)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
