"""Runners: the one interface through which volbench starts fio, whatever the place.

A :class:`Runner` runs a round's fio with one call, :meth:`Runner.execute`, given
one of the three requests of :mod:`volbench.fio.request` (one fio process here, a
fio client for other hosts, several fio processes here at once), and answers with
fio's verbatim outputs as :class:`RawRun` records.

The subprocess runner starts the real fio with ``--output-format=json+
--status-interval=1`` (not in client mode, where fio's interim documents are
wrong): fio prints one complete JSON document per second and the final one at
the end. The interim documents feed only the live display (``on_status``);
results come from the final document, kept verbatim. The replay runner answers
all three from recorded outputs, so every plan, QoS verification and rounds on
other hosts included, runs in unit tests without fio. A runner may start the next
round's fio ahead (``prefetch``) and kill what no round took over (``release``); the
replay runner does neither.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from volbench.errors import VolbenchError
from volbench.fio.client import ClientRun, ClientRunner, HostAddress
from volbench.fio.concurrent import ConcurrentJob, run_concurrently
from volbench.fio.concurrent import StatusCallback as TogetherStatus
from volbench.fio.ctrl_c import CtrlC, kill_group, signal_fio, start_held
from volbench.fio.executable import best_engine, fio_path, fio_version, start_fio, write_job
from volbench.fio.held import Gate, Held, Started, can_hold, gated
from volbench.fio.raw import DocumentSplitter, RawRun
from volbench.fio.replay import ReplayRunner, job_sections
from volbench.fio.request import (
    FailureCallback,
    FioRound,
    Ran,
    StatusCallback,
    StopCheck,
    dispatch,
)
from volbench.fio.status_stream import Item, lean_status, pump
from volbench.output_file import fio_folder

__all__ = [
    "DocumentSplitter",
    "RawRun",
    "ReplayRunner",
    "Runner",
    "SubprocessRunner",
    "job_sections",
]


class Runner(Protocol):
    """How volbench starts fio: the real one (:class:`SubprocessRunner`) or recorded
    outputs (:class:`ReplayRunner`)."""

    def version(self) -> str:
        """fio's version string as recorded with the run."""
        ...

    def engine(self, target: Path) -> str:
        """The ioengine to use on ``target`` (an existing file or block device)."""
        ...

    def execute(self, request: FioRound) -> Ran:
        """Run a round's fio (:mod:`volbench.fio.request`) to its end; what it printed."""
        ...

    def prefetch(
        self,
        job_text: str,
        workdir: Path,
        let_go: bool = True,
        check: Callable[[], None] | None = None,
    ) -> None:
        """Start the fio of the round after the next :meth:`execute` now, held before its
        first I/O, where the runner can (:meth:`SubprocessRunner.prefetch`; else nothing)."""
        ...

    def release(self) -> None:
        """Kill every fio started ahead that no run took over (none: nothing to do)."""
        ...

    @property
    def writes_logs(self) -> bool:
        """fio writes its per-second logs where the job files say (not when replayed)."""
        ...


