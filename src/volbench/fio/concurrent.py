"""Several fio processes at once, each started by a hook in the child before fio runs.

The QoS verify plan starts one fio per tenant at the same time; each child first
joins its tenant's cgroup (``before_exec`` runs in the child between fork and
exec, so fio and all its job processes start inside the cgroup and not one I/O
escapes the limits). Every process prints one final JSON document
(``--output-format=json+``), kept verbatim like :class:`SubprocessRunner` does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import FioError
from volbench.fio.executable import fio_path
from volbench.fio.runner import DocumentSplitter, RawRun


@dataclass(frozen=True)
class ConcurrentJob:
    """One fio process: its job file text, work folder, and the child-side hook."""

    job_text: str
    workdir: Path
    before_exec: Callable[[], None]


def _collect(proc: subprocess.Popen[str], command: tuple[str, ...], timeout_s: float) -> RawRun:
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)  # the fio this module started
        out, err = proc.communicate()
    splitter = DocumentSplitter()
    for line in out.splitlines(keepends=True):
        splitter.feed(line)
    splitter.finish()
    final = splitter.documents and proc.returncode >= 0
    return RawRun(
        output=splitter.documents[-1] if final else "",
        returncode=proc.returncode,
        stderr=err,
        interrupted=False,
        command=command,
        text="".join(splitter.text),
    )


def run_concurrently(jobs: Sequence[ConcurrentJob], timeout_s: float) -> list[RawRun]:
    """Start every job's fio at once, wait for all (at most ``timeout_s`` each); results
    in the order given. Ctrl-C is passed on to every fio (they print what they measured)."""
    started: list[tuple[subprocess.Popen[str], tuple[str, ...]]] = []
    try:
        for job in jobs:
            job.workdir.mkdir(parents=True, exist_ok=True)
            path = job.workdir / "job.fio"
            path.write_text(job.job_text)
            command = (fio_path(), "--output-format=json+", str(path))
            proc = subprocess.Popen(
                command,
                cwd=job.workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=job.before_exec,
                start_new_session=True,
            )
            started.append((proc, command))
        return [_collect(proc, command, timeout_s) for proc, command in started]
    except OSError as exc:
        raise FioError(f"cannot start fio: {exc.strerror or exc}") from exc
    except subprocess.SubprocessError as exc:  # the child's hook failed before exec
        raise FioError(f"cannot start fio in its cgroup: {exc}") from exc
    finally:
        for proc, _ in started:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)
