"""Ctrl-C while fio runs, and the signals volbench sends to the fio it started.

fio runs in a session of its own (:func:`volbench.fio.executable.start_fio`), so a
Ctrl-C in the terminal reaches volbench only; volbench asks each fio to stop
(SIGINT: fio ends its jobs and prints what it measured), then SIGTERM on a second
Ctrl-C, and SIGKILLs a fio that does not end in time. While fio processes are being
started, Ctrl-C, SIGTERM and SIGHUP wait (:func:`signals_held`), so that every fio
started is known and stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop volbench (cli.main turns SIGTERM and SIGHUP into Ctrl-C)."""


class CtrlC:
    """Ctrl-C (SIGINT) counted while fio runs, instead of a KeyboardInterrupt raised at
    whatever line the main thread was on (between two lines of the loop, one would
    skip stopping fio and lose its final document): the loop asks fio to stop, then
    keeps reading what it prints. The previous handler is back afterwards. Outside
    the main thread (signals reach only that one) nothing changes."""

    def __init__(self) -> None:
        self.pressed = 0
        self.handled = 0
        self._installed = False
        self._previous: Any = signal.default_int_handler

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, self._press)
            self._previous = signal.default_int_handler if previous is None else previous
            self._installed = True
        return self

    def _press(self, _signum: int, _frame: object) -> None:
        self.pressed += 1

    def __exit__(self, *_exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP held back while the block runs, then let through to
    the handlers from before (the first that came; the handlers of cli.main ignore a
    second anyway). For a block that must not stop half-way: starting fio processes
    whose ids the caller keeps in order to stop them. A KeyboardInterrupt raised inside
    ``subprocess.Popen`` after its fork loses the id of a fio that then runs on (in its
    cgroup, on the target) until volbench exits. Outside the main thread (signals reach
    only that one) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def hold(signum: int, _frame: object) -> None:
        came.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in HELD_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        if came:
            signal.raise_signal(came[0])  # its handler runs here (PyErr_CheckSignals)


def start_held(start: Callable[[], subprocess.Popen[str]]) -> tuple[subprocess.Popen[str], bool]:
    """``start()``, which starts one fio, with Ctrl-C, SIGTERM and SIGHUP held until its
    process is known (:func:`signals_held`): that process, and whether an interrupt came
    meanwhile (its handler has run, so cli.main has recorded a SIGTERM). The caller then
    stops that fio as it stops one interrupted later."""
    proc: subprocess.Popen[str] | None = None
    try:
        with signals_held():
            proc = start()
    except KeyboardInterrupt:
        if proc is None:  # it came before the start, or start() failed
            raise
        return proc, True
    return proc, False


def signal_fio(proc: subprocess.Popen[str], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL fio's process group: fio was started in a session of its own
    (:func:`~volbench.fio.executable.start_fio`), whose id is fio's pid; fio is not
    reaped yet, so that id cannot belong to anything else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
