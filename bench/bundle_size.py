"""Run bundles: their size against the store's, and how long export and import take.

1. Runs one real fio test as a PTS cell runs (``bench/series_size.py``'s ``record``:
   4 jobs, 4 KiB random 65/35, ``log_avg_msec=1000``, iops/bw/lat logs, Poisson-paced
   250 IOPS a job) with ``--output-format=json+``, on a 64 MiB file in a temporary
   folder.
2. Stores ``--rounds`` full PTS IOPS rounds made of it into a new SQLite store: 56
   cells a round, each cell one stored round with fio's json+ output and the test's
   logs as its series (the way PTS runs store a cell), as one completed run.
3. Exports that run as a bundle (``store.bundle.dump``), imports it into a second new
   SQLite store (``Store.import_runs``), and prints the sizes (SQLite file, bundle,
   bundle expanded) and the times of reading, writing, checking and storing (wall
   clock, and this process's CPU time: the wall clock grows with the machine's load).

Usage: ``python bench/bundle_size.py [--runtime S] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from series_size import CELLS, record

from volbench.analysis.aggregate import group_tests
from volbench.fio.parser import parse
from volbench.model import RunSettings, RunStatus
from volbench.store import bundle
from volbench.store.repository import Store


def _output(folder: Path) -> str:
    """fio's json+ output of the recorded test (its job file, run again for 1 s)."""
    job = (folder / "job.fio").read_text().replace("runtime=", "runtime=1\n#")
    (folder / "short.fio").write_text(job)
    done = subprocess.run(
        ["fio", "--output-format=json+", str(folder / "short.fio")],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


class _Clock:
    """Wall-clock and CPU seconds since the last lap."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self) -> str:
        wall, cpu = time.perf_counter(), time.process_time()
        text = f"{wall - self._wall:.2f} / {cpu - self._cpu:.2f}"
        self._wall, self._cpu = wall, cpu
        return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=int, default=60, help="seconds of the fio test")
    parser.add_argument("--rounds", type=int, default=1, help="PTS IOPS rounds in the run")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="volbench-bundle-"))
    try:
        cell = record(folder, args.runtime)
        output = _output(folder)
        (folder / "data.img").unlink()
        tests = group_tests(parse(output))
        source = folder / "source.db"
        with Store.open(str(source)) as store:
            run_id = store.create_run("pts", {"path": "x"}, {}, {}, RunSettings())
            number = 0
            for _ in range(args.rounds):
                for n in range(CELLS):
                    name = f"cell{n}"
                    named = [dataclasses.replace(t, name=name) for t in tests]
                    series = [dataclasses.replace(s, round=number, test=name) for s in cell]
                    store.add_round(run_id, number, output, named, {}, series=series)
                    number += 1
            store.finish_run(run_id, RunStatus.COMPLETED)
            clock = _Clock()
            run = store.get_run(run_id)
            read_s = clock.lap()
        data = bundle.dump([run])
        dump_s = clock.lap()
        path = folder / "run.vbundle"
        path.write_bytes(data)
        clock.lap()
        runs = bundle.read(path)
        load_s = clock.lap()
        with Store.open(str(folder / "target.db")) as target:
            clock.lap()
            target.import_runs(runs)
            store_s = clock.lap()
        points = sum(len(s.points) for s in run.series)
        print(
            f"{args.rounds} PTS IOPS round(s) of {CELLS} cells x {args.runtime} s:"
            f" {len(run.raw_outputs)} fio outputs ({len(output):,} bytes each),"
            f" {len(run.results)} result rows, {len(run.series):,} series, {points:,} points"
        )
        print(
            f"  SQLite store {source.stat().st_size / 1e6:,.2f} MB; bundle"
            f" {len(data) / 1e6:,.2f} MB (expanded {len(gzip.decompress(data)) / 1e6:,.1f} MB)"
        )
        print(
            f"  read from the store {read_s}, bundle written {dump_s}, read and checked"
            f" {load_s}, stored {store_s} (wall / CPU seconds)"
        )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
