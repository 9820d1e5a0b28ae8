"""A child started for volbench dies with it, even when volbench dies between the
fork and the child's prctl(PR_SET_PDEATHSIG) call: then no signal comes (prctl(2)),
so the hook compares its parent with the pid taken before the fork and exits before
exec (found by a CI run: a volbench killed as it started fio left fio running)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

_MIDDLE = textwrap.dedent(
    """
    import ctypes, os, signal, subprocess, sys, threading, time
    from volbench.fio.executable import die_with_parent

    marker, checked = sys.argv[1], sys.argv[2] == "checked"
    if checked:
        hook = die_with_parent()
    else:
        def hook():
            ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)

    def late_hook():
        time.sleep(1.0)  # the parent is gone by now
        hook()

    threading.Timer(0.3, os._exit, (0,)).start()
    subprocess.Popen(["sh", "-c", f"echo ran > {marker}"], preexec_fn=late_hook)
    """
)


@pytest.mark.parametrize(("checked", "runs"), [("checked", False), ("prctl only", True)])
def test_a_child_whose_parent_died_before_its_prctl_does_not_exec(
    tmp_path: Path, checked: str, runs: bool
) -> None:
    marker = tmp_path / "ran"
    subprocess.run([sys.executable, "-c", _MIDDLE, str(marker), checked], check=True, timeout=60)
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline and runs:
        time.sleep(0.05)
    if not runs:
        time.sleep(2.0)  # the child's hook sleeps 1 s after its parent's end
    assert marker.exists() == runs


_WRAPPED = textwrap.dedent(
    """
    import os, subprocess, sys, threading
    from volbench.fio.executable import dying_with_parent

    marker, checked = sys.argv[1], sys.argv[2] == "checked"
    command = ["sh", "-c", f"echo ran > {marker}"]
    wrapped = dying_with_parent(command)
    assert wrapped is not None, "setpriv is not installed"
    if not checked:  # setpriv's prctl alone
        wrapped = wrapped[: wrapped.index("--") + 1] + command
    threading.Timer(0.3, os._exit, (0,)).start()
    # the child reaches setpriv's prctl 1 s late: the parent is gone by then
    subprocess.Popen(["sh", "-c", 'sleep 1; exec "$@"', "late", *wrapped])
    """
)


@pytest.mark.parametrize(("checked", "runs"), [("checked", False), ("prctl only", True)])
def test_a_wrapped_child_whose_parent_died_before_setpriv_does_not_exec(
    tmp_path: Path, checked: str, runs: bool
) -> None:
    marker = tmp_path / "ran"
    subprocess.run([sys.executable, "-c", _WRAPPED, str(marker), checked], check=True, timeout=60)
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline and runs:
        time.sleep(0.05)
    if not runs:
        time.sleep(2.0)  # the child waits 1 s after its parent's end
    assert marker.exists() == runs


_KILLED = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from volbench.fio.executable import start_fio

    proc = start_fio(["sleep", "60"], Path(sys.argv[1]))
    print(proc.pid, flush=True)
    os._exit(0)
    """
)


def test_a_child_started_for_fio_dies_with_its_parent(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    child = Path(f"/proc/{int(done.stdout)}")
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(proc: Path) -> bool:
    """Whether the process of ``/proc/PID`` exists and is not a zombie."""
    try:
        return proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
