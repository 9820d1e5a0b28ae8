"""Per-second series in the store: bytes per series, SQLite growth of a PTS IOPS round.

1. Runs one real fio test the way volbench runs a PTS cell: 4 jobs (TC 4), 60 s,
   4 KiB random 65/35 read/write, ``log_avg_msec=1000`` with iops, bw and lat logs
   (fio writes lat, clat and slat), libaio QD 1, each job at a Poisson-paced 250
   IOPS (``rate_process=poisson``: per-second figures that vary as a real device's
   do, at a few % of a CPU), on a 64 MiB file in a temporary folder.
2. Reads its logs as a round's series (``fio.logs.read_series``) and measures the
   stored blobs (one per test, kind of log and direction, the 4 jobs in it).
3. Stores a full PTS IOPS round made of that test (56 cells, the logs of each
   renamed) into two new SQLite files, one with the series and one without, and
   gives the difference; then ``--rounds`` such rounds, and how long reading the
   run back with its series takes.

Usage: ``python bench/series_size.py [--runtime S] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from volbench.fio.logs import read_series
from volbench.model import LogSeries, RunSettings
from volbench.store.repository import Store
from volbench.store.series import series_rows

CELLS = 56
JOBS = 4


def record(folder: Path, runtime_s: int) -> list[LogSeries]:
    """One 4-job test's logs, as fio writes them for a PTS cell."""
    job = folder / "job.fio"
    job.write_text(
        f"[global]\nfilename={folder / 'data.img'}\nsize=64m\nioengine=libaio\ndirect=1\n"
        "log_avg_msec=1000\ngroup_reporting=0\n"
        f"[cell]\nrw=randrw\nrwmixread=65\nbs=4k\niodepth=1\nnumjobs={JOBS}\n"
        f"time_based=1\nruntime={runtime_s}\nrate_iops=250\nrate_process=poisson\n"
        f"write_iops_log={folder / 'cell'}\nwrite_bw_log={folder / 'cell'}\n"
        f"write_lat_log={folder / 'cell'}\n"
    )
    subprocess.run(["fio", "--output-format=json", str(job)], check=True, capture_output=True)
    return read_series(folder, 0)


def round_of(cell: list[LogSeries], round_no: int) -> list[LogSeries]:
    """A PTS IOPS round: the cell's logs as each of 56 cells'."""
    return [
        dataclasses.replace(s, round=round_no, test=f"cell{n}") for n in range(CELLS) for s in cell
    ]


def stored_bytes(folder: Path, rounds: list[list[LogSeries]], series: bool) -> int:
    db = folder / f"store-{series}.db"
    with Store.open(str(db)) as store:
        run_id = store.create_run("pts", {"path": "x"}, {}, {}, RunSettings())
        for n, found in enumerate(rounds):
            store.add_round(run_id, n, "{}", [], {}, series=found if series else ())
    return db.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=int, default=60, help="seconds of the fio test")
    parser.add_argument("--rounds", type=int, default=25, help="PTS rounds to store")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="volbench-series-"))
    try:
        cell = record(folder, args.runtime)
        (folder / "data.img").unlink()
        rows = series_rows(1, cell)
        points = sum(len(s.points) for s in cell)
        print(f"one test: {len(cell)} job logs x direction, {points} points, {len(rows)} rows")
        for row in rows:
            print(
                f"  {row['kind']:>4} {row['direction']:>5}: {row['samples']:4} points, "
                f"{len(row['data']):5} bytes"
            )
        blob = sum(len(r["data"]) for r in rows)
        minutes = args.runtime / 60
        print(
            f"  all: {blob} bytes = {blob / minutes:,.0f} bytes per test-minute "
            f"({blob / minutes / JOBS:,.0f} per job-minute; "
            f"{points * 16 / blob:.1f}x smaller than 16 bytes a point)"
        )
        sizes = [len(r["data"]) / minutes for r in rows]
        print(f"  per row: median {statistics.median(sizes):,.0f} bytes per minute")
        one = [round_of(cell, 0)]
        grown = stored_bytes(folder, one, True) - stored_bytes(folder, one, False)
        print(f"PTS IOPS round ({CELLS} cells x {args.runtime} s): SQLite +{grown / 1e3:,.0f} kB")
        many = [round_of(cell, n) for n in range(args.rounds)]
        for db in folder.glob("*.db"):
            db.unlink()
        grown = stored_bytes(folder, many, True) - stored_bytes(folder, many, False)
        with Store.open(str(folder / "store-True.db")) as store:
            started = time.perf_counter()
            run = store.get_run(1)
            took = time.perf_counter() - started
        print(
            f"{args.rounds} rounds: SQLite +{grown / 1e6:,.1f} MB; reading the run back: "
            f"{took:.2f} s for {len(run.series):,} series"
        )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
