"""An interrupt that comes while several fio processes are being started (QoS verify
starts one per tenant, each joining its cgroup before exec): every fio started is
known, stopped and waited for, and none runs on.

Python raises the KeyboardInterrupt of a Ctrl-C (and of SIGTERM, through cli.main) at
whatever line the main thread is on. Inside ``subprocess.Popen``, after the fork and
while it waits for the child's exec, that loses the id of a fio which then runs on, in
its cgroup and on the target, so the verification could not remove the cgroup ("still
has processes", exit 2 instead of 143). Here the last job's hook, in the child before
exec, sends the interrupt itself: the moment is the worst one, every time.

Only fio processes this test started are looked at, and killed by id if they remain.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from volbench.fio import client, executable, runner
from volbench.fio.concurrent import STOP_GRACE_S, ConcurrentJob, run_concurrently

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

START_FIO = executable.start_fio
"""The real start, for the interrupting one below (the module's is replaced)."""
RUNTIME_S = 30
"""Each job's runtime: far beyond the time fio is given to stop (STOP_GRACE_S)."""
assert STOP_GRACE_S < RUNTIME_S


def _job(data: Path) -> str:
    """A time-based read job of RUNTIME_S on a small file."""
    return (
        f"[global]\nfilename={data}\nsize=4m\nrw=randread\nbs=4k\nioengine=psync\n"
        f"time_based=1\nruntime={RUNTIME_S}\n[reads]\n"
    )


def _alive(pid: int) -> bool:
    """Whether process ``pid`` (a child of this test: fio, or the fork before its exec)
    still runs."""
    try:
        return not Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].startswith("Z")
    except OSError:
        return False


def test_an_interrupt_while_fio_processes_start_leaves_none_running(tmp_path: Path) -> None:
    parent = os.getpid()
    pids = tmp_path / "pids"
    pids.mkdir()

    def hook(last: bool) -> None:  # in the child, before exec
        (pids / str(os.getpid())).touch()
        if last:
            # A fio whose pipe was lost ends at its first status line (SIGPIPE), a
            # second later; CI's ran on long enough to hold its cgroup. Ignoring
            # SIGPIPE keeps this one running, so that a lost fio is always seen.
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            os.kill(parent, signal.SIGINT)  # the process of this test
            time.sleep(0.3)  # the parent is still in Popen, waiting for this exec

    jobs = [
        ConcurrentJob(_job(tmp_path / f"data{i}"), tmp_path / f"job{i}", lambda i=i: hook(i == 2))
        for i in range(3)
    ]
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_concurrently(jobs, RUNTIME_S + 30, lambda _index, _document: None)
        took = time.monotonic() - started
        ran = sorted(int(p.name) for p in pids.iterdir())
        assert len(ran) == 3  # every fio started, the interrupt waited for the last
        assert [pid for pid in ran if _alive(pid)] == []  # none runs on
        assert took < RUNTIME_S, f"{took:.1f} s: the fio were not stopped"
    finally:
        for path in pids.iterdir():  # fio this test started, if any outlived the call
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(path.name), signal.SIGKILL)


def _interrupting_start(pids: list[int]) -> Callable[..., subprocess.Popen[str]]:
    """``start_fio`` whose child interrupts this process before its exec, the id of each
    fio it started appended to ``pids`` once known."""
    parent = os.getpid()
    dying = executable.die_with_parent()  # taken here, in the parent

    def hook() -> None:  # in the child, before exec
        dying()
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as above: a lost fio runs on
        os.kill(parent, signal.SIGINT)
        time.sleep(0.3)

    def start(command: Sequence[str], workdir: Path) -> subprocess.Popen[str]:
        proc = START_FIO(command, workdir, hook)
        pids.append(proc.pid)
        return proc

    return start


@contextlib.contextmanager
def _interrupting(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> Iterator[list[int]]:
    """``module``'s ``start_fio`` replaced by :func:`_interrupting_start`: the ids of the
    fio it started, each killed at the end if it is still there."""
    pids: list[int] = []
    monkeypatch.setattr(module, "start_fio", _interrupting_start(pids))
    try:
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_an_interrupt_while_one_fio_starts_leaves_it_not_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same moment for the one fio of a test (the runner of every other plan): the
    interrupt comes once fio's id is kept, and that fio is killed before any I/O."""
    with _interrupting(monkeypatch, runner) as pids:
        with pytest.raises(KeyboardInterrupt):
            runner.SubprocessRunner().run(_job(tmp_path / "data"), tmp_path / "job")
        assert len(pids) == 1  # none: the interrupt came inside Popen, and fio ran on
        assert not _alive(pids[0])


def test_an_interrupt_while_the_fio_client_starts_stops_it_as_an_interrupted_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fio client of a round on hosts (no server listens here: the client is only
    started): the interrupt is the round's, as one while it runs, and the client ends."""
    host = client.HostAddress("127.0.0.91", 8765)
    with _interrupting(monkeypatch, client) as pids:
        ran = client.ClientRunner().run({host: _job(Path("/nonexistent/data"))}, tmp_path)
        assert ran.raw.interrupted
        assert len(pids) == 1 and not _alive(pids[0])


def test_an_interrupt_while_the_engine_probe_starts_leaves_no_fio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ioengine probe, volbench's first fio of a run: a SIGTERM at a random moment
    once left its fio running, with no parent, after volbench had exited 143."""
    data = tmp_path / "data"
    data.write_bytes(bytes(1 << 16))
    with _interrupting(monkeypatch, executable) as pids:
        with pytest.raises(KeyboardInterrupt):
            executable._probe("psync", data)
        assert len(pids) == 1 and not _alive(pids[0])
