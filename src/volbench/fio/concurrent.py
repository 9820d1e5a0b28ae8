"""Several fio processes at once, each started by a hook in the child before fio runs.

The QoS verify plan starts one fio per tenant at the same time; each child first
joins its tenant's cgroup (``before_exec`` runs in the child between fork and
exec, so fio and all its job processes start inside the cgroup and not one I/O
escapes the limits). Like :class:`~volbench.fio.runner.SubprocessRunner`, every
fio runs with ``--output-format=json+ --status-interval=1``: the interim
documents feed only ``on_status`` (the live display), and the final document is
kept verbatim as the result.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.errors import FioError
from volbench.fio.ctrl_c import kill_group, signals_held
from volbench.fio.executable import die_with_parent, fio_path, start_fio, write_job
from volbench.fio.raw import DocumentSplitter, RawRun

STOP_GRACE_S = 10.0
"""Seconds a fio has to end after SIGINT (its I/O completing), then after SIGKILL."""

StatusCallback = Callable[[int, dict[str, Any]], None]
"""``on_status(index of the job, interim document)``; called from reader threads."""


@dataclass(frozen=True)
class ConcurrentJob:
    """One fio process: its job file text, work folder, and the child-side hook."""

    job_text: str
    workdir: Path
    before_exec: Callable[[], None]


class _Reader:
    """Reads one fio's stdout into documents on a thread; stderr on another."""

    def __init__(self, proc: subprocess.Popen[str], index: int, on_status: StatusCallback) -> None:
        self.splitter = DocumentSplitter()
        self.stderr = ""
        self._threads = [
            threading.Thread(target=self._out, args=(proc, index, on_status), daemon=True),
            threading.Thread(target=self._err, args=(proc,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _out(self, proc: subprocess.Popen[str], index: int, on_status: StatusCallback) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            document = self.splitter.feed(line)
            if document is not None:
                with contextlib.suppress(json.JSONDecodeError):
                    on_status(index, json.loads(document))
        self.splitter.finish()

    def _err(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.stderr = proc.stderr.read()

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=10)


def _finish(
    proc: subprocess.Popen[str], reader: _Reader, command: tuple[str, ...], timeout_s: float
) -> RawRun:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)  # the fio this module started
        proc.wait()
    reader.join()
    documents = reader.splitter.documents
    final = documents and proc.returncode >= 0
    return RawRun(
        output=documents[-1] if final else "",
        returncode=proc.returncode,
        stderr=reader.stderr,
        interrupted=False,
        command=command,
        text="".join(reader.splitter.text),
    )


def _before_exec(dying: Callable[[], None], hook: Callable[[], None]) -> None:
    """In the child: die with volbench, then the job's own hook (joining its cgroup)."""
    dying()
    hook()


def run_concurrently(
    jobs: Sequence[ConcurrentJob], timeout_s: float, on_status: StatusCallback
) -> list[RawRun]:
    """Start every job's fio at once, wait for all (at most ``timeout_s`` each); results
    in the order given. On Ctrl-C (SIGTERM, SIGHUP) every fio gets SIGINT and is waited
    for, :data:`STOP_GRACE_S` at most, then SIGKILLed with its job processes: none
    outlives the call (an interrupt while they start waits until all have started)."""
    started: list[tuple[subprocess.Popen[str], _Reader, tuple[str, ...]]] = []
    try:
        with signals_held():
            _start_all(jobs, on_status, started)
        return [_finish(proc, reader, command, timeout_s) for proc, reader, command in started]
    finally:
        for proc, _, _ in started:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGINT)
        for proc, _, _ in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
            if proc.poll() is None:
                kill_group(proc)  # held in I/O wait: it leaves when that I/O completes
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=STOP_GRACE_S)


def _start_all(
    jobs: Sequence[ConcurrentJob],
    on_status: StatusCallback,
    started: list[tuple[subprocess.Popen[str], _Reader, tuple[str, ...]]],
) -> None:
    """Start each job's fio, appending it to ``started`` as it starts."""
    try:
        for index, job in enumerate(jobs):
            job.workdir.mkdir(parents=True, exist_ok=True)
            path = job.workdir / "job.fio"
            write_job(path, job.job_text)
            command = (fio_path(), "--output-format=json+", "--status-interval=1", str(path))
            proc = start_fio(
                command,
                job.workdir,
                functools.partial(_before_exec, die_with_parent(), job.before_exec),
            )
            started.append((proc, _Reader(proc, index, on_status), command))
    except OSError as exc:
        raise FioError(f"cannot start fio: {exc.strerror or exc}") from exc
    except subprocess.SubprocessError as exc:  # the child's hook failed before exec
        raise FioError(f"cannot start fio in its cgroup: {exc}") from exc
