"""Nothing measured is lost: volbench or fio killed at a random moment, then resumed.

Each plan runs every test in a fio process of its own, committed as it ends. After
SIGKILL of volbench (the run stays ``running`` in the store, but its process is
gone, so it shows as ``interrupted``) or of fio (the run fails with the tests fio
finished), ``volbench resume`` runs only what is missing. At the end every planned
test is stored exactly once, with fio's own figures from its round's raw JSON, and
rounds are numbered without gaps. The kill moments come from a seeded generator
printed with each case, so a failure can be replayed.

Only processes this test started are signalled (volbench by its Popen, fio by the
pid whose command line names this test's own folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import QUICK_TESTS, Volbench, finish
from test_cli_kill import fio_processes, wait_for

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

SHORT = ("--runtime", "500ms", "--ramp-time", "0", "--size", "16m")
PLANS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "quick": (("run", "quick", *SHORT), QUICK_TESTS),
    "sweep": (
        ("run", "sweep", "--rw", "randread", "--iodepth", "1,4", "--numjobs", "1,2", *SHORT),
        tuple(f"qd{qd}-jobs{jobs}" for jobs in (1, 2) for qd in (1, 4)),
    ),
    "iometer": (
        (
            "run",
            "iometer",
            "--spec",
            "8k-random-read",
            "--spec",
            "8k-random-write",
            "--workers",
            "1..2",
            *SHORT,
        ),
        tuple(f"8k-random-{rw}.w{n}" for rw in ("read", "write") for n in (1, 2)),
    ),
}
SEED = 20261124


def _start(
    volbench: Volbench, plan: str, target: Path, *extra: str
) -> tuple[subprocess.Popen[str], int]:
    args, tests = PLANS[plan]
    proc = volbench.start(
        *args, "--target", str(target), "--runs-dir", str(volbench.runs_dir), *extra
    )
    return proc, len(tests)


def _committed(volbench: Volbench) -> int:
    """How many tests of the newest run are stored (0 before the run is recorded)."""
    if not volbench.db.exists():
        return 0
    try:
        return len({r["test"] for r in volbench.stored()["results"]})
    except Exception:
        return 0


def _check_complete(volbench: Volbench, plan: str) -> None:
    """Every planned test stored once, figures equal to its round's raw JSON."""
    document = volbench.stored()
    assert document["status"] == "completed", document["error"]
    by_test: dict[str, set[int]] = {}
    for row in document["results"]:
        by_test.setdefault(row["test"], set()).add(row["round"])
    assert sorted(by_test) == sorted(PLANS[plan][1]), by_test
    assert all(len(rounds) == 1 for rounds in by_test.values()), by_test  # no duplicates
    outputs = [json.loads(raw) for raw in document["fio_outputs"]]
    for row in document["results"]:
        jobs = [j for j in outputs[row["round"]]["jobs"] if j["jobname"] == row["test"]]
        assert jobs, (row["test"], row["round"])
        fio_iops = sum(j[row["direction"]]["iops"] for j in jobs)
        assert row["iops"] == pytest.approx(fio_iops, rel=1e-9)
    for times in document["rounds"]:  # when each round ran: fio started, fio ended
        assert times["started_at"] and times["ended_at"], times
        assert times["started_at"] <= times["ended_at"] <= times["committed_at"]
    rounds = sorted({row["round"] for row in document["results"]})
    assert rounds == list(range(len(rounds))) or rounds[-1] < len(outputs)  # no gaps


@needs_fio
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_volbench_killed_at_a_random_moment_then_resumed(
    volbench: Volbench, tmp_path: Path, plan: str
) -> None:
    rng = random.Random(f"{SEED}-{plan}-volbench")
    target = tmp_path / "scratch.img"
    proc, planned = _start(volbench, plan, target)
    try:
        assert wait_for(lambda: _committed(volbench) >= 1, 60), "no test was committed"
        time.sleep(rng.uniform(0.0, 0.6))  # seeded: anywhere in the next test
    finally:
        proc.kill()  # SIGKILL of the volbench this test started
        finish(proc)
    assert wait_for(lambda: not fio_processes(tmp_path), 10), "fio outlived volbench"
    killed = volbench.stored()
    assert killed["status"] == "interrupted", killed["status"]  # not `running` forever
    assert "resume" in (killed["error"] or "")
    done = len({r["test"] for r in killed["results"]})
    assert 1 <= done <= planned
    listed = json.loads(volbench("runs", "--format", "json").stdout)["runs"]
    assert [r["status"] for r in listed] == ["interrupted"]
    resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    _check_complete(volbench, plan)


def _kill_fio(folder: Path) -> bool:
    """SIGKILL the fio processes of this test's folder; whether one was killed."""
    killed = False
    for pid in fio_processes(folder):
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)
            killed = True
    return killed


@needs_fio
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_fio_killed_keeps_the_finished_tests_then_resumed(
    volbench: Volbench, tmp_path: Path, plan: str
) -> None:
    rng = random.Random(f"{SEED}-{plan}-fio")
    target = tmp_path / "scratch.img"
    proc, _ = _start(volbench, plan, target)
    try:
        assert wait_for(lambda: _committed(volbench) >= 2, 60), "two tests never finished"
        time.sleep(rng.uniform(0.2, 0.8))  # seeded: anywhere in a later test (or between two)
        assert wait_for(lambda: _kill_fio(tmp_path), 10), "no fio to kill"
        done = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert done.returncode == 3, done.stderr
    failed = volbench.stored()
    assert failed["status"] == "failed"
    assert len({r["test"] for r in failed["results"]}) >= 2  # what fio finished is kept
    resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    _check_complete(volbench, plan)


