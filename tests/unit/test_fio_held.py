"""The gate of a fio started ahead: its line in the job file, the lock it holds."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from volbench.fio.held import GATE_LOCK, GATE_OPEN, PRERUN, Gate, gated
from volbench.fio.job_text import read_job


def test_the_gate_is_an_option_of_every_job() -> None:
    text = "; written by volbench\n[global]\nfilename=/dev/x\n\n[a]\nrw=read\n\n[b]\nrw=write\n"
    sections = read_job(gated(text))
    assert [s.name for s in sections] == ["global", "a", "b"]
    assert sections[0].get("exec_prerun") == PRERUN.split("=", 1)[1]
    assert gated(text).replace(PRERUN + "\n", "") == text


def test_a_job_file_without_global_gets_one() -> None:
    sections = read_job(gated("[a]\nrw=read\n"))
    assert [s.name for s in sections] == ["global", "a"]
    assert sections[0].has("exec_prerun")


def locked(path: Path) -> bool:
    """Whether another open file description holds a lock on ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_opening_creates_the_mark_then_unlocks(tmp_path: Path) -> None:
    (tmp_path / GATE_OPEN).write_text("")  # left by an earlier run of this round
    gate = Gate(tmp_path)
    assert not (tmp_path / GATE_OPEN).exists() and locked(tmp_path / GATE_LOCK)
    gate.open()
    assert (tmp_path / GATE_OPEN).exists() and not locked(tmp_path / GATE_LOCK)
    assert gate.opened_s is not None


def test_closing_unlocks_without_the_mark(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    gate.close()
    assert not (tmp_path / GATE_OPEN).exists() and not locked(tmp_path / GATE_LOCK)
    assert gate.opened_s is None
