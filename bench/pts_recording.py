"""Record the fio outputs of a PTS run, for ``volbench pts --replay DIR``.

Runs a PTS run through the plan API (``driver.begin``: probe, purge, WIPC,
rounds, each committed) on a loop device this script creates over a file in
/dev/shm (RAM; root; detached and removed at the end: zram's 4 KiB sectors
refuse PTS's 0.5 KiB direct I/O), with a runner that starts the real fio and keeps each final JSON
document as ``DIR/NNNN-FIRSTJOB.json``. With ``--once`` a job file whose job
sections ran before gets that first output again instead of a new fio process:
one real round per distinct round (every later round identical, so steady
state comes at round 5), for recordings a benchmark then varies.

The replay runner picks outputs by job name (``fio/runner.py``), so replaying
DIR with the same PTS options and a target of the same size stores the same run.

Usage (the fixture of tests/unit/test_pts_report.py)::

    python bench/pts_recording.py /tmp/pts-rec --archive tests/fixtures/fio/pts/recording.tar.xz \\
        --tests all --cell-seconds 1 --max-rounds 5 --block-sizes 4k,64k --mixes 100/0,0/100 \\
        --threads 1 --iodepth 4 --hir-cycles 2 --xsr-cells 3 --toio-grid 2,1 --wsat-max-rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from volbench.fio.runner import RawRun, StatusCallback, SubprocessRunner, job_sections
from volbench.plans.placement.preparation import PurgeSettings, prepare_target
from volbench.plans.pts import driver
from volbench.plans.pts.options import (
    build,
    parse_block_sizes,
    parse_grid,
    parse_mixes,
    parse_tests,
)
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store

MiB = 1 << 20


@contextlib.contextmanager
def ram_loop_device(size_bytes: int) -> Iterator[Path]:
    """A loop device (512-byte sectors) over a new file in /dev/shm, removed after."""
    with tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="volbench-rec-") as image:
        image.truncate(size_bytes)
        device = subprocess.run(
            ["losetup", "-f", "--show", image.name], capture_output=True, text=True, check=True
        ).stdout.strip()
        try:
            yield Path(device)
        finally:
            subprocess.run(["losetup", "-d", device], check=False)


class RecordingRunner:
    """The real fio, each final JSON document kept in ``directory``."""

    def __init__(self, directory: Path, once: bool = False) -> None:
        self.directory = directory
        self.once = once
        self.real = SubprocessRunner()
        self.seen: dict[tuple[str, ...], RawRun] = {}
        self.count = 0

    def version(self) -> str:
        return self.real.version()

    def engine(self, target: Path) -> str:
        return self.real.engine(target)

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> RawRun:
        sections = job_sections(job_text)
        if self.once and sections in self.seen:
            return self.seen[sections]
        raw = self.real.run(job_text, workdir, on_status, should_stop)
        if raw.output:
            name = f"{self.count:04d}-{sections[0] if sections else 'job'}.json"
            (self.directory / name).write_text(raw.output)
            self.count += 1
        self.seen[sections] = raw
        return raw


def record(directory: Path, size_bytes: int, overrides: dict[str, Any], once: bool = False) -> int:
    """Record a PTS run with ``overrides`` (``options.build`` arguments) on a RAM
    loop device of ``size_bytes``; return how many outputs were kept."""
    directory.mkdir(parents=True, exist_ok=True)
    runner = RecordingRunner(directory, once)
    with (
        tempfile.TemporaryDirectory(prefix="volbench-rec-") as tmp,
        ram_loop_device(size_bytes) as device,
        Store.open(str(Path(tmp) / "rec.db")) as store,
    ):
        reporter = NullReporter()
        info = prepare_target(str(device), True, reporter, None, str(device), False)
        session = Session(store, runner, reporter, Path(tmp) / "runs")
        options = build(**overrides)
        driver.begin(session, options, info, {}, None, PurgeSettings(data_allowed=True))
    return runner.count


def pts_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``options.build`` arguments from this script's PTS options."""
    extra: dict[str, Any] = {
        "cell_seconds": args.cell_seconds,
        "max_rounds": args.max_rounds,
        "wsat_max_rounds": args.wsat_max_rounds,
        "hir_cycles": args.hir_cycles,
        "xsr_cells": args.xsr_cells,
    }
    if args.block_sizes:
        extra["block_sizes"] = parse_block_sizes(args.block_sizes)
    if args.mixes:
        extra["mixes"] = parse_mixes(args.mixes)
    if args.toio_grid:
        extra["toio_grid"] = parse_grid(args.toio_grid)
    return {
        "tests": parse_tests([args.tests]),
        "profile": "enterprise",
        "threads": args.threads,
        "iodepth": args.iodepth,
        **extra,
    }


def add_pts_arguments(parser: argparse.ArgumentParser) -> None:
    """The PTS options a recording is made with (as ``volbench pts`` spells them)."""
    parser.add_argument("--tests", default="all")
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--cell-seconds", type=float, default=1.0)
    parser.add_argument("--max-rounds", type=int, default=5)
    parser.add_argument("--wsat-max-rounds", type=int, default=1440)
    parser.add_argument("--block-sizes", default=None)
    parser.add_argument("--mixes", default=None)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--iodepth", type=int, default=None)
    parser.add_argument("--hir-cycles", type=int, default=360)
    parser.add_argument("--xsr-cells", type=int, default=60)
    parser.add_argument("--toio-grid", default=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--once", action="store_true", help="One fio run per distinct round.")
    parser.add_argument("--archive", type=Path, default=None, help="Also pack DIR as .tar.xz.")
    add_pts_arguments(parser)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("pts_recording needs root (loop device)", file=sys.stderr)
        return 2
    count = record(args.directory, args.size_mib * MiB, pts_overrides(args), args.once)
    print(f"{count} fio outputs in {args.directory}")
    if args.archive:
        args.archive.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(args.archive, "w:xz", preset=9) as tar:
            for path in sorted(args.directory.glob("*.json")):
                tar.add(path, arcname=path.name)
        print(f"{args.archive}: {args.archive.stat().st_size / 1024:,.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