class SubprocessRunner:
    """Runs the real fio. Ctrl-C (or SIGTERM) sends SIGINT to fio, which then stops its
    jobs and prints its final JSON with what it measured so far.

    fio waits for its outstanding I/O before it ends; on a stalled device that can take
    minutes. So when fio has not ended ``interrupt_grace_s`` after the user's interrupt
    (``stop_grace_s`` after ``should_stop``), its process group gets SIGKILL, and the
    runner waits at most ``abandon_s`` more for it: a process in uninterruptible I/O
    wait leaves only when its I/O completes, and volbench does not wait for that. The
    run then has no final document from fio (RawRun ``killed``).
    """

    status_interval_s = 1
    interrupt_grace_s = 1.5
    stop_grace_s = 30.0
    abandon_s = 0.3

    writes_logs = True

    def __init__(self) -> None:
        self._held: list[Held] = []
        self._runs = 0

    def execute(self, request: FioRound) -> Ran:
        return dispatch(self, request)

    def version(self) -> str:
        return fio_version()

    def engine(self, target: Path) -> str:
        return best_engine(target)

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> RawRun:
        run, self._runs = self._runs, self._runs + 1
        held = next((h for h in self._held if h.due == run and h.is_for(job_text, workdir)), None)
        self._kill([h for h in self._held if h.due <= run and h is not held])  # guessed wrong
        if held is None:
            fio_folder(workdir)
            job_path = workdir / "job.fio"
            write_job(job_path, job_text)
            started = self._start(job_path, workdir)
        else:  # started ahead (:meth:`prefetch`): its I/O starts at its gate
            self._held.remove(held)
            held.gate.open()
            started = dataclasses.replace(held.started, started_s=held.gate.opened_s or 0.0)
        raw = self._wait(started, on_status, should_stop)
        if held is not None:
            held.tidy()
        if raw.output and raw.returncode == 0 and not (raw.interrupted or raw.stopped):
            for follower in self._held:
                if follower.due == run + 1 and follower.let_go and _still_allowed(follower):
                    follower.gate.open()  # the next round's fio starts as this one ended
        else:
            self.release()
        return raw

    def prefetch(
        self,
        job_text: str,
        workdir: Path,
        let_go: bool = True,
        check: Callable[[], None] | None = None,
    ) -> None:
        """Start the fio of ``job_text`` in ``workdir`` now, held before its first I/O
        (:mod:`volbench.fio.held`), for the run after the next :meth:`run`: that one
        lets it go as its fio ends well (with ``let_go``; else the gate opens when the
        run after takes it over), and the run after takes it over (its output, and its
        clock from the gate) when it is of the same job in ``workdir``. A fio that does
        not end well, a run of another job, or :meth:`release` kills it. Without
        flock(1) nothing is started ahead. ``check`` (the target's safety check) runs
        again just before the gate opens early: the target is checked right before each
        fio's I/O, not one test earlier."""
        if not can_hold():
            return
        fio_folder(workdir)
        gate = Gate(workdir)
        job_path = workdir / "job.fio"
        write_job(job_path, gated(job_text))
        try:
            started = self._start(job_path, workdir)
        except BaseException:  # FioError, or an interrupt (its fio killed by _start)
            gate.close()
            raise
        self._held.append(Held(job_text, workdir, started, gate, self._runs + 1, let_go, check))

    def release(self) -> None:
        """Kill every fio started ahead that no run took over (none did I/O unless let go)."""
        self._kill(self._held)

    def _kill(self, held: list[Held]) -> None:
        self._held = [h for h in self._held if h not in held]
        for one in held:
            one.gate.close()
            kill_group(one.started.proc)
        for one in held:
            with contextlib.suppress(subprocess.TimeoutExpired):
                one.started.proc.wait(timeout=self.abandon_s)
            one.tidy()

    def _start(self, job_path: Path, workdir: Path) -> Started:
        """fio started on ``job_path``, its stdout and stderr read by threads of their own."""
        command = (
            fio_path(),
            "--output-format=json+",
            f"--status-interval={self.status_interval_s}",
            str(job_path),
        )
        started_s = time.time()
        proc, interrupted = start_held(lambda: start_fio(command, workdir))
        if interrupted:  # while fio started: not one I/O more
            kill_group(proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.abandon_s)
            raise KeyboardInterrupt
        assert proc.stdout is not None and proc.stderr is not None
        items: queue.Queue[Item] = queue.Queue()
        stderr_chunks: list[str] = []
        threading.Thread(target=pump, args=(proc.stdout, items), daemon=True).start()
        err_thread = threading.Thread(
            target=lambda: stderr_chunks.append(proc.stderr.read() if proc.stderr else ""),
            daemon=True,
        )
        err_thread.start()
        return Started(proc, items, stderr_chunks, err_thread, command, started_s)

    def _wait(
        self, started: Started, on_status: StatusCallback | None, should_stop: StopCheck | None
    ) -> RawRun:
        """Follow fio to its end (its status documents, Ctrl-C, ``should_stop``)."""
        proc, items, stderr_chunks, err_thread = (
            started.proc,
            started.items,
            started.stderr_chunks,
            started.err_thread,
        )
        command, started_s = started.command, started.started_s
        out = _Stdout()
        interrupted_at: float | None = None
        stopped_at: float | None = None
        killed_at: float | None = None
        with CtrlC() as ctrl_c:
            while not out.ended:
                try:
                    out.take(items, 0.1 if interrupted_at or stopped_at else 0.25)
                    fresh = out.fresh and out.last is not None and not out.ended
                    if fresh and on_status is not None and out.last is not None:
                        out.fresh = False
                        with contextlib.suppress(json.JSONDecodeError):
                            on_status(lean_status(out.last))
                except KeyboardInterrupt:  # SIGTERM/SIGHUP (cli.main): as a Ctrl-C
                    ctrl_c.pressed += 1
                while ctrl_c.pressed > ctrl_c.handled:  # the first asks fio to stop, then SIGTERM
                    ctrl_c.handled += 1
                    signal_fio(proc, signal.SIGTERM if interrupted_at else signal.SIGINT)
                    interrupted_at = interrupted_at or time.monotonic()
                now = time.monotonic()
                if stopped_at is None and should_stop is not None and should_stop():
                    signal_fio(proc, signal.SIGINT)
                    stopped_at = now
                if killed_at is None and (
                    (interrupted_at is not None and now - interrupted_at > self.interrupt_grace_s)
                    or (stopped_at is not None and now - stopped_at > self.stop_grace_s)
                ):
                    kill_group(proc)
                    killed_at = now
                if killed_at is not None and now - killed_at > self.abandon_s:
                    break  # fio is held in I/O wait: it leaves when its I/O completes
        interrupted = interrupted_at is not None
        if killed_at is None:
            returncode = proc.wait()
            err_thread.join(timeout=5)
        else:
            exited = proc.poll()
            returncode = -signal.SIGKILL if exited is None else exited
            err_thread.join(timeout=0.1)
        # Killed by a signal we did not send, fio printed no final document: its
        # last document is an interim one and must not pass for a result.
        final = out.last is not None and killed_at is None and (returncode >= 0 or interrupted)
        return RawRun(
            output=out.last if final and out.last is not None else "",
            returncode=returncode,
            stderr="".join(stderr_chunks),
            interrupted=interrupted,
            command=command,
            text="".join(out.text),
            stopped=stopped_at is not None,
            started_s=started_s,
            ended_s=time.time(),
            killed=killed_at is not None,
        )

    def run_hosts(
        self,
        jobs: Mapping[HostAddress, str],
        workdir: Path,
        on_failure: FailureCallback | None = None,
        keep_going: bool = False,
    ) -> ClientRun:
        return ClientRunner(keep_going).run(jobs, workdir, on_failure)

    def run_together(
        self, jobs: Sequence[ConcurrentJob], timeout_s: float, on_status: TogetherStatus
    ) -> list[RawRun]:
        return run_concurrently(jobs, timeout_s, on_status)


def _still_allowed(follower: Held) -> bool:
    """The held fio's target passes its check again (none given: nothing to check). A
    refusal keeps its gate shut: the round that takes it over is checked first and
    ends the run there, after this round's results are committed."""
    if follower.check is None:
        return True
    try:
        follower.check()
    except VolbenchError:
        return False
    return True


@dataclass
class _Stdout:
    """What fio printed so far: its newest document, whether one came since it was
    last looked at, whether the stream has ended, and text outside documents. Filled
    item by item, so a Ctrl-C between two items loses none of them."""

    last: str | None = None
    fresh: bool = False
    ended: bool = False
    text: list[str] = field(default_factory=list)

    def take(self, items: queue.Queue[Item], wait_s: float) -> None:
        """Everything :func:`pump` queued, waiting up to ``wait_s`` for the first item;
        older documents are stale: only the newest is kept."""
        try:
            item = items.get(timeout=wait_s)
            while True:
                if item is None:
                    self.ended = True
                    return
                kind, value = item
                if kind == "document":
                    self.last, self.fresh = value, True
                else:
                    self.text.append(value)
                item = items.get_nowait()
        except queue.Empty:
            return
