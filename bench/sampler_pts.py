"""The host/device sampler's own cost on the full PTS IOPS matrix: the same run with the
sampler on and off (``VOLBENCH_SAMPLER=off``), alternately, on one zram device.

``volbench pts iops`` with the whole matrix (8 block sizes x 7 R/W mixes = 56 cells,
TC 4 x QD 32, each cell a fio process of its own, so a round watch is started and
stopped 56 times), 1 s cells, one round (``--max-rounds 1``), ``--no-purge``, on a
1 GiB zram device this script creates (hot_add; removed at the end). Measured from
/proc of the volbench process itself (not its fio children; the sampler is a thread
of it): CPU time (utime + stime) and wall time of the whole command. The sampler's
share of one CPU = (CPU with it - CPU without it) / wall time with it, per pair and as
the median of the pairs. The stored host samples are counted from the store.

That difference is within the noise of a whole command's CPU time, so the cost is
also taken apart: the CPU time (``time.process_time``) of one sample while a fio
process like a PTS cell's runs on the device (4 jobs: its threads' schedstat is read),
and of one round watch's start and end (cgroup files, the drive's health check, the
series), each over many calls; the cost on the matrix = samples x the first + cells x
the second, as a share of the run's wall time.

Usage: ``python bench/sampler_pts.py [--pairs N] [--cell-seconds S]`` (root, zram).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from overhead import zram_device
from pts_live import pts_round

from volbench.model import TargetInfo
from volbench.plans.runs.round_watch import RoundWatch
from volbench.store.repository import Store
from volbench.targets.sampler import Sampler

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measured:
    sampler: bool
    wall_s: float
    cpu_s: float
    cells: int
    host_points: int


def _cpu_s(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def run_once(device: Path, sampler: bool, cell_seconds: float) -> Measured:
    """One PTS IOPS round on ``device`` (its own store and runs folder)."""
    with tempfile.TemporaryDirectory(prefix="sampler-pts-") as folder:
        db = Path(folder) / "store.db"
        command = [
            *pts_round(("iops",), ("--target", str(device)), cell_seconds, Path(folder)),
            *("--db", str(db), "--format", "json"),
        ]
        env = {**os.environ, "VOLBENCH_SAMPLER": "on" if sampler else "off"}
        log = Path(folder) / "stderr.txt"  # progress lines: a pipe left unread would fill
        started = time.monotonic()
        with log.open("w") as err:
            proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
            cpu = 0.0
            while proc.poll() is None:
                cpu = _cpu_s(proc.pid) or cpu  # the last reading before it exits
                time.sleep(0.1)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"volbench pts failed ({proc.returncode}): {log.read_text()[-2000:]}")
        with Store.open(str(db)) as store:
            run = store.get_run("latest")
        host = [s for s in run.series if s.direction == "host" and s.kind == "fio_cpu"]
        cells = len({(r.round, r.test) for r in run.results})
    return Measured(sampler, wall, cpu, cells, sum(len(s.points) for s in host))


FIO_CELL = """[global]
filename={device}
direct=1
ioengine=io_uring
thread
time_based
runtime={seconds}
size=256m
[cell]
rw=randread
bs=4k
iodepth=32
numjobs=4
"""


def per_sample_s(device: Path, samples: int = 200) -> float:
    """CPU seconds of one sample of the host, the device and a running 4-job fio."""
    with tempfile.TemporaryDirectory(prefix="sampler-pts-fio-") as folder:
        job = Path(folder) / "cell.fio"
        job.write_text(FIO_CELL.format(device=device, seconds=10))
        fio = subprocess.Popen(["fio", str(job)], stdout=subprocess.DEVNULL)
        try:
            time.sleep(1.0)  # its job threads have started
            sampler = Sampler(device.name, parent=os.getpid())
            sampler.sample()
            began = time.process_time()
            for _ in range(samples):
                sampler.sample()
            spent = time.process_time() - began
            measured = sum(1 for s in sampler.samples if s.fio_cpu_cores is not None)
        finally:
            fio.kill()  # the fio this script started
            fio.wait()
    if measured < samples // 2:
        raise SystemExit(f"fio was not sampled ({measured} of {samples})")
    return spent / samples


def per_round_s(device: Path, rounds: int = 100) -> float:
    """CPU seconds of one round watch's start and end (no sample in between)."""
    target = TargetInfo(str(device), "block", 1 << 30)
    began = time.process_time()
    for n in range(rounds):
        watch = RoundWatch(target)
        watch.start()
        watch.take(n, "cell")
    return (time.process_time() - began) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--cell-seconds", type=float, default=1.0)
    args = parser.parse_args()
    with zram_device(1 << 30) as device:
        if device is None:
            raise SystemExit("needs root and zram (/sys/class/zram-control)")
        results: list[tuple[Measured, Measured]] = []
        for n in range(args.pairs):
            order = (True, False) if n % 2 == 0 else (False, True)
            first, second = (run_once(device, on, args.cell_seconds) for on in order)
            on, off = (first, second) if first.sampler else (second, first)
            results.append((on, off))
            print(
                f"pair {n + 1}: sampler on {on.cpu_s:.2f} s CPU / {on.wall_s:.1f} s"
                f" ({on.cells} cells, {on.host_points} fio samples stored);"
                f" off {off.cpu_s:.2f} s CPU / {off.wall_s:.1f} s;"
                f" share of one CPU {(on.cpu_s - off.cpu_s) / on.wall_s:+.2%}",
                flush=True,
            )
        sample_s, round_s = per_sample_s(device), per_round_s(device)
    shares = [(on.cpu_s - off.cpu_s) / on.wall_s for on, off in results]
    per_cell = [(on.cpu_s - off.cpu_s) / on.cells for on, off in results if on.cells]
    print(
        f"median over {len(results)} pairs: {statistics.median(shares):+.2%} of one CPU,"
        f" {statistics.median(per_cell) * 1e3:+.1f} ms CPU per cell"
        f" (whole command: on {statistics.median(on.cpu_s for on, _ in results):.2f} s,"
        f" off {statistics.median(off.cpu_s for _, off in results):.2f} s)"
    )
    on = [on for on, _ in results]
    points = statistics.median(m.host_points for m in on)
    cells = statistics.median(m.cells for m in on)
    wall = statistics.median(m.wall_s for m in on)
    cost = points * sample_s + cells * round_s
    print(
        f"taken apart: {sample_s * 1e3:.2f} ms CPU a sample (fio with 4 jobs running),"
        f" {round_s * 1e3:.2f} ms a round watch; {points:.0f} samples and {cells:.0f} rounds"
        f" in {wall:.0f} s: {cost:.3f} s CPU, {cost / wall:.3%} of one CPU"
    )


if __name__ == "__main__":
    main()
