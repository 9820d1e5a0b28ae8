"""A round's fio started ahead of its turn and held at a gate before its first I/O.

fio takes about 0.3 s from its start to its first I/O (loading its libraries,
calibrating its clock, setting its jobs up, then a 100 ms wait for them), and a plan's
next round is often known while the current one runs (BENCHMARKS.md,
"bench/pts_overhead"). So the subprocess runner can start the next round's fio early,
held at a gate: each of its jobs runs ``exec_prerun`` (fio runs it in its folder after
the job's set-up and before the job's clock starts, so the job's runtime starts after
the gate) ``flock -s gate.lock test -e gate.open``, while volbench holds an exclusive
lock on ``gate.lock``. Opening the gate creates ``gate.open`` and drops the lock: the
jobs start at once. When volbench dies, the kernel drops its lock while ``gate.open``
does not exist: the prerun fails and the job ends without I/O (and fio itself dies
with volbench, :func:`volbench.fio.executable.die_with_parent`).
"""

from __future__ import annotations

import fcntl
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from volbench.fio.executable import write_job
from volbench.fio.status_stream import Item

GATE_LOCK = "gate.lock"
GATE_OPEN = "gate.open"
PRERUN = f"exec_prerun=flock -s {GATE_LOCK} test -e {GATE_OPEN}"
"""The job option each job of a held fio runs before its first I/O (in fio's folder)."""
PRERUN_OUTPUT = "*.prerun.txt"
"""What fio writes of each job's ``exec_prerun`` into its folder: ``JOB.prerun.txt``
(fio's backend.c, exec_string)."""


def can_hold() -> bool:
    """Whether fio can be held here: flock(1) (util-linux, busybox) is installed."""
    return shutil.which("flock") is not None


def gated(job_text: str) -> str:
    """``job_text`` with the gate in its global section (a first one when it has none)."""
    lines = job_text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.strip() == "[global]":
            return "".join([*lines[: index + 1], PRERUN + "\n", *lines[index + 1 :]])
    return f"[global]\n{PRERUN}\n{job_text}"


class Gate:
    """The gate of one held fio, closed (locked) from its creation in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        (folder / GATE_OPEN).unlink(missing_ok=True)
        self._fd: int | None = os.open(folder / GATE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self.opened_s: float | None = None
        """When the gate was opened (Unix time), None while closed."""

    def open(self) -> None:
        """Let the held jobs start."""
        if self._fd is None:
            return
        (self._folder / GATE_OPEN).touch()
        self.opened_s = time.time()
        self._drop()

    def close(self) -> None:
        """Drop the lock without opening: a job still at the gate ends without I/O."""
        self._drop()

    def _drop(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@dataclass
class Started:
    """A started fio process and the threads reading its output."""

    proc: subprocess.Popen[str]
    items: queue.Queue[Item]
    stderr_chunks: list[str]
    err_thread: threading.Thread
    command: tuple[str, ...]
    started_s: float


@dataclass
class Held:
    """A fio started for a job file (as given, without the gate) in ``workdir``."""

    job_text: str
    workdir: Path
    started: Started
    gate: Gate
    due: int
    """The runner's run (counted from 0) meant to take it over."""
    let_go: bool
    """Opened as the run before it ends well (else only when its own run takes it)."""
    check: Callable[[], None] | None = None
    """The target's check, made again just before the gate opens early: one that raises
    keeps the gate shut (its own run, checked before it, opens it or ends the run)."""

    def is_for(self, job_text: str, workdir: Path) -> bool:
        return self.job_text == job_text and self.workdir == workdir

    def tidy(self) -> None:
        """Once its fio has ended: its folder as a fio started in its turn leaves it,
        the job file without the gate (fio run by hand on it runs the same jobs), no
        gate files, no prerun output."""
        for name in (GATE_LOCK, GATE_OPEN):
            (self.workdir / name).unlink(missing_ok=True)
        for output in self.workdir.glob(PRERUN_OUTPUT):
            output.unlink(missing_ok=True)
        write_job(self.workdir / "job.fio", self.job_text)
