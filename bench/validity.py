"""False validity marks on healthy runs: how many tests of plans run the way the docs
advise carry a mark (BENCHMARKS.md).

Every run is healthy: nothing caches, shares or starves the volume on purpose, and the
volume has a rate of its own, as a cloud volume has: each loop device is capped at
``--iops`` reads and writes and ``--mbps`` MB/s each way by a blkio cgroup (v1) this
script makes (``volbench-bench-validity-PID``, removed after), whose limits every
command it runs is under. Uncapped, a loop device over RAM is as fast as the CPU lets
fio be, so on a busy machine every test is truly short of CPU (its first run here:
6 of 6 quick tests marked "starved", fio's threads waiting for a CPU 66 to 83 % of the
time they could run, at a load average of 9 on 2 CPUs).

1. A loop device (``losetup --direct-io=on``) over a sparse image file in /dev/shm,
   written first: ``run quick --fill`` (the whole device once), then on the same volume
   (its writes are in the store: the "blocks never written" check reads them)
   ``run quick --profile diskmark``, a ``randread`` and a ``randwrite`` sweep, and
   ``pts iops`` at 1 s cells (``--no-purge``; its WIPC writes the device twice).
2. A scratch file volbench lays out (``--target`` a missing file, ``--size``) on an ext4
   file system on a second capped loop device (mounted in a new folder in /tmp: volbench
   lays out no file under /dev/): ``run quick``, then a ``randrw`` sweep.

Then ``volbench show RUN --format json`` of each run: every test's verdict under
``validity`` (with the store's history of the volume, as ``show`` gives it), counted by
mark kind; what could not be checked is counted by reason. The machine's load average
(/proc/loadavg) is read before and after each run: other work shares the machine (the
"under load" case). Every figure printed is from fio's output as volbench stores it.

Usage: ``python bench/validity.py [--size 256m] [--runtime 3s] [--pts-rounds 3]
[--iops 3000] [--mbps 200]`` (root; loop devices, blkio cgroup v1, mkfs.ext4; everything
in a new folder in /dev/shm, removed at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Tally:
    """What the runs' verdicts say: tests, marked tests, marks by kind, reasons a check
    could not run by reason, and each marked test (run, plan, test, kinds)."""

    tests: int = 0
    marked: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    unchecked: Counter[str] = field(default_factory=Counter)
    marked_tests: list[str] = field(default_factory=list)
    by_plan: Counter[str] = field(default_factory=Counter)
    loads: list[float] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    fio_s: float = 0.0


def load() -> float:
    """The 1-minute load average (/proc/loadavg)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


BLKIO = Path("/sys/fs/cgroup/blkio")


@contextmanager
def loop_device(image: Path, size_bytes: int) -> Iterator[str]:
    """A loop device with direct I/O over ``image`` (made sparse, ``size_bytes`` long:
    nothing written yet), detached after."""
    with image.open("wb") as made:
        made.truncate(size_bytes)
    device = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@contextmanager
def capped_group(iops: int, mbps: int) -> Iterator[Path]:
    """The blkio cgroup ``volbench-bench-validity-PID``; :func:`cap` sets its limits on a
    device. Removed after, once its processes have ended (30 s at most)."""
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        raise SystemExit("needs blkio cgroup v1 throttling (/sys/fs/cgroup/blkio)")
    group = BLKIO / f"volbench-bench-validity-{os.getpid()}"
    group.mkdir()
    try:
        yield group
    finally:
        deadline = time.monotonic() + 30
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        group.rmdir()


def cap(group: Path, device: str, iops: int, mbps: int) -> None:
    """Cap ``device``'s reads and writes by ``group``'s processes at ``iops`` IOPS and
    ``mbps`` MB/s (10^6 bytes/s) each."""
    rdev = os.stat(device).st_rdev
    numbers = f"{os.major(rdev)}:{os.minor(rdev)}"
    for direction in ("read", "write"):
        (group / f"blkio.throttle.{direction}_iops_device").write_text(f"{numbers} {iops}")
        (group / f"blkio.throttle.{direction}_bps_device").write_text(
            f"{numbers} {mbps * 1_000_000}"
        )


GROUP: list[str] = []
"""The command prefix that moves each volbench command into the capped cgroup."""


def volbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GROUP, sys.executable, "-m", "volbench", *args],
        env=env,
        capture_output=True,
        text=True,
    )


