"""bench/pts_replay_cpu: volbench's own CPU for a PTS IOPS run, without fio.

The full IOPS matrix (8 block sizes x 7 R/W mixes = 56 cells, one round, 1 s cells,
``--no-purge``) replayed from fio outputs recorded by a live run (``volbench pts
--replay``: the replay runner answers each fio process with its recorded output, so
no fio runs and the machine's load barely matters). What each command costs is the
volbench process's own user + system CPU (``os.wait4``'s rusage), split three ways,
each measured by commands of its own:

- imports: ``python -c "import volbench.cli.main, volbench.cli.pts"``;
- the whole command over the 56 cells (imports, the probe and WIPC answered from the
  recording, 56 commits, the final report);
- the same command over one cell (``--block-sizes 4k --mixes 100/0``): the command's
  cost per cell is (56 cells - 1 cell) / 55.

The replay runner splits each recorded output into fio's documents as the live
runner splits fio's stdout; the live run's other costs (starting fio, following its
status stream, sampling host and device each second) are not here: compare with
``bench/pts_live.py`` for those.

Side by side: this tree's ``src`` (or ``--tree DIR``) and ``--baseline DIR`` (the
``src`` folder of another checkout), alternating, ``--pairs`` times. The target is a
loop device over a 1 GiB sparse image in /dev/shm (512 B sectors, as the recording's;
nothing is written to it: the safety checks read it), so root is needed.

The recording: ``--outputs DIR`` (``NNNN*.json`` in run order, the probe's first, as
``bench/behaviour_snapshot.py`` keeps them), or ``--from-store DB`` (the last PTS run of
that store, e.g. one ``bench/pts_live.py --keep DIR`` kept). A run stored before the
probe was kept gets the probe of the unit tests' recording (its speed only sizes the
estimate).

Usage: python bench/pts_replay_cpu.py (--outputs DIR | --from-store DB) [--baseline DIR]
       [--tree DIR] [--pairs N] [--bytecode cold|warm]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pts_live import bytecode_env, pts_round, shm_loop, warm

SRC = Path(__file__).resolve().parent.parent / "src"
FIXTURE = SRC.parent / "tests" / "fixtures" / "fio" / "pts" / "recording.tar.xz"
CELLS = 56
IMPORTS = "import volbench.cli.main, volbench.cli.pts"


@dataclass(frozen=True)
class Pass:
    """One code's three commands: CPU seconds (user + system) of each process."""

    imports_s: float
    full_s: float
    one_cell_s: float
    full_wall_s: float

    @property
    def per_cell_ms(self) -> float:
        return (self.full_s - self.one_cell_s) / (CELLS - 1) * 1000


def extract(store: Path, folder: Path) -> None:
    """The last PTS run of ``store``'s fio outputs, in round order, as replay files."""
    with sqlite3.connect(store) as db:
        (run_id,) = db.execute("SELECT max(id) FROM runs WHERE plan = 'pts'").fetchone()
        found = db.execute(
            "SELECT round, raw_json FROM rounds WHERE run_id = ? ORDER BY round", (run_id,)
        ).fetchall()
    for round_no, raw in found:
        (folder / f"{round_no:04d}.json").write_text(raw)
    first = json.loads(raw_json(found[0][1]))
    if [j["jobname"] for j in first["jobs"]] != ["seq-write-probe"]:
        with tarfile.open(FIXTURE) as tar:
            member = tar.extractfile("0000-seq-write-probe.json")
            assert member is not None
            (folder / "0000-probe.json").write_bytes(member.read())  # sorts first


def raw_json(text: str) -> str:
    return text[text.index("{") : text.rindex("}") + 1]


def cpu_of(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one process; its exit status must be 0."""
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed:\n{err.decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def one_pass(src: Path, outputs: Path, device: Path, work: Path, env: dict[str, str]) -> Pass:
    work.mkdir(parents=True, exist_ok=True)
    env = {**env, "PYTHONPATH": str(src), "XDG_DATA_HOME": str(work / "data")}
    imports, _ = cpu_of([sys.executable, "-c", IMPORTS], env)
    figures: list[tuple[float, float]] = []
    for extra in ((), ("--block-sizes", "4k", "--mixes", "100/0")):
        db = work / f"store-{len(figures)}.db"
        db.unlink(missing_ok=True)
        target = ("--target", str(device), f"--destroy-data={device}")
        command = [
            *pts_round(("iops",), target, 1, work / "runs"),
            *("--db", str(db), "--replay", str(outputs), *extra),
        ]
        figures.append(cpu_of(command, env))
    return Pass(imports, figures[0][0], figures[1][0], figures[0][1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--outputs", type=Path, help="recorded fio outputs (NNNN*.json)")
    source.add_argument("--from-store", type=Path, help="a store whose last PTS run to replay")
    parser.add_argument("--baseline", type=Path, help="the src folder of the code before")
    parser.add_argument("--tree", type=Path, default=SRC, help="the src folder measured")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--bytecode", choices=("cold", "warm"), default="warm")
    args = parser.parse_args()
    trees = {"this": args.tree.resolve()}
    if args.baseline:
        trees = {"before": args.baseline.resolve(), **trees}
    with tempfile.TemporaryDirectory() as tmp, shm_loop(1 << 30) as device:
        work = Path(tmp)
        outputs = args.outputs
        if outputs is None:
            outputs = work / "outputs"
            outputs.mkdir()
            extract(args.from_store, outputs)
        env = bytecode_env(args.bytecode, work)
        for src in trees.values():
            if args.bytecode == "warm":
                warm(src, env)
            one_pass(src, outputs, device, work / "first", env)  # runs dir, store made once
        passes: dict[str, list[Pass]] = {name: [] for name in trees}
        print(f"load average {os.getloadavg()[0]:.1f}, {args.bytecode} bytecode", flush=True)
        print("code    imports s  command s  one cell s  per cell ms  wall s", flush=True)
        for _ in range(args.pairs):
            for name, src in trees.items():
                found = one_pass(src, outputs, device, work / name, env)
                passes[name].append(found)
                print(
                    f"{name:7} {found.imports_s:9.2f}  {found.full_s:9.2f}  "
                    f"{found.one_cell_s:10.2f}  {found.per_cell_ms:11.1f}  "
                    f"{found.full_wall_s:6.2f}",
                    flush=True,
                )
        print(f"medians (load average {os.getloadavg()[0]:.1f}):")
        for name, found in passes.items():
            print(
                f"{name:7} {statistics.median(p.imports_s for p in found):9.2f}  "
                f"{statistics.median(p.full_s for p in found):9.2f}  "
                f"{statistics.median(p.one_cell_s for p in found):10.2f}  "
                f"{statistics.median(p.per_cell_ms for p in found):11.1f}"
            )


if __name__ == "__main__":
    main()
