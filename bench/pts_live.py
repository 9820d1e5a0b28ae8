"""bench/pts_live: what volbench itself costs while fio runs the full PTS IOPS matrix.

`volbench pts iops` with the whole matrix (8 block sizes x 7 R/W mixes = 56 cells,
TC 4 x QD 32: 224 fio jobs in one fio process per round) at 1 s cells, one round
(``--max-rounds 1``), on a zram device this script creates. Measured from /proc of
the volbench process itself (not its fio children): CPU time (utime + stime, field
14 + 15 of /proc/PID/stat) and peak resident memory (VmHWM of /proc/PID/status),
sampled every 0.2 s until it exits (the share between 20 and 60 s, inside round 1, is
what the live display, ETA and stall watch cost); the stalls it stored (there are none: a zram
device never stops completing I/O); and, in a second run, how long after Ctrl-C
(SIGINT, sent 20 s into the round) volbench exits.

Side by side in one run: this tree and, with ``--baseline DIR`` (the ``src`` folder
of another checkout, e.g. ``git worktree add /tmp/old COMMIT``), that code.
Usage: python bench/pts_live.py [--baseline DIR] [--cell-seconds S]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from overhead import zram_device

TICKS = os.sysconf("SC_CLK_TCK")


WINDOW_S = (20.0, 60.0)
"""Seconds after the start between which the live display's own share is taken: inside
round 1 (WIPC of the 1 GiB zram device takes a few seconds), away from start-up
(imports, the store) and the final report."""


@dataclass(frozen=True)
class Measured:
    wall_s: float
    cpu_s: float
    window_pct: float
    peak_mib: float
    stalls: int
    exit_code: int


def _sample(pid: int) -> tuple[float, float] | None:
    """(CPU seconds, peak RSS MiB) of process ``pid`` so far; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    cpu = (int(stat[11]) + int(stat[12])) / TICKS
    hwm = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")), 0
    )
    return cpu, hwm / 1024


def run(
    src: Path, device: Path, work: Path, cell_s: float, interrupt_after: float | None
) -> Measured:
    db = work / f"{src.parent.name}-{time.monotonic_ns()}.db"
    env = {**os.environ, "PYTHONPATH": str(src), "VOLBENCH_DB": str(db)}
    command = [
        sys.executable, "-m", "volbench", "pts", "iops", "--target", str(device),
        f"--destroy-data={device}", "--cell-seconds", f"{cell_s:g}", "--max-rounds", "1",
        "--no-purge", "--runs-dir", str(work / "runs"),
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = (0.0, 0.0)
    sent_at: float | None = None
    samples: list[tuple[float, float]] = []  # (seconds since start, CPU seconds)
    while proc.poll() is None:
        found = _sample(proc.pid)
        if found:
            last = found
            samples.append((time.monotonic() - started, found[0]))
        late = interrupt_after is not None and time.monotonic() - started > interrupt_after
        if late and sent_at is None:
            proc.send_signal(signal.SIGINT)  # the volbench this bench started
            sent_at = time.monotonic()
        time.sleep(0.2)
    ended = time.monotonic()
    stalls = 0
    if db.exists():
        shown = subprocess.run(
            [sys.executable, "-m", "volbench", "show", "latest", "--format", "json"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if shown.returncode == 0:
            stalls = len(json.loads(shown.stdout).get("stalls", []))
    wall = ended - (sent_at if sent_at is not None else started)
    inside = [(t, c) for t, c in samples if WINDOW_S[0] <= t <= WINDOW_S[1]]
    window = float("nan")
    if len(inside) >= 2 and inside[-1][0] > inside[0][0]:
        window = 100 * (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])
    return Measured(wall, last[0], window, last[1], stalls, proc.returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--cell-seconds", type=float, default=1.0)
    args = parser.parse_args()
    trees = {"this tree": Path(__file__).resolve().parents[1] / "src"}
    if args.baseline:
        trees["baseline"] = args.baseline
    with tempfile.TemporaryDirectory() as tmp, zram_device(1 << 30) as zram:
        if zram is None:
            sys.exit("bench/pts_live needs root and zram")
        work = Path(tmp)
        print(f"PTS IOPS, 56 cells x TC 4 x QD 32, {args.cell_seconds:g} s cells, zram 1 GiB")
        header = ("code", "run", "wall s", "CPU s", "CPU %", "live %", "peak MiB", "stalls", "exit")
        print("{:10s} {:14s} {:>8s} {:>7s} {:>6s} {:>6s} {:>9s} {:>6s} {:>4s}".format(*header))
        for name, src in trees.items():
            for label, after in (("one round", None), ("Ctrl-C at 20 s", 20.0)):
                m = run(src, zram, work, args.cell_seconds, after)
                share = 100 * m.cpu_s / m.wall_s if after is None else float("nan")
                if after is not None:  # it ended at about 21 s: no window to speak of
                    m = dataclasses.replace(m, window_pct=float("nan"))
                wall = f"{m.wall_s:8.1f}" if after is None else f"{m.wall_s:7.2f}*"
                print(
                    f"{name:10s} {label:14s} {wall} {m.cpu_s:7.1f} {share:6.1f} "
                    f"{m.window_pct:6.1f} {m.peak_mib:9.0f} {m.stalls:6d} {m.exit_code:4d}",
                    flush=True,
                )
        print("* seconds from SIGINT to exit; live %: CPU share 20-60 s into the run")


if __name__ == "__main__":
    main()
