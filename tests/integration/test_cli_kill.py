"""volbench killed with SIGKILL takes fio with it: every job is a thread of the one
fio process (``thread``), which the kernel stops when volbench dies (PR_SET_PDEATHSIG).
Forked job processes would outlive a fio main process that is itself SIGKILLed (by
volbench after a stall, or by the OOM killer), so the run must have one fio process.

Only processes whose command line holds this test's own temporary folder are looked
at (and, should the test fail, killed); no other process is touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import Volbench

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def fio_processes(folder: Path) -> list[int]:
    """Pids of the fio processes whose command line names a path in ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile
        if argv and os.path.basename(argv[0]) == b"fio" and str(folder).encode() in b" ".join(argv):
            found.append(int(entry.name))
    return found


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    """Poll ``check`` until it is true or ``seconds`` have passed; its last answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@needs_fio
def test_fio_jobs_end_when_volbench_is_killed(volbench: Volbench, tmp_path: Path) -> None:
    args = volbench.quick_args(tmp_path / "scratch.img", "--numjobs", "2")
    args = tuple("20s" if a in ("1s", "500ms") else a for a in args)  # runtime: long enough
    proc = volbench.start(*args)
    try:
        # the round's fio (its job file is in the runs folder): the engine probe before it
        # names the target alone, and ends in a moment
        rounds = volbench.runs_dir
        assert wait_for(lambda: len(fio_processes(rounds)) > 0, 30), "fio never started"
        time.sleep(0.5)  # the jobs are running (forked ones would exist by now)
        # two jobs, one process: nothing outlives fio even when fio itself is SIGKILLed
        assert len(fio_processes(tmp_path)) == 1, fio_processes(tmp_path)
        proc.kill()  # SIGKILL to the volbench this test started
        proc.communicate(timeout=10)
        assert wait_for(lambda: not fio_processes(tmp_path), 2.5), fio_processes(tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in fio_processes(tmp_path):  # only fio started for this test's folder
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
