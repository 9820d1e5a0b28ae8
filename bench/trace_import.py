"""bench/trace_import: ``volbench import`` of a million-request blkparse file, its time
and peak memory.

Writes blkparse's default text of ``--requests`` 4 KiB random reads of device 8,0 over
64 GiB, one issued every 10 µs, in one of two layouts (``D`` and ``C`` lines only,
about 68 bytes each):

* ``paced``: each completed 80 µs after its issue (queue depth 8), lines in time order,
  as blkparse prints a real trace;
* ``waiting``: every request issued before the first completes (a million waiting at
  once: the most a reader must hold).

Then imports each into a new SQLite store as a whole ``python -m volbench import FILE``
(read, pair, profile, fit, pack and store), under ``--limit`` bytes of address space
(``RLIMIT_AS``, 1 GiB as in the reader fuzz; 0: none), and prints its wall time, CPU
time and peak resident memory (``ru_maxrss`` of that process, from ``wait4``).

``--src DIR`` runs another tree's code (``git archive COMMIT src | tar -x -C /tmp/old``).

Usage: python bench/trace_import.py [--requests N] [--layout paced|waiting] [--src DIR]
[--limit BYTES]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPACING_NS = 10_000
SERVICE_NS = 80_000


def _line(action: str, number: int, time_ns: int, sector: int) -> str:
    cpu, pid = (3, 697) if action == "D" else (0, 0)
    return (
        f"  8,0  {cpu:3d} {number:8d} {time_ns // 10**9:5d}.{time_ns % 10**9:09d} {pid:5d}"
        f"  {action}   R {sector} + 8 [fio]\n"
    )


def write_trace(path: Path, requests: int, layout: str) -> None:
    """The blkparse text of ``requests`` reads in ``layout`` (the module docstring)."""
    rng = random.Random(31)
    sectors = [rng.randrange(0, 64 * 2**30 // 4096) * 8 for _ in range(requests)]
    with path.open("w") as out:
        if layout == "waiting":
            done = requests * SPACING_NS
            out.writelines(_line("D", k, k * SPACING_NS, s) for k, s in enumerate(sectors))
            out.writelines(_line("C", k, done + k * SPACING_NS, s) for k, s in enumerate(sectors))
            return
        lag = SERVICE_NS // SPACING_NS  # requests issued while one is served
        for k, sector in enumerate(sectors):
            if k >= lag:
                out.write(
                    _line("C", k - lag, (k - lag) * SPACING_NS + SERVICE_NS, sectors[k - lag])
                )
            out.write(_line("D", k, k * SPACING_NS + 1, sector))
        for k in range(max(0, requests - lag), requests):
            out.write(_line("C", k, k * SPACING_NS + SERVICE_NS, sectors[k]))


def imported(path: Path, src: Path, limit: int) -> tuple[float, float, int, str]:
    """(wall s, CPU s, peak RSS bytes, last line of stderr) of ``volbench import PATH``."""
    env = {**os.environ, "PYTHONPATH": str(src), "VOLBENCH_DB": str(path.parent / "v.db")}

    def limited() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "volbench", "import", str(path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limited,
    )
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    last = err.strip().splitlines()[-1] if err.strip() else f"exit {child.returncode}"
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--layout", choices=("paced", "waiting"), default=None)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the code to run")
    parser.add_argument("--limit", type=int, default=1 << 30, help="RLIMIT_AS, bytes")
    args = parser.parse_args()
    for layout in (args.layout,) if args.layout else ("paced", "waiting"):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / f"{layout}.txt"
            write_trace(path, args.requests, layout)
            size = path.stat().st_size / 1e6
            wall, cpu, peak, last = imported(path, args.src, args.limit)
            print(
                f"{layout}: {args.requests:,} requests, {size:.0f} MB: {wall:.1f} s wall,"
                f" {cpu:.1f} s CPU, peak RSS {peak / 2**20:.0f} MiB; {last[-160:]}"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
