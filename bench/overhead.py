"""bench/overhead: does measuring through volbench cost IOPS?

The same 4 KiB random-read job runs alternately as bare fio (plain
``fio --output-format=json JOB``) and through volbench's full path (job builder,
``--status-interval`` live display, per-second logs, parser, store). Both IOPS
figures are fio's own. The figure of merit is the median over pairs of
volbench IOPS / bare fio IOPS (target >= 0.98).

Target: a zram device this script creates (root; hot_add, removed at the end),
else a 256 MiB scratch file. Usage: python bench/overhead.py [--pairs N] [--runtime S]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from volbench.fio.executable import best_engine, fio_path
from volbench.fio.job import JobFile, render
from volbench.fio.runner import SubprocessRunner
from volbench.model import RW, Workload
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import PlanSpec, Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store

ZRAM_CONTROL = Path("/sys/class/zram-control")


@contextmanager
def zram_device(size_bytes: int) -> Iterator[Path | None]:
    """A zram block device created for this run (None when that is not possible)."""
    if not (ZRAM_CONTROL / "hot_add").exists():
        yield None
        return
    try:
        index = int((ZRAM_CONTROL / "hot_add").read_text().strip())
    except OSError:
        yield None
        return
    sysfs = Path(f"/sys/block/zram{index}")
    try:
        (sysfs / "disksize").write_text(str(size_bytes))
        yield Path(f"/dev/zram{index}")
    finally:
        (sysfs / "reset").write_text("1")
        (ZRAM_CONTROL / "hot_remove").write_text(str(index))


def bare_fio(job_text: str, workdir: Path) -> float:
    job = workdir / "bare.fio"
    job.write_text(job_text)
    done = subprocess.run(
        [fio_path(), "--output-format=json", str(job)], capture_output=True, text=True, check=True
    )
    data = json.loads(done.stdout[done.stdout.find("{") : done.stdout.rfind("}") + 1])
    return float(sum(j["read"]["iops"] for j in data["jobs"]))


def through_volbench(session: Session, plan: PlanSpec, target_path: str) -> float:
    info = prepare_target(target_path, False, session.reporter)
    outcome = execute(session, plan, info, {"bench": "overhead"})
    return sum(t.iops for t in outcome.tests)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=float, default=10.0)
    parser.add_argument("--iodepth", type=int, default=16)
    parser.add_argument(
        "--cpus-allowed", default=None, help="pin fio's job to these CPUs (fio cpus_allowed)"
    )
    args = parser.parse_args()
    size = 256 << 20
    with tempfile.TemporaryDirectory(prefix="volbench-bench-") as tmp, zram_device(size) as zram:
        workdir = Path(tmp)
        if zram is not None:
            target = str(zram)
            # fill the device so reads touch real pages, not zram's empty-page shortcut
            subprocess.run(
                [
                    fio_path(),
                    "--name=fill",
                    f"--filename={target}",
                    "--rw=write",
                    "--bs=1m",
                    "--direct=1",
                    "--refill_buffers",
                    "--output-format=terse",
                ],
                check=True,
                capture_output=True,
            )
        else:
            target = str(workdir / "scratch.img")
            prepare_target(target, True, NullReporter(), size_bytes=size)
        engine = best_engine(Path(target))
        workload = Workload(
            "randread-4k",
            RW.RANDREAD,
            bs_bytes=4096,
            iodepth=args.iodepth,
            runtime_s=args.runtime,
            ramp_time_s=1.0,
            ioengine=engine,
        )
        bare_job = render(JobFile(target, (workload,), engine))
        plan = PlanSpec("bench-overhead", ((workload,),))
        ratios: list[float] = []
        bare_all: list[float] = []
        ours_all: list[float] = []
        with Store.open(str(workdir / "bench.db")) as store:
            session = Session(store, SubprocessRunner(), NullReporter(), workdir / "runs")
            for pair in range(args.pairs):
                bare = bare_fio(bare_job, workdir)
                ours = through_volbench(session, plan, target)
                ratios.append(ours / bare)
                bare_all.append(bare)
                ours_all.append(ours)
                print(
                    f"pair {pair + 1}: fio {bare:,.0f} IOPS, volbench {ours:,.0f} IOPS, "
                    f"ratio {ours / bare:.3f}",
                    flush=True,
                )
        kind = "zram" if zram is not None else "file"
        median = statistics.median(ratios)
        print(
            f"target {kind} ({target}), ioengine {engine}, QD {args.iodepth}, "
            f"{args.runtime:g} s per run, {args.pairs} pairs"
        )
        print(f"median volbench/fio IOPS ratio: {median:.3f} (target >= 0.98)")
        return 0 if median >= 0.98 else 1


if __name__ == "__main__":
    sys.exit(main())