@needs_fio
def test_a_live_run_is_not_resumed_and_a_completed_one_says_so(
    volbench: Volbench, tmp_path: Path
) -> None:
    # 3 s tests: the run outlives the resume command's start on a busy machine
    proc, _ = _start(volbench, "sweep", tmp_path / "scratch.img", "--runtime", "3s")
    try:
        assert wait_for(lambda: _committed(volbench) >= 1, 60)
        live = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
        assert live.returncode == 2 and "is still running (pid" in live.stderr, live.stderr
        assert volbench.stored()["status"] == "running"
    finally:
        finish(proc)
    done = volbench("resume", "latest")
    assert done.returncode == 2 and "is completed: nothing to resume" in done.stderr


def _log_lines(folder: Path) -> dict[tuple[str, str, int], list[list[int]]]:
    """[time, value] of every line of each per-second log fio wrote in ``folder``, by
    (test, kind, job), read here without volbench."""
    found = {}
    for path in folder.glob("*.log"):
        name, _, rest = path.name.rpartition("_")
        kind, job, _ = rest.split(".")
        lines = [line.split(",") for line in path.read_text().splitlines()]
        if lines:
            found[(name, kind, int(job))] = [[int(f[0]), int(f[1])] for f in lines]
    return found


def _figures(page: Path) -> dict[str, Any]:
    """The plotly figures of a report page, by chart id."""
    text = page.read_text().split('id="volbench-figures">')[1].split("</script>")[0]
    figures: dict[str, Any] = json.loads(text.replace("<\\/", "</"))
    return figures


@needs_fio
def test_two_databases_keep_their_runs_files_apart(tmp_path: Path) -> None:
    """Runs of two stores, both run 1, with the default runs folder: each keeps its own
    folder, and fio's per-second logs are stored with each run; with the runs folder
    deleted, each run's JSON and report still hold its own logs' values."""
    home = tmp_path / "home"
    env = {"XDG_DATA_HOME": str(home)}
    folders = []
    for name in ("a", "b"):
        volbench = Volbench(tmp_path / name)
        proc = volbench(
            "run",
            "sweep",
            "--target",
            str(tmp_path / f"{name}.img"),
            "--iodepth",
            "1",
            "--runtime",
            "2s",
            "--ramp-time",
            "0",
            "--size",
            "16m",
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        stored = volbench.stored()
        assert stored["id"] == 1
        folders.append(Path(stored["settings"]["logs_dir"]))
    assert folders[0] != folders[1] and all(f.parent == home / "volbench" / "runs" for f in folders)
    logs = []
    for folder, name in zip(folders, ("a", "b"), strict=True):
        job = (folder / "round-000" / "job.fio").read_text()
        # each folder holds its own run (fio reaches the file through volbench's hold)
        assert f"description=volbench target: {tmp_path / name}.img" in job
        logs.append(_log_lines(folder / "round-000"))
        assert {kind for _, kind, _ in logs[-1]} >= {"iops", "bw", "lat"}
    assert logs[0] != logs[1]

    shutil.rmtree(home / "volbench" / "runs")  # scratch space: the store has the series
    for name, lines in zip(("a", "b"), logs, strict=True):
        volbench = Volbench(tmp_path / name)
        series = volbench.stored()["series"]  # the document `show --format json` prints
        assert all(s["direction"] == "read" and s["round"] == 0 for s in series)
        assert {(s["test"], s["kind"], s["job"]): s["points"] for s in series} == lines
        assert {s["unit"] for s in series if s["kind"] == "bw"} == {"KiB/s"}
        page = tmp_path / f"{name}.html"
        proc = volbench("report", "1", "-o", str(page), env=env)
        assert proc.returncode == 0, proc.stderr
        figures = _figures(page)
        (iops,) = figures["run1-ts-iops"]["data"]
        assert iops["name"] == "qd1-jobs1 read"
        assert iops["y"] == [value for _, value in lines[("qd1-jobs1", "iops", 1)]]
        (kib,) = figures["run1-ts-mbps"]["data"]
        mbps = [value * 1024 / 1e6 for _, value in lines[("qd1-jobs1", "bw", 1)]]
        assert kib["y"] == pytest.approx(mbps)


@needs_fio
@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_store_keeps_fios_output_and_says_where(volbench: Volbench, tmp_path: Path) -> None:
    """The store on a 136 KiB tmpfs fills during the run: the round that cannot be
    stored is in a file the message names, and importing that file gives fio's
    figures; the rounds before it are in the store."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=136k", "tmpfs", str(full)], check=True)
    try:
        db = f"sqlite:///{full}/v.db"
        args = PLANS["quick"][0]
        proc = volbench(
            *args,
            "--target",
            str(tmp_path / "q.img"),
            "--runs-dir",
            str(volbench.runs_dir),
            "--db",
            db,
        )
        assert proc.returncode == 3, proc.stderr
        line = proc.stderr.strip().splitlines()[-1]
        assert "could not be stored" in line and "disk is full" in line, line
        kept = Path(line.split("fio's output is kept in ")[1].split(":")[0])
        assert kept.is_file() and kept.parent.parent.parent == volbench.runs_dir
        stored = json.loads(volbench("show", "latest", "--db", db, "--format", "json").stdout)
        assert stored["status"] == "failed" and stored["results"]  # the rounds before
    finally:
        subprocess.run(["umount", str(full)], check=False)
    imported = volbench("import", str(kept))
    assert imported.returncode == 0, imported.stderr
    row = volbench.stored()["results"][0]
    job = json.loads(kept.read_text())["jobs"][0]
    assert row["test"] == job["jobname"]
    assert row["iops"] == pytest.approx(job[row["direction"]]["iops"], rel=1e-9)
