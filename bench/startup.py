"""bench/startup: how long volbench takes to answer before it does any work.

Times whole ``python -m volbench ARGS`` processes (interpreter start, imports,
argument parsing, the command), alternating between this tree and, with
``--baseline DIR`` (the ``src`` folder of another checkout, e.g. ``git worktree add
/tmp/old COMMIT``), that code, so both see the same machine load. Commands:
``--version``, ``--help``, ``show --help`` and ``runs`` on an empty store (which
opens the store: SQLAlchemy is then needed). Reports the median and the spread of
``--repeat`` runs each, and the ratio of the medians.

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
COMMANDS = (("--version",), ("--help",), ("show", "--help"), ("runs",))


def _once(src: Path, args: tuple[str, ...], db: Path) -> float:
    """Wall seconds of one ``python -m volbench ARGS`` with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "VOLBENCH_DB": str(db)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "volbench", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    trees = {"now": SRC, **({"before": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as folder:
        for name, src in trees.items():  # an empty store each, made once beforehand
            _once(src, ("import", "/nonexistent"), Path(folder) / f"{name}.db")
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeat):
            for command in COMMANDS:
                for name, src in trees.items():  # alternating: the same load for both
                    db = Path(folder) / f"{name}.db"
                    times.setdefault((name, " ".join(command)), []).append(_once(src, command, db))
    print(
        "| command | "
        + " | ".join(f"{n}: median s (min..max)" for n in trees)
        + " | before / now |"
    )
    print("|---|" + "---:|" * (len(trees) + 1))
    for command in COMMANDS:
        key = " ".join(command)
        cells = []
        for name in trees:
            found = times[(name, key)]
            cells.append(f"{statistics.median(found):.3f} ({min(found):.3f}..{max(found):.3f})")
        ratio = ""
        if "before" in trees:
            before = statistics.median(times[("before", key)])
            ratio = f"{before / statistics.median(times[('now', key)]):.1f}"
        print(f"| `volbench {key}` | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
