"""A round's fio started ahead and held at its gate (:mod:`volbench.fio.held`), with the
real fio on files of this test's temporary folder: it does no I/O before it is let go,
starts as the fio before it ends, and does no I/O when volbench dies holding it.

Only fio processes whose command line holds this test's own temporary folder are
looked at (and killed should the test fail).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli_kill import fio_processes, wait_for

from volbench.errors import TargetError
from volbench.fio.runner import SubprocessRunner

pytestmark = [
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
    pytest.mark.skipif(shutil.which("flock") is None, reason="flock is not installed"),
]


def job(name: str, target: Path, rw: str = "write", runtime_s: float = 1.0) -> str:
    """A time-based job file of one 4 KiB job on the file ``target`` (1 MiB)."""
    return (
        f"[global]\nfilename={target}\nsize=1m\nthread\n\n[{name}]\nrw={rw}\nbs=4k\n"
        f"ioengine=psync\ntime_based\nruntime={runtime_s:g}s\n"
    )


def document(output: str) -> dict[str, object]:
    result: dict[str, object] = json.loads(output)
    return result


def end_ms(output: str) -> int:
    """When fio printed its result (Unix ms, fio's clock)."""
    value = document(output)["timestamp_ms"]
    assert isinstance(value, int)
    return value


def runtime_ms(output: str) -> int:
    jobs = document(output)["jobs"]
    assert isinstance(jobs, list)
    return max(int(j["job_runtime"]) for j in jobs)


@pytest.fixture
def cleanup(tmp_path: Path):  # type: ignore[no-untyped-def]
    yield
    for pid in fio_processes(tmp_path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_held_fio_starts_as_the_one_before_it_ends(tmp_path: Path, cleanup: None) -> None:
    runner = SubprocessRunner()
    first, second = job("first", tmp_path / "a", "read"), job("second", tmp_path / "b", "read")
    runner.prefetch(second, tmp_path / "round-001")
    # started ahead: fio once setpriv and sh have exec'd it (volbench.fio.executable)
    started = wait_for(lambda: bool(fio_processes(tmp_path / "round-001")), 5)
    assert started, "the second fio was not started ahead"
    raw_a = runner.run(first, tmp_path / "round-000")
    raw_b = runner.run(second, tmp_path / "round-001")
    assert raw_a.returncode == 0 and raw_b.returncode == 0, raw_b.stderr
    # fio's output says it ran at the gate; the folder is left as an unheld fio leaves
    # it: its job file runs the same jobs by hand, no gate files, no prerun output
    assert "exec_prerun" in json.dumps(document(raw_b.output)["global options"])
    assert (tmp_path / "round-001" / "job.fio").read_text() == second
    assert sorted(p.name for p in (tmp_path / "round-001").iterdir()) == ["job.fio"]
    assert runtime_ms(raw_b.output) >= 990  # its whole runtime, counted from the gate
    started_b = end_ms(raw_b.output) - runtime_ms(raw_b.output)
    assert started_b >= end_ms(raw_a.output) - 20, "the held fio ran before the first ended"
    assert raw_b.started_s is not None and raw_a.ended_s is not None
    assert raw_b.started_s >= raw_a.ended_s
    assert not fio_processes(tmp_path)


def test_a_held_fio_never_let_go_does_no_io(tmp_path: Path, cleanup: None) -> None:
    runner = SubprocessRunner()
    target = tmp_path / "target"
    runner.prefetch(job("held", target), tmp_path / "round-001")
    time.sleep(1.5)  # its set-up is done: it waits at the gate
    assert fio_processes(tmp_path / "round-001")
    assert not target.exists() or not target.read_bytes().strip(b"\0")
    runner.release()
    assert wait_for(lambda: not fio_processes(tmp_path), 5), "the held fio outlived release"
    assert not target.exists() or not target.read_bytes().strip(b"\0")


def test_a_fio_failing_lets_no_held_fio_go(tmp_path: Path, cleanup: None) -> None:
    runner = SubprocessRunner()
    target = tmp_path / "target"
    runner.prefetch(job("held", target), tmp_path / "round-001")
    raw = runner.run("[broken]\nrw=nonsense\n", tmp_path / "round-000")
    assert raw.returncode != 0
    assert wait_for(lambda: not fio_processes(tmp_path), 5)
    assert not target.exists() or not target.read_bytes().strip(b"\0")


HOLDER = """
import sys, time
from pathlib import Path
from volbench.errors import TargetError
from volbench.fio.runner import SubprocessRunner
runner = SubprocessRunner()
runner.prefetch(sys.argv[1], Path(sys.argv[2]))
print("held", flush=True)
time.sleep(60)
"""


def test_volbench_killed_holding_a_fio_leaves_no_io(tmp_path: Path, cleanup: None) -> None:
    """SIGKILL drops volbench's lock without opening the gate: fio's prerun fails."""
    target = tmp_path / "target"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, job("held", target), str(tmp_path / "round-001")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        time.sleep(1.0)
        holder.kill()
        holder.wait(timeout=5)
        assert wait_for(lambda: not fio_processes(tmp_path), 10), "fio outlived volbench"
    finally:
        if holder.poll() is None:
            holder.kill()
    assert not target.exists() or not target.read_bytes().strip(b"\0")


def test_a_guess_waits_for_its_round_and_a_wrong_one_does_no_io(
    tmp_path: Path, cleanup: None
) -> None:
    """Held for the next step (``let_go=False``): not let go as the fio before ends; taken
    over by its own round, killed unused by another one."""
    runner = SubprocessRunner()
    target = tmp_path / "target"
    runner.prefetch(job("guess", target), tmp_path / "round-001", let_go=False)
    assert runner.run(job("first", tmp_path / "a", "read"), tmp_path / "round-000").output
    time.sleep(1.0)
    assert not target.exists() or not target.read_bytes().strip(b"\0"), "a guess ran early"
    raw = runner.run(job("guess", target), tmp_path / "round-001")
    assert raw.returncode == 0 and runtime_ms(raw.output) >= 990
    assert target.read_bytes().strip(b"\0")  # it wrote once its round started

    other = tmp_path / "other"
    runner.prefetch(job("wrong", other), tmp_path / "round-003", let_go=False)
    runner.run(job("second", tmp_path / "a", "read"), tmp_path / "round-002")
    assert fio_processes(tmp_path / "round-003")
    runner.run(job("third", tmp_path / "a", "read"), tmp_path / "round-003")
    assert not fio_processes(tmp_path)
    assert not other.exists() or not other.read_bytes().strip(b"\0")


def test_a_held_fio_whose_target_fails_its_check_is_not_let_go(
    tmp_path: Path, cleanup: None
) -> None:
    """The target is checked again just before the gate opens early (the PTS cell
    after the one running): a refusal keeps the gate shut, no I/O is done, and the
    round that takes it over (checked first by the engine) decides."""
    runner = SubprocessRunner()
    target = tmp_path / "target"
    checks: list[str] = []

    def refuse() -> None:
        checks.append("checked")
        raise TargetError(f"target {target} is no longer what the run started on")

    runner.prefetch(job("held", target), tmp_path / "round-001", check=refuse)
    assert runner.run(job("first", tmp_path / "a", "read"), tmp_path / "round-000").output
    assert checks == ["checked"]
    time.sleep(1.0)
    assert fio_processes(tmp_path / "round-001"), "the held fio should still wait"
    assert not target.exists() or not target.read_bytes().strip(b"\0"), "it was let go"
    runner.release()
    assert wait_for(lambda: not fio_processes(tmp_path), 5)
    assert not target.exists() or not target.read_bytes().strip(b"\0")
