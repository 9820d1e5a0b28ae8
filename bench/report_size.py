"""Report size: generation time and file size of a full 25-round PTS run's report.

1. Records one real fio output per distinct round of ``volbench pts all`` (full
   IOPS matrix, 7 mixes x 8 block sizes, Enterprise TC 4 x QD 32, 0.5 s cells,
   6 HIR cycles) on a 64 MiB RAM loop device (``pts_recording.py --once``;
   root; about 6 minutes; ``--recording DIR`` reuses one).
2. Writes a replay folder: each steady-state round 25 times with its figures
   scaled by 0.95^round (IOPS, bandwidth and bytes down, mean latencies up), so no
   test reaches steady state and every one runs its 25 rounds; WSAT 360
   one-minute-like samples, scaled to write less than 4 x the active range.
3. Stores the run with the real command: ``volbench pts all --replay DIR
   --max-rounds 25 ...`` on a 64 MiB file.
   (about 7 minutes: the driver reads the whole run back after each of its 526
   rounds; ``--db FILE`` keeps the stored run, and reuses it when FILE exists).
4. Times ``volbench report RUN -o report.html`` and ``-o report.pdf`` (wall
   time of the whole command) and measures the files.

Targets: HTML < 3 s and < 8 MB. Usage: ``python bench/report_size.py [--recording DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pts_recording import MiB, record

from volbench.plans.pts.options import IOPS_BLOCK_SIZES, IOPS_MIXES, parse_tests

SIZE_MIB = 64
ROUNDS = 25
DRIFT = 0.95
"""Per-round factor: a 5% change per round puts |slope| x 4 near 20% of the average
(PTS allows 10%), so steady state is never reached."""
WSAT_SAMPLES = 360
CELL_S = 0.5
HIR_CYCLES = 6
PTS_ARGS = (
    "--cell-seconds",
    f"{CELL_S:g}",
    "--max-rounds",
    str(ROUNDS),
    "--hir-cycles",
    str(HIR_CYCLES),
    "--wsat-max-rounds",
    str(WSAT_SAMPLES),
)


def scaled(output: str, factor: float, latency: bool = True) -> str:
    """fio's JSON with every job's rates and amounts x ``factor`` and (``latency``)
    mean latencies / ``factor``: the same run on a proportionally faster or slower device."""
    document = json.loads(output)
    for job in [*document.get("jobs", []), *document.get("client_stats", [])]:
        for direction in ("read", "write", "trim"):
            block: dict[str, Any] = job.get(direction) or {}
            for key in (
                "iops",
                "iops_mean",
                "bw",
                "bw_bytes",
                "bw_mean",
                "io_bytes",
                "io_kbytes",
                "total_ios",
            ):
                if key in block:
                    value = block[key] * factor
                    block[key] = int(value) if isinstance(block[key], int) else value
            for kind in ("lat_ns", "clat_ns") if latency else ():
                if isinstance(block.get(kind), dict) and "mean" in block[kind]:
                    block[kind]["mean"] /= factor
    return json.dumps(document, indent=2)


def replay_folder(recording: Path, replay: Path, active: int) -> int:
    """The replay folder of a 25-round run from one recorded output per round."""
    replay.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in sorted(recording.glob("*.json")):
        output = path.read_text()
        if ".ss." in path.name:
            copies = [scaled(output, DRIFT**k) for k in range(ROUNDS)]
        elif ".run." in path.name:  # WSAT: samples writing 2 x active range in all
            written = sum(j["write"]["io_bytes"] for j in json.loads(output)["jobs"])
            base = 2 * active / (WSAT_SAMPLES * written)
            copies = [scaled(output, base * (0.3 + 0.7 * 0.99**k)) for k in range(WSAT_SAMPLES)]
        else:
            copies = [output]
        for k, text in enumerate(copies):
            (replay / f"{path.stem}-{k:04d}.json").write_text(text)
            count += 1
    return count


def volbench(*args: str) -> float:
    """Run ``python -m volbench ARGS``; return its wall time (s)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "volbench", *args], capture_output=True, text=True, check=False
    )
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"volbench {' '.join(args[:3])} failed:\n{proc.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recording", type=Path, default=None, help="Reuse (or keep) it here.")
    parser.add_argument("--keep", type=Path, default=None, help="Keep the reports here.")
    parser.add_argument("--db", type=Path, default=None, help="Keep (or reuse) the stored run.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="volbench-bench-") as tmp_name:
        tmp = Path(tmp_name)
        recording = args.recording or tmp / "recording"
        if not any(recording.glob("*.json")):
            if os.geteuid() != 0:
                print("recording needs root (loop device)", file=sys.stderr)
                return 2
            started = time.monotonic()
            overrides = {
                "tests": parse_tests(["all"]),
                "profile": "enterprise",
                "cell_seconds": CELL_S,
                "max_rounds": ROUNDS,
                "hir_cycles": HIR_CYCLES,
                "wsat_max_rounds": WSAT_SAMPLES,
            }
            n = record(recording, SIZE_MIB * MiB, overrides, once=True)
            print(f"recorded {n} fio outputs in {time.monotonic() - started:.0f} s")
        db = str(args.db or tmp / "bench.db")
        if args.db is None or not args.db.exists():
            replay = tmp / "replay"
            print(f"replay folder: {replay_folder(recording, replay, SIZE_MIB * MiB)} outputs")
            stored_s = volbench(
                "pts",
                "all",
                "--target",
                str(tmp / "target.img"),
                "--size",
                f"{SIZE_MIB}m",
                "--replay",
                str(replay),
                *PTS_ARGS,
                "--runs-dir",
                str(tmp / "runs"),
                "--db",
                db,
                "--format",
                "json",
            )
            print(f"stored the 25-round run in {stored_s:.1f} s (replay)")
        out = args.keep or tmp
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        for name in ("report.html", "report.pdf"):
            seconds = volbench(
                "report",
                "latest",
                "-o",
                str(out / name),
                "--db",
                db,
                "--runs-dir",
                str(tmp / "runs"),
            )
            size = (out / name).stat().st_size
            rows.append((name, seconds, size))
    matrix = f"{len(IOPS_MIXES)} x {len(IOPS_BLOCK_SIZES)}"
    print(f"\nfull PTS run (all 8 tests, IOPS matrix {matrix}, {ROUNDS} rounds, not steady)")
    print("| output | generation (s) | size (MB) |\n|---|---:|---:|")
    for name, seconds, size in rows:
        print(f"| {name} | {seconds:.2f} | {size / 1e6:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