def run_plan(env: dict[str, str], tally: Tally, name: str, *args: str) -> None:
    """One run (``args`` after ``volbench``), then its tests' verdicts counted."""
    before = load()
    started = time.monotonic()
    done = volbench(env, *args)
    took = time.monotonic() - started
    after = load()
    tally.loads += [before, after]
    if done.returncode != 0:
        tally.failed.append(f"{name} ({done.returncode}): {done.stderr.strip()[-600:]}")
        print(f"{name} FAILED: {tally.failed[-1]}", flush=True)
        return
    shown = volbench(env, "show", "latest", "--format", "json")
    if shown.returncode != 0:
        raise SystemExit(f"show failed: {shown.stderr.strip()[-800:]}")
    document: dict[str, Any] = json.loads(shown.stdout)
    tests = document["validity"]
    tally.fio_s += took
    marked = 0
    for test in tests:
        tally.tests += 1
        tally.by_plan[name] += 1
        for reason in test["unchecked"]:
            tally.unchecked[reason] += 1
        if test["valid"]:
            continue
        marked += 1
        kinds = [m["kind"] for m in test["marks"]]
        tally.kinds.update(kinds)
        first = test["marks"][0]
        tally.marked_tests.append(
            f"{name} round {test['round']} {test['test']}: {', '.join(kinds)}: "
            f"{first['problem']} | {' | '.join(first['evidence'])} | {first['figures']}"
        )
        print(f"marked: {tally.marked_tests[-1]}", flush=True)
    tally.marked += marked
    print(
        f"{name}: {len(tests)} tests, {marked} marked, {took:.0f} s,"
        f" load {before:.1f} -> {after:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="256m", help="the loop device's and file's size")
    parser.add_argument("--runtime", default="3s", help="quick's and the sweeps' per test")
    parser.add_argument("--pts-rounds", type=int, default=3)
    parser.add_argument("--iops", type=int, default=3000, help="each loop device's cap")
    parser.add_argument("--mbps", type=int, default=200, help="each loop device's cap")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (loop devices)")
    tally = Tally()
    size = int(args.size.rstrip("m")) << 20
    with (
        tempfile.TemporaryDirectory(prefix="bench-validity-", dir="/dev/shm") as folder,
        capped_group(args.iops, args.mbps) as group,
    ):
        GROUP[:] = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group)]
        env = {**os.environ, "VOLBENCH_DB": str(Path(folder) / "store.db")}
        runs = ("--runs-dir", str(Path(folder) / "runs"))
        short = ("--runtime", args.runtime, "--ramp-time", "1s")
        with loop_device(Path(folder) / "loop.img", size) as device:
            cap(group, device, args.iops, args.mbps)
            target = ("--target", device, *runs)
            run_plan(env, tally, "quick --fill", "run", "quick", *target, *short, "--fill")
            run_plan(
                env,
                tally,
                "quick diskmark",
                "run",
                "quick",
                "--profile",
                "diskmark",
                *target,
                *short,
            )
            for rw in ("randread", "randwrite"):
                run_plan(
                    env,
                    tally,
                    f"sweep {rw}",
                    "run",
                    "sweep",
                    "--rw",
                    rw,
                    "--iodepth",
                    "1-32",
                    "--numjobs",
                    "1,2",
                    *target,
                    *short,
                )
            run_plan(
                env,
                tally,
                "pts iops",
                "pts",
                "iops",
                *target,
                "--cell-seconds",
                "1",
                "--max-rounds",
                str(args.pts_rounds),
                "--no-purge",
            )
        # volbench lays out no file under /dev/ (its safety check): mounted elsewhere
        mount = Path(tempfile.mkdtemp(prefix="bench-validity-mnt-"))
        with loop_device(Path(folder) / "fs.img", 2 * size) as device:
            subprocess.run(["mkfs.ext4", "-q", device], check=True)
            subprocess.run(["mount", device, str(mount)], check=True)
            try:
                cap(group, device, args.iops, args.mbps)
                scratch = ("--target", str(mount / "scratch.img"), "--size", args.size, *runs)
                run_plan(env, tally, "quick (scratch file)", "run", "quick", *scratch, *short)
                run_plan(
                    env,
                    tally,
                    "sweep randrw (scratch file)",
                    "run",
                    "sweep",
                    "--rw",
                    "randrw",
                    "--iodepth",
                    "1-32",
                    "--numjobs",
                    "1,2",
                    *scratch,
                    *short,
                )
            finally:
                subprocess.run(["umount", str(mount)], check=False)
                mount.rmdir()
    rate = tally.marked / tally.tests if tally.tests else 0.0
    print(
        f"\n{tally.tests} tests, {tally.marked} marked ({rate:.1%}); marks by kind:"
        f" {dict(tally.kinds) or 'none'}; runs took {tally.fio_s:.0f} s"
    )
    print(f"tests by run: {dict(tally.by_plan)}")
    print(
        f"load average (1 min) at the runs' starts and ends: min {min(tally.loads):.1f},"
        f" median {sorted(tally.loads)[len(tally.loads) // 2]:.1f}, max {max(tally.loads):.1f}"
        f" on {os.cpu_count()} CPUs; each device capped at {args.iops} IOPS and"
        f" {args.mbps} MB/s each way"
    )
    for reason, count in tally.unchecked.most_common():
        print(f"not checked on {count} test(s): {reason}")
    for line in tally.marked_tests:
        print(f"marked: {line}")
    for line in tally.failed:
        print(f"failed: {line}")


if __name__ == "__main__":
    main()
