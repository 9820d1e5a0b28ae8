"""Behaviour unchanged across a restructuring: one run of every plan kind, and what
volbench prints of them, compared before and after.

``make DIR`` (root, fio, losetup) runs every plan kind once with the real fio on a
64 MiB loop device backed by a file in ``/dev/shm`` (quick, sweep, PTS IOPS on two
block sizes and two mixes at 1 s cells, PTS WSAT at two 1 s samples, QoS verify of
three tenants in cgroups of its own, limits at a 20 s budget, iometer, scan, a recipe
at a tiny scale) into the store ``DIR/store.db``, and keeps each run's fio outputs
(``DIR/replay/RUN``). A PTS run's outputs begin with its probe (round 0, no result
rows: the 128 KiB sequential write that measures the speed its estimate and WSAT's
use), which its replay needs: ``make`` stops when a PTS run stored none.

``dump DIR OUT`` writes into ``OUT`` what this checkout prints of that store: each
run's ``show``, ``explain`` and ``report`` (HTML) and ``runs``, each plan's
``--dry-run`` on the same loop device, and the same plans run again through the
replay runner (``--replay``, fio's recorded outputs of ``make``) into a store of
their own, with those runs' ``show`` and ``explain``; for each PTS run (made and
replayed), its probe: the round that holds it, its job and write speed, and the speed
the run recorded. Time stamps, run folders, durations measured by the clock and the
loop device's name are masked.

Run ``dump`` with the code before the change and after it, on the same ``DIR``, and
``compare`` the two ``OUT`` folders: it prints every differing line. Expected to
differ: the replayed runs' "what limited each test" (the host and the loop device are
sampled live while the replay runs) and their durations in whole seconds.

    sudo .venv/bin/python bench/behaviour_snapshot.py make /tmp/snap
    .venv/bin/python bench/behaviour_snapshot.py dump /tmp/snap /tmp/before
    (change the code)
    .venv/bin/python bench/behaviour_snapshot.py dump /tmp/snap /tmp/after
    .venv/bin/python bench/behaviour_snapshot.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

VOLBENCH = str(Path(sys.executable).with_name("volbench"))
LOOP_MIB = 64


@dataclass(frozen=True)
class Plan:
    """One plan kind: its name in the outputs, its command line before the target,
    the option naming the target, what follows it, and whether it replays."""

    name: str
    command: tuple[str, ...]
    after: tuple[str, ...] = ()
    target_option: str = "--target"
    replays: bool = True


def plans(qos_plan: Path) -> tuple[Plan, ...]:
    return (
        Plan("quick", ("run", "quick"), ("--runtime", "1s", "--ramp-time", "0")),
        Plan(
            "sweep",
            ("run", "sweep"),
            ("--iodepth", "1,4", "--numjobs", "1,2", "--runtime", "1s", "--ramp-time", "0"),
        ),
        Plan(
            "pts",
            ("pts", "iops"),
            (
                "--cell-seconds",
                "1s",
                "--max-rounds",
                "5",
                "--threads",
                "1",
                "--iodepth",
                "4",
                "--block-sizes",
                "4k,64k",
                "--mixes",
                "100/0,0/100",
            ),
        ),
        Plan("pts-wsat", ("pts", "wsat"), ("--cell-seconds", "1s", "--wsat-max-rounds", "2")),
        Plan(
            "qos", ("qos", "verify", str(qos_plan)), ("--duration", "1s"), "--device", replays=False
        ),
        Plan("limits", ("run", "limits"), ("--budget", "20s")),
        Plan(
            "iometer",
            ("run", "iometer"),
            ("--workers", "1,2", "--runtime", "1s", "--ramp-time", "0"),
        ),
        Plan("scan", ("run", "scan"), ("--zones", "4", "--zone-time", "1s", "--access-time", "1s")),
        Plan("recipe", ("run", "recipe", "tencent-cbs"), ("--scale", "0.002"), replays=False),
    )


def volbench(
    env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([VOLBENCH, *args], capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise SystemExit(f"volbench {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def environment(folder: Path) -> dict[str, str]:
    return {
        **os.environ,
        "XDG_DATA_HOME": str(folder / "data"),
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "TZ": "UTC",
    }


def attach(folder: Path) -> str:
    image = Path("/dev/shm") / f"volbench-snapshot-{os.getpid()}.img"
    with image.open("wb") as f:
        f.truncate(LOOP_MIB << 20)
    device = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (folder / "device").write_text(f"{device} {image}\n")
    return device


def detach(folder: Path) -> None:
    device, image = (folder / "device").read_text().split()
    subprocess.run(["losetup", "-d", device], check=False)
    Path(image).unlink(missing_ok=True)


def make(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=False)
    env = environment(folder)
    db, runs = str(folder / "store.db"), str(folder / "runs")
    qos_plan = folder / "qos-plan.json"
    plan = volbench(
        env,
        "qos",
        "plan",
        "--capability",
        "iops=3000,bps=100m",
        "--tenant",
        "qos-t40:40",
        "--tenant",
        "qos-t60:60",
        "--volume-size",
        "100",
        "--format",
        "json",
    )
    qos_plan.write_text(plan.stdout)
    device = attach(folder)
    try:
        for one in plans(qos_plan):
            print(f"make: {one.name}", flush=True)
            extra = ("--destroy-data", device) if one.target_option == "--target" else ()
            volbench(
                env,
                *one.command,
                one.target_option,
                device,
                *one.after,
                *extra,
                "--db",
                db,
                "--runs-dir",
                runs,
            )
    finally:
        detach(folder)
    keep_outputs(folder)
    for run_id, probe in probes(folder / "store.db").items():
        if probe.job != PROBE:
            raise SystemExit(f"make: PTS run {run_id} stored no probe (round 0): {probe}")


def keep_outputs(folder: Path) -> None:
    """Each run's fio outputs, in round order, as the replay runner reads them."""
    with sqlite3.connect(folder / "store.db") as db:
        rows = db.execute(
            "SELECT run_id, round, raw_json FROM rounds ORDER BY run_id, round"
        ).fetchall()
    for run_id, round_no, raw in rows:
        where = folder / "replay" / str(run_id)
        where.mkdir(parents=True, exist_ok=True)
        (where / f"{round_no:04d}.json").write_text(raw)


