"""bench/startup: how long volbench takes to answer before it does any work.

Times whole ``python -m volbench ARGS`` processes (interpreter start, imports,
argument parsing, the command), alternating between this tree and, with
``--baseline DIR`` (the ``src`` folder of another checkout, e.g. ``git worktree add
/tmp/old COMMIT``), that code, so both see the same machine load. Commands:
``--version``, ``--help``, ``show --help``, ``pts --help`` (the modules a PTS run
imports: its report's, the store's) and ``runs`` on an empty store (which opens the
store: SQLAlchemy is then needed). Reports the median and the spread of ``--repeat``
runs each, and the ratio of the medians: wall seconds, and the process's own CPU
seconds (user + system, its rusage from ``wait4``; it starts no child).

Usage: python bench/startup.py [--baseline DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
COMMANDS = (("--version",), ("--help",), ("show", "--help"), ("pts", "--help"), ("runs",))


def _once(src: Path, args: tuple[str, ...], db: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds of one ``python -m volbench ARGS`` with ``src`` first
    on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "VOLBENCH_DB": str(db)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "volbench", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its rusage
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    trees = {"now": SRC, **({"before": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as folder:
        for name, src in trees.items():  # an empty store each, made once beforehand
            _once(src, ("import", "/nonexistent"), Path(folder) / f"{name}.db")
        times: dict[tuple[str, str, str], list[float]] = {}
        for _ in range(args.repeat):
            for command in COMMANDS:
                for name, src in trees.items():  # alternating: the same load for both
                    db = Path(folder) / f"{name}.db"
                    key = " ".join(command)
                    wall, cpu = _once(src, command, db)
                    times.setdefault((name, key, "wall"), []).append(wall)
                    times.setdefault((name, key, "CPU"), []).append(cpu)
    for measure in ("wall", "CPU"):
        print(
            f"| command ({measure}) | "
            + " | ".join(f"{n}: median s (min..max)" for n in trees)
            + " | before / now |"
        )
        print("|---|" + "---:|" * (len(trees) + 1))
        for command in COMMANDS:
            key = " ".join(command)
            cells = []
            for name in trees:
                found = times[(name, key, measure)]
                cells.append(f"{statistics.median(found):.3f} ({min(found):.3f}..{max(found):.3f})")
            ratio = ""
            if "before" in trees:
                before = statistics.median(times[("before", key, measure)])
                ratio = f"{before / statistics.median(times[('now', key, measure)]):.2f}"
            print(f"| `volbench {key}` | " + " | ".join(cells) + f" | {ratio} |")
        print()


if __name__ == "__main__":
    main()
