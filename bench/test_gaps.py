"""bench/test_gaps: what one fio process per test costs against stonewalled jobs.

volbench runs each test of a plan in a fio process of its own, so a test fio
finished is committed before the next starts (a killed fio or volbench loses
only the running test). The price is a fio start per test. This bench measures
it side by side, alternating in one run on the same target:

- *stonewalled*: the plan's tests as sections of one fio process (the old way);
- *per test*: the same tests, one fio process each (volbench's way).

The idle time between tests is the wall time of a run minus fio's own job
runtimes (``job_runtime`` plus ``ramp_time``), divided by the number of tests.
Both are measured through volbench's :class:`SubprocessRunner` (status
documents, per-second logs), so only the process split differs.

Target: a zram device this script creates (root), else a scratch file.
Usage: python bench/test_gaps.py [--pairs N] [--tests N] [--runtime S]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from overhead import zram_device

from volbench.fio.executable import best_engine
from volbench.fio.job import JobFile, render
from volbench.fio.runner import SubprocessRunner
from volbench.model import RW, Workload
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.reporter import NullReporter


def _busy_ms(outputs: list[str]) -> float:
    """fio's own time inside jobs: the longest clone's runtime per job name, in ms."""
    busy: dict[str, float] = {}
    for output in outputs:
        for job in json.loads(output)["jobs"]:
            busy[job["jobname"]] = max(busy.get(job["jobname"], 0.0), float(job["job_runtime"]))
    return sum(busy.values())


def _run(runner: SubprocessRunner, jobs: list[JobFile], workdir: Path) -> float:
    """Idle ms per test when ``jobs`` run one after another."""
    started = time.monotonic()
    outputs = [runner.run(render(job), workdir / str(i)).output for i, job in enumerate(jobs)]
    wall_ms = (time.monotonic() - started) * 1000
    tests = sum(len(job.workloads) for job in jobs)
    return (wall_ms - _busy_ms(outputs)) / tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--tests", type=int, default=6)
    parser.add_argument("--runtime", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, zram_device(256 << 20) as zram:
        work = Path(tmp)
        target = str(zram) if zram else str(work / "scratch.img")
        info = prepare_target(target, True, NullReporter(), 256 << 20, destroy_data=target)
        engine = best_engine(Path(info.path))
        workloads = tuple(
            Workload(f"t{i}", RW.RANDREAD, iodepth=16, runtime_s=args.runtime, size_bytes=256 << 20)
            for i in range(args.tests)
        )
        stonewalled = [JobFile(info.path, workloads, engine, work / "logs-a")]
        per_test = [
            JobFile(info.path, (w,), engine, work / f"logs-b{i}") for i, w in enumerate(workloads)
        ]
        runner = SubprocessRunner()
        gaps: dict[str, list[float]] = {"stonewalled": [], "per test": []}
        for pair in range(args.pairs):
            gaps["stonewalled"].append(_run(runner, stonewalled, work / f"a{pair}"))
            gaps["per test"].append(_run(runner, per_test, work / f"b{pair}"))
        kind = "zram" if zram else "file"
        print(f"{args.tests} tests x {args.runtime:g} s, {args.pairs} pairs, {kind}, {engine}")
        for name, values in gaps.items():
            print(
                f"{name:12s} idle per test: median {statistics.median(values):6.1f} ms "
                f"(min {min(values):.1f}, max {max(values):.1f})"
            )
        extra = statistics.median(
            b - a for a, b in zip(gaps["stonewalled"], gaps["per test"], strict=True)
        )
        print(f"one process per test costs {extra:.1f} ms more per test (median of pairs)")
    sys.exit(0)


if __name__ == "__main__":
    main()
