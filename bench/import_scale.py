"""bench/import_scale: ``import``, ``show`` and ``report`` of a 20,000-job fio output.

Builds one fio JSON document of ``--jobs`` jobs from a recorded fixture
(``tests/fixtures/fio/randread_json.json`` by default: fio 3.33, one 4 KiB random-read
job with clat percentiles): the fixture's job repeated, each copy renamed
``job-NNNNN`` (its ``jobname`` and ``name`` option) in a reporting group of its own,
so every copy is a test of its own, as a job file of that many sections gives. It
is imported into a new SQLite store in a temporary folder, then that run is shown
and reported, each as a whole ``python -m volbench`` command (interpreter start and
imports included, what a user waits for):

* ``volbench import FILE``
* ``volbench show RUN`` as tables (rich draws them) and ``--format markdown`` (the same
  sheets, written by volbench's exporter): stdout to a pipe, read and dropped
* ``volbench report RUN -o report.html``

Each command is given ``--timeout`` seconds (then reported as ``> T``). Goal (issue 22):
``show`` and ``report`` each under 10 s at 20,000 jobs.

``--src DIR`` times another tree's code (the ``src`` folder of an older checkout, e.g.
``git archive COMMIT src | tar -x -C /tmp/old``) on the same input.

Usage: python bench/import_scale.py [--jobs N] [--fixture NAME] [--timeout S] [--keep DIR]
[--src DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "fio"


def many_jobs(fixture: Path, jobs: int) -> dict[str, Any]:
    """The fixture's document with its first job repeated ``jobs`` times, each copy named
    ``job-NNNNN`` in group NNNNN (fio numbers groups from 0, one per stonewalled section)."""
    document: dict[str, Any] = json.loads(fixture.read_text())
    model = document["jobs"][0]
    copies = []
    for number in range(jobs):
        job = copy.deepcopy(model)
        name = f"job-{number:05d}"
        job["jobname"] = name
        job["groupid"] = number
        job.setdefault("job options", {})["name"] = name
        copies.append(job)
    document["jobs"] = copies
    return document


def timed(args: list[str], env: dict[str, str], timeout: float) -> float:
    """Wall seconds of ``python -m volbench ARGS`` (infinite past ``timeout``)."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "volbench", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return float("inf")
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"volbench {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return seconds


def shown(seconds: float, timeout: float) -> str:
    return f"> {timeout:.0f} s" if seconds == float("inf") else f"{seconds:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--fixture", default="randread_json.json")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--keep", type=Path, default=None, help="keep the files in DIR")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the code to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        source = folder / f"jobs-{args.jobs}.json"
        source.write_text(json.dumps(many_jobs(FIXTURES / args.fixture, args.jobs), indent=1))
        db = folder / "store.db"
        db.unlink(missing_ok=True)
        env = {**os.environ, "VOLBENCH_DB": str(db), "PYTHONPATH": str(args.src)}
        size_mb = source.stat().st_size / 1e6
        print(f"{args.jobs:,} jobs from {args.fixture}: {size_mb:.1f} MB of fio JSON")
        imported = timed(["import", str(source)], env, args.timeout)
        print(f"import: {shown(imported, args.timeout)}")
        if imported == float("inf"):
            return
        for fmt in ("table", "markdown"):
            show = timed(["show", "latest", "--format", fmt], env, args.timeout)
            print(f"show --format {fmt}: {shown(show, args.timeout)}")
        html = folder / "report.html"
        report = timed(["report", "latest", "-o", str(html)], env, args.timeout)
        size = f" ({html.stat().st_size / 1e6:.1f} MB)" if html.exists() else ""
        print(f"report: {shown(report, args.timeout)}{size}")
        load = os.getloadavg()[0]
        print(f"load average at the end: {load:.1f}")


if __name__ == "__main__":
    main()
