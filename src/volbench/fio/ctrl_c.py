"""Ctrl-C while fio runs, and the signals volbench sends to the fio it started.

fio runs in a session of its own (:func:`volbench.fio.executable.start_fio`), so a
Ctrl-C in the terminal reaches volbench only; volbench asks each fio to stop
(SIGINT: fio ends its jobs and prints what it measured), then SIGTERM on a second
Ctrl-C, and SIGKILLs a fio that does not end in time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import Any


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


def signal_fio(proc: subprocess.Popen[str], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL fio's process group: fio was started in a session of its own
    (:func:`~volbench.fio.executable.start_fio`), whose id is fio's pid; fio is not
    reaped yet, so that id cannot belong to anything else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