PROBE = "seq-write-probe"
"""The job name of a PTS run's probe (``volbench.plans.pts.driver.PROBE``)."""


@dataclass(frozen=True)
class Probe:
    """What a stored PTS run holds of its probe: the job of its round 0 (no result rows
    in it), fio's write speed in it and the speed the run recorded (bytes/s)."""

    job: str
    fio_bytes_per_s: float
    recorded_bytes_per_s: float

    def text(self) -> str:
        return (
            f"round 0: job {self.job}, fio write bw_bytes {self.fio_bytes_per_s:.0f},"
            f" recorded seq_write_bytes_per_s {self.recorded_bytes_per_s:.0f}\n"
        )


def probes(db: Path) -> dict[int, Probe]:
    """The probe of each PTS run in the store ``db`` (read with SQL: the code before and
    after a change reads the same store)."""
    found = {}
    with sqlite3.connect(db) as store:
        runs = store.execute("SELECT id, settings FROM runs WHERE plan = 'pts' ORDER BY id")
        for run_id, settings in runs.fetchall():
            first = store.execute(
                "SELECT raw_json FROM rounds WHERE run_id = ? AND round = 0", (run_id,)
            ).fetchone()
            rows = store.execute(
                "SELECT COUNT(*) FROM results WHERE run_id = ? AND round = 0", (run_id,)
            ).fetchone()[0]
            recorded = float(json.loads(settings).get("seq_write_bytes_per_s", 0.0))
            if first is None or rows:
                found[run_id] = Probe("none", 0.0, recorded)
                continue
            raw = first[0]
            jobs = json.loads(raw[raw.find("{") : raw.rfind("}") + 1]).get("jobs", [])
            names = ",".join(j["jobname"] for j in jobs)
            speed = sum(float(j.get("write", {}).get("bw_bytes", 0)) for j in jobs)
            found[run_id] = Probe(names, speed, recorded)
    return found


