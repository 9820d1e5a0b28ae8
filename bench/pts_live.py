"""bench/pts_live: what volbench itself costs while fio runs a large PTS round.

``--test iops`` (default): ``volbench pts iops`` with the whole matrix (8 block sizes
x 7 R/W mixes = 56 cells, TC 4 x QD 32) at 1 s cells, one round (``--max-rounds 1``).
``--test dirth`` / ``--test ecw``: ``volbench pts dirth|ecw --toio-grid
32,16,8,6,4,2,1 --max-rounds 1``: WIPC, one steady-state round (one cell at TC 32 x QD
32) and the demand-intensity sweep, every TC x QD of the grid (DIRTH 7 x 7 = 49 cells,
ECW 6 x 6 = 36, up to 32 jobs x QD 32 each). Each on a 1 GiB zram device this script
creates (hot_add; removed at the end), ``--no-purge``. zram has 4 KiB logical blocks,
so volbench leaves the matrix's 0.5 KiB column out (49 IOPS cells); ``--tmpfs`` runs on
a 1 GiB file on a tmpfs this script mounts (512 B I/O: all 56 cells); ``--loop-shm``
on a loop device over a 1 GiB image file in /dev/shm (``losetup --direct-io=on``: tmpfs
takes direct I/O since Linux 6.6, ``losetup -l`` shows DIO 1 on 6.18; 512 B logical
blocks: all 56 cells), detached and the image removed at the end.

The *round* is the IOPS steady-state round, or the DIRTH/ECW sweep. Measured from
/proc of the volbench process itself (not its fio children), sampled every 0.2 s and
once more when it has exited, before it is reaped (its whole CPU): CPU
time (utime + stime, fields 14 + 15 of /proc/PID/stat), over the whole command and
during the round (from the end of the fio process before the round to fio's end of
its last cell: the live display, ETA and stall watch); peak resident memory (VmHWM of
/proc/PID/status), at the round's end and over the whole command (the final report
included). From the stored run (``volbench show latest --format json``): the stalls
it stored (a zram device never stops completing I/O: any stall is false) and, from
fio's raw outputs, the round's wall time (fio's ``timestamp_ms`` of its last cell
minus that of the fio process before it) against the sum of fio's own runtimes of its
cells (``job_runtime``, the longest clone of each cell): idle ms per cell = (wall -
runtimes) / cells, the price of one fio process per cell (now) or of fio's stonewall
between cells (before). A second run sends SIGINT ``--interrupt-after`` seconds after
fio started the round's first cell (seen among volbench's children) and times how
long volbench takes to exit.

Side by side in one run: this tree's ``src`` (or ``--tree DIR``) and, with
``--baseline DIR`` (the ``src`` folder of another checkout, e.g. ``git worktree add
/tmp/old COMMIT``), that code, and each ``--other NAME=DIR`` too. Root needed (zram;
the tmpfs mount; the loop device).
Usage: python bench/pts_live.py [--test iops|dirth|ecw] [--tmpfs|--loop-shm] [--baseline DIR]
       [--other NAME=DIR]... [--tree DIR] [--cell-seconds S] [--interrupt-after S]
       [--interrupt-only|--round-only] [--pairs N] [--bytecode cold|warm] [--json FILE]
       [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from overhead import zram_device

TICKS = os.sysconf("SC_CLK_TCK")
FULL_GRID = "32,16,8,6,4,2,1"

TESTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "iops": (("iops",), "ss", "PTS IOPS, 56 cells x TC 4 x QD 32"),
    "dirth": (("dirth", "--toio-grid", FULL_GRID), "sweep", "DIRTH sweep, 49 cells TC x QD 1..32"),
    "ecw": (("ecw", "--toio-grid", FULL_GRID), "sweep", "ECW sweep, 36 cells TC x QD 1..32"),
}
"""Test -> (its `volbench pts` arguments, the phase of the measured round, title)."""


@dataclass(frozen=True)
class Sample:
    at: float  # time.time()
    cpu_s: float
    hwm_mib: float


@dataclass(frozen=True)
class Measured:
    wall_s: float  # whole command; after SIGINT: seconds from SIGINT to exit
    cpu_s: float
    peak_mib: float
    stalls: int
    exit_code: int
    round_pct: float = math.nan  # CPU share during the round
    round_mib: float = math.nan  # VmHWM at the round's end
    cells: int = 0
    round_s: float = math.nan  # the round's wall time (fio's clocks)
    busy_s: float = math.nan  # fio's own runtimes of its cells
    cut: str = ""  # the cell fio ran when SIGINT came
    fio_stop_s: float = math.nan  # from SIGINT until volbench had no fio child left

    @property
    def idle_ms(self) -> float:
        return 1000 * (self.round_s - self.busy_s) / self.cells if self.cells else math.nan


@contextlib.contextmanager
def tmpfs_dir(size_bytes: int) -> Iterator[Path]:
    """A tmpfs of this run's own, mounted on a new folder (unmounted and removed at the
    end): a file on it takes 512 B direct I/O (volbench creates no file under /dev, and
    /dev/shm is shared with others)."""
    with tempfile.TemporaryDirectory(prefix="pts-live-tmpfs-") as folder:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_bytes}", "pts-live", folder], check=True
        )
        try:
            yield Path(folder)
        finally:
            subprocess.run(["umount", folder], check=True)


@contextlib.contextmanager
def shm_loop(size_bytes: int) -> Iterator[Path]:
    """A loop device over an image file of this run's own in /dev/shm (detached and the
    image removed at the end, also when the run fails)."""
    with tempfile.NamedTemporaryFile(prefix="pts-live-", suffix=".img", dir="/dev/shm") as image:
        image.truncate(size_bytes)
        device = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", image.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        try:
            yield Path(device)
        finally:
            subprocess.run(["losetup", "-d", device], check=False)


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


def _exited(pid: int) -> bool:
    """Whether process ``pid`` (a child of this one) has exited; it is left unreaped,
    so that /proc still holds its own CPU times in full. ``os.wait4``'s figure would not
    do: it adds the CPU of every child the process reaped (fio's)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _children(pid: int) -> list[str]:
    """The pids of ``pid``'s children (each of its threads' children)."""
    found: list[str] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += (task / "children").read_text().split()
        except OSError:
            continue
    return found


def _fio_cells(pid: int) -> list[str]:
    """Job names in the job files of ``pid``'s running fio children (``[name]`` lines)."""
    names: list[str] = []
    for child in _children(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            job = Path(argv[-2].decode() if argv[-1] == b"" else argv[-1].decode())
            text = job.read_text() if job.suffix == ".fio" else ""
        except (OSError, IndexError, UnicodeDecodeError):
            continue
        sections = [line.strip()[1:-1] for line in text.splitlines() if line.startswith("[")]
        names += [name for name in sections if name != "global"]
    return names


def _document(text: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(text[text.find("{") : text.rfind("}") + 1])
    return found


def _round_figures(
    outputs: list[str], test: str, phase: str
) -> tuple[int, float, float, float, float]:
    """(cells, round wall s, fio runtimes s, round start, round end (epoch s)) of the
    round from fio's raw outputs of the run."""
    marker = f"{test}.{phase}."
    ends: list[tuple[float, bool]] = []  # (fio's end, part of the round)
    busy: dict[str, float] = {}
    for text in outputs:
        doc = _document(text)
        inside = False
        for job in doc.get("jobs", []):
            if job["jobname"].startswith(marker):
                inside = True
                name = job["jobname"]
                busy[name] = max(busy.get(name, 0.0), float(job["job_runtime"]))
        ends.append((doc["timestamp_ms"] / 1000, inside))
    mine = [t for t, inside in ends if inside]
    if not mine:
        return 0, math.nan, math.nan, math.nan, math.nan
    before = [t for t, inside in ends if not inside and t < min(mine)]
    start = max(before) if before else math.nan
    return len(busy), max(mine) - start, sum(busy.values()) / 1000, start, max(mine)


WARM_UP = (
    "import importlib, pkgutil, volbench\n"
    "for m in pkgutil.walk_packages(volbench.__path__, 'volbench.'):\n"
    "    try:\n"
    "        importlib.import_module(m.name)\n"
    "    except Exception:\n"
    "        pass\n"
)
"""Imports every module of a tree (and what they import), so that their bytecode is
written (``--bytecode warm``)."""


def bytecode_env(bytecode: str, work: Path) -> dict[str, str]:
    """The environment of every command: as this process's (``cold``: with
    ``PYTHONDONTWRITEBYTECODE=1`` and no bytecode cached, each command compiles every
    module it imports, volbench's and its libraries'), or (``warm``) reading bytecode
    written beforehand into a folder of this run (``PYTHONPYCACHEPREFIX``), as an
    installed volbench does."""
    env = dict(os.environ)
    if bytecode == "warm":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def warm(src: Path, env: dict[str, str]) -> None:
    """Write the bytecode of ``src``'s volbench and of the libraries it imports."""
    subprocess.run(
        [sys.executable, "-c", WARM_UP],
        env={**env, "PYTHONPATH": str(src)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )


def pts_round(
    args: Sequence[str], target: Sequence[str], cell_s: float, runs: Path, rounds: int = 1
) -> list[str]:
    """``volbench pts ARGS TARGET``: ``rounds`` rounds at most (one by default) of
    ``cell_s`` cells, no purge, its fio files in ``runs``; the command line of every
    bench that runs a PTS round (this one, ``sampler_pts``, ``pts_overhead``,
    ``pts_replay_cpu``)."""
    return [
        *(sys.executable, "-m", "volbench", "pts", *args, *target),
        *("--cell-seconds", f"{cell_s:g}", "--max-rounds", str(rounds), "--no-purge"),
        *("--runs-dir", str(runs)),
    ]


def run(
    src: Path,
    target: list[str],
    work: Path,
    test: str,
    cell_s: float,
    interrupt_after: float | None,
    base_env: dict[str, str],
) -> Measured:
    args, phase, _ = TESTS[test]
    db = work / f"{src.parent.name}-{time.monotonic_ns()}.db"
    env = {**base_env, "PYTHONPATH": str(src), "VOLBENCH_DB": str(db)}
    command = pts_round(args, target, cell_s, work / "runs")
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples: list[Sample] = []
    marker = f"{test}.{phase}."
    round_seen: float | None = None
    sent_at: float | None = None
    fio_left: float | None = None  # fio still running this late after SIGINT
    cut = ""
    while not _exited(proc.pid):
        found = _sample(proc.pid)
        if found:
            samples.append(Sample(time.time(), *found))
        if interrupt_after is not None and sent_at is None:
            running = set(_fio_cells(proc.pid))
            if round_seen is None and any(c.startswith(marker) for c in running):
                round_seen = time.monotonic()
            if round_seen is not None and time.monotonic() - round_seen > interrupt_after:
                cut = ",".join(sorted(running)) if len(running) < 3 else "the round"
                proc.send_signal(signal.SIGINT)  # the volbench this bench started
                sent_at = time.monotonic()
        if sent_at is not None and _children(proc.pid):
            fio_left = time.monotonic()
        time.sleep(0.2 if sent_at is None else 0.02)
    ended = time.monotonic()
    # the exited process, not yet reaped: its CPU in full (VmHWM: a zombie has none, 0)
    final = _sample(proc.pid)
    if final is not None:
        samples.append(Sample(time.time(), final[0], 0.0))
    proc.wait()
    # VmHWM only grows
    last = Sample(
        samples[-1].at if samples else 0.0,
        max((s.cpu_s for s in samples), default=0.0),
        max((s.hwm_mib for s in samples), default=0.0),
    )
    doc: dict[str, Any] = {}
    if db.exists():
        shown = subprocess.run(
            [sys.executable, "-m", "volbench", "show", "latest", "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if shown.returncode == 0:
            doc = json.loads(shown.stdout)
    wall = ended - (sent_at if sent_at is not None else started)
    fio_stop = (fio_left - sent_at) if fio_left is not None and sent_at is not None else 0.0
    measured = Measured(
        wall,
        last.cpu_s,
        last.hwm_mib,
        len(doc.get("stalls", [])),
        proc.returncode,
        cut=cut,
        fio_stop_s=fio_stop if sent_at is not None else math.nan,
    )
    if interrupt_after is not None:
        return measured
    cells, round_s, busy_s, start, end = _round_figures(doc.get("fio_outputs", []), test, phase)
    inside = [s for s in samples if start <= s.at <= end]
    pct = math.nan
    if len(inside) >= 2 and inside[-1].at > inside[0].at:
        pct = 100 * (inside[-1].cpu_s - inside[0].cpu_s) / (inside[-1].at - inside[0].at)
    return dataclasses.replace(
        measured,
        round_pct=pct,
        round_mib=inside[-1].hwm_mib if inside else math.nan,
        cells=cells,
        round_s=round_s,
        busy_s=busy_s,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", choices=sorted(TESTS), default="iops")
    parser.add_argument("--baseline", type=Path, default=None, help="src of the code before")
    parser.add_argument(
        "--other",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="src of more code to run side by side (after the baseline, before this tree)",
    )
    parser.add_argument(
        "--tree",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "src",
        help="src of the code measured as now (default: this checkout's)",
    )
    parser.add_argument("--cell-seconds", type=float, default=1.0)
    parser.add_argument(
        "--tmpfs",
        action="store_true",
        help="a 1 GiB file on a tmpfs of its own instead of zram (512 B I/O: zram's 4 KiB "
        "logical blocks leave the IOPS matrix's 0.5 KiB column out, 49 cells, not 56)",
    )
    parser.add_argument(
        "--loop-shm",
        action="store_true",
        help="a loop device over a 1 GiB image in /dev/shm instead of zram (all 56 cells)",
    )
    parser.add_argument("--interrupt-after", type=float, default=10.0)
    parser.add_argument("--interrupt-only", action="store_true", help="only the Ctrl-C runs")
    parser.add_argument("--round-only", action="store_true", help="no Ctrl-C runs")
    parser.add_argument("--pairs", type=int, default=1, help="runs of each code, alternating")
    parser.add_argument(
        "--bytecode",
        choices=("cold", "warm"),
        default="cold",
        help="cold: this environment as it is (with PYTHONDONTWRITEBYTECODE=1 every command "
        "compiles what it imports); warm: bytecode written beforehand, as installed",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the stores and fio files here"
    )
    args = parser.parse_args()
    # Started in the background by a shell without job control, this process and so
    # volbench would ignore SIGINT: volbench gets Python's default handler back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    trees = {"now": args.tree}
    others = dict(o.split("=", 1) for o in args.other)
    trees = {name: Path(src) for name, src in others.items()} | trees
    if args.baseline:
        trees = {"before": args.baseline, **trees}
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        tmpfs_dir(2 << 30) if args.tmpfs else contextlib.nullcontext() as folder,
        shm_loop(1 << 30) if args.loop_shm else contextlib.nullcontext() as loop,
        contextlib.nullcontext() if args.tmpfs or args.loop_shm else zram_device(1 << 30) as zram,
    ):
        if loop is not None:
            target = ["--target", str(loop), f"--destroy-data={loop}"]
            where = f"a loop device over a 1 GiB file in /dev/shm ({loop})"
        elif folder is not None:
            target = ["--target", f"{folder}/target.img", "--size", "1g"]
            where = "a 1 GiB file on a tmpfs"
        elif zram is None:
            sys.exit("bench/pts_live needs root and zram (or --tmpfs)")
        else:
            target = ["--target", str(zram), f"--destroy-data={zram}"]
            where = "zram 1 GiB"
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        env = bytecode_env(args.bytecode, work)
        if args.bytecode == "warm":
            for src in trees.values():
                warm(src, env)
        print(
            f"{TESTS[args.test][2]}, {args.cell_seconds:g} s cells, {where}, "
            f"{args.bytecode} bytecode, load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        header = (
            "code",
            "run",
            "wall s",
            "CPU s",
            "CPU %",
            "round %",
            "MiB rnd",
            "MiB all",
            "stalls",
            "exit",
            "cells",
            "round s",
            "fio s",
            "idle ms/cell",
            "over ms/cell",
            "load",
        )
        print(
            "{:7s} {:15s} {:>8s} {:>6s} {:>6s} {:>7s} {:>7s} {:>7s} {:>6s} {:>4s} {:>5s} "
            "{:>7s} {:>6s} {:>12s} {:>12s} {:>5s}".format(*header),
            flush=True,
        )
        for _ in range(args.pairs):
            for name, src in trees.items():
                after = args.interrupt_after
                runs = (("one round", None), (f"Ctrl-C at +{after:g} s", after))
                chosen = runs[1:] if args.interrupt_only else runs[:1] if args.round_only else runs
                for label, interrupt in chosen:
                    m = run(src, target, work, args.test, args.cell_seconds, interrupt, env)
                    share = 100 * m.cpu_s / m.wall_s if interrupt is None else math.nan
                    wall = f"{m.wall_s:8.1f}" if interrupt is None else f"{m.wall_s:7.2f}*"
                    over = 1000 * (m.round_s / m.cells - args.cell_seconds) if m.cells else math.nan
                    load = os.getloadavg()[0]
                    print(
                        f"{name:7s} {label:15s} {wall} {m.cpu_s:6.2f} {share:6.2f} "
                        f"{m.round_pct:7.1f} {m.round_mib:7.0f} {m.peak_mib:7.0f} {m.stalls:6d} "
                        f"{m.exit_code:4d} {m.cells:5d} {m.round_s:7.2f} {m.busy_s:6.2f} "
                        f"{m.idle_ms:12.1f} {over:12.1f} {load:5.1f}"
                        + (
                            f"  (cut: {m.cut}; fio gone {m.fio_stop_s:.2f} s after SIGINT)"
                            if m.cut
                            else ""
                        ),
                        flush=True,
                    )
                    rows.append(
                        {
                            "code": name,
                            "src": str(src),
                            "run": label,
                            "load": load,
                            "bytecode": args.bytecode,
                            **dataclasses.asdict(m),
                        }
                    )
        print(
            "* seconds from SIGINT to exit (SIGINT sent that long after fio started the "
            "round's first cell); round %: CPU share during the round; MiB rnd: VmHWM at "
            "the round's end; round s: its wall time by fio's clocks; fio s: fio's runtimes "
            "of its cells; over ms/cell: round s / cells - the cell length; load: the "
            "1-minute load average as the run ended"
        )
    if args.json:
        args.json.write_text(json.dumps({"test": args.test, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
