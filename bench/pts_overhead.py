"""PTS overhead: how much of a PTS run's wall time is fio measuring.

Runs ``volbench pts iops`` (reduced matrix: 4k and 64k at 100/0 and 0/100, five
rounds, ``--cell-seconds`` S) on a zram device this script creates (root; removed
at the end), then divides the sum of fio's own job runtimes (``job_runtime`` in
the stored raw JSON, one per stonewalled cell: the longest of its clones) by

* the run's stored wall time (run created -> run finished: purge, WIPC, every
  round, every commit), and
* the whole command's wall time (Python start-up, target checks, the
  sequential-write probe for the estimate, printing the report).

Target: rounds ratio >= 0.97. Usage: ``python bench/pts_overhead.py [--cell-seconds 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import zram_device

from volbench.store.repository import Store


def fio_seconds(raw: str) -> float:
    """Sum over the cells of one fio output of the cell's job runtime (s)."""
    document = json.loads(raw[raw.find("{") : raw.rfind("}") + 1])
    cells: dict[str, float] = {}
    for job in document["jobs"]:
        cells[job["jobname"]] = max(cells.get(job["jobname"], 0.0), job["job_runtime"] / 1000)
    return sum(cells.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell-seconds", type=float, default=10.0)
    parser.add_argument("--size-mib", type=int, default=256)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("pts_overhead needs root (zram device)", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="volbench-bench-") as tmp,
        zram_device(args.size_mib << 20) as zram,
    ):
        if zram is None:
            print("no zram on this machine", file=sys.stderr)
            return 2
        db = Path(tmp) / "bench.db"
        command = [
            sys.executable, "-m", "volbench", "pts", "iops", "--target", str(zram),
            "--cell-seconds", f"{args.cell_seconds:g}", "--block-sizes", "4k,64k",
            "--mixes", "100/0,0/100", "--max-rounds", "5", "--runs-dir", str(Path(tmp) / "runs"),
            "--db", str(db), "--format", "json",
        ]  # fmt: skip
        started = time.monotonic()
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        command_s = time.monotonic() - started
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 3
        with Store.open(str(db)) as store:
            run = store.get_run("latest")
    assert run.ended_at is not None
    run_s = (
        datetime.fromisoformat(run.ended_at) - datetime.fromisoformat(run.started_at)
    ).total_seconds()
    fio_s = sum(fio_seconds(raw) for raw in run.raw_outputs)
    print(f"cells of {args.cell_seconds:g} s, {len(run.raw_outputs)} rounds (incl. WIPC)")
    print(f"fio job runtimes: {fio_s:.1f} s")
    print(f"run wall time:    {run_s:.1f} s   ratio {fio_s / run_s:.3f}")
    print(f"command wall time: {command_s:.1f} s   ratio {fio_s / command_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