MASKS = (
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"), "<time>"),
    (re.compile(r'"(uuid|boot)": "[0-9a-f-]+"'), r'"\1": "<id>"'),
    (re.compile(r'"number": "\d+:\d+"'), '"number": "<dev>"'),
    (re.compile(r'"diskseq": \d+'), '"diskseq": <n>'),
    (re.compile(r"inode \d+"), "inode <n>"),
    (re.compile(r"\d{8}T\d{6}-[0-9a-f]{12}"), "<workdir>"),
    (re.compile(r"/dev/loop\d+"), "/dev/loopN"),
    (re.compile(r"volbench-snapshot-\d+"), "volbench-snapshot-N"),
    (re.compile(r"/tmp/[^\s\"'\\]+"), "<tmp>"),
)


def masked(text: str, folder: Path) -> str:
    text = text.replace(str(folder), "<dir>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def run_ids(env: dict[str, str], db: str) -> list[tuple[int, str]]:
    listed = json.loads(volbench(env, "runs", "--db", db, "--format", "json").stdout)["runs"]
    return sorted((int(r["id"]), str(r["plan"])) for r in listed)


def dump_store(env: dict[str, str], db: str, out: Path, folder: Path, prefix: str) -> None:
    for fmt in ("table", "json"):
        proc = volbench(env, "runs", "--db", db, "--format", fmt)
        (out / f"{prefix}runs.{fmt}").write_text(masked(proc.stdout, folder))
    for run_id, plan in run_ids(env, db):
        for command in ("show", "explain"):
            for fmt in ("table", "json"):
                proc = volbench(env, command, str(run_id), "--db", db, "--format", fmt, check=False)
                text = f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
                (out / f"{prefix}{run_id}-{plan}.{command}.{fmt}").write_text(masked(text, folder))
        if plan == "pts":
            probe = probes(Path(db))[run_id]
            (out / f"{prefix}{run_id}-{plan}.probe").write_text(probe.text())
        if not prefix:
            html = out / f"{run_id}-{plan}.report.html"
            volbench(env, "report", str(run_id), "--db", db, "-o", str(html))
            html.write_text(masked(html.read_text(), folder))


def dump(folder: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=False)
    env = environment(folder)
    dump_store(env, str(folder / "store.db"), out, folder, "")
    scratch = out / "scratch"
    scratch.mkdir()
    env = environment(scratch)
    device = attach(scratch)
    try:
        made = [run_id for run_id, _ in run_ids(env, str(folder / "store.db"))]  # in make's order
        db, runs = str(scratch / "store.db"), str(scratch / "runs")
        for one, stored in zip(plans(folder / "qos-plan.json"), made, strict=True):
            target = (one.target_option, device)
            extra = ("--destroy-data", device) if one.target_option == "--target" else ()
            proc = volbench(env, *one.command, *target, *one.after, "--dry-run", check=False)
            text = f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
            (out / f"dry-run.{one.name}").write_text(masked(text, scratch))
            if one.replays:
                replay = folder / "replay" / str(stored)
                proc = volbench(
                    env,
                    *one.command,
                    *target,
                    *one.after,
                    *extra,
                    "--db",
                    db,
                    "--runs-dir",
                    runs,
                    "--replay",
                    str(replay),
                    "--format",
                    "json",
                    check=False,
                )
                text = f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
                (out / f"replayed.{one.name}").write_text(masked(text, scratch))
        dump_store(env, db, out, scratch, "replayed-")
    finally:
        detach(scratch)
        shutil.rmtree(scratch)


def compare(before: Path, after: Path) -> int:
    """Print each file of ``before`` whose text differs in ``after``, with its lines;
    return how many differ."""
    differing = 0
    for old in sorted(before.iterdir()):
        new = after / old.name
        lines = difflib.unified_diff(
            old.read_text().splitlines(),
            new.read_text().splitlines() if new.exists() else [],
            str(old),
            str(new),
            lineterm="",
            n=0,
        )
        shown = list(lines)
        if shown:
            differing += 1
            print("\n".join(shown))
    print(f"{differing} of {len(list(before.iterdir()))} files differ")
    return differing


def main(argv: Sequence[str]) -> None:
    if len(argv) == 2 and argv[0] == "make":
        make(Path(argv[1]).resolve())
    elif len(argv) == 3 and argv[0] == "dump":
        dump(Path(argv[1]).resolve(), Path(argv[2]).resolve())
    elif len(argv) == 3 and argv[0] == "compare":
        compare(Path(argv[1]), Path(argv[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
