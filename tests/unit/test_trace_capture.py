"""The capture's choice of tracer: blktrace where it works (here a stand-in on PATH
that behaves as blktrace does), the tracepoints when the kernel refuses it."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from volbench.trace import blktrace
from volbench.trace import capture as capturing
from volbench.trace.tracefs import Traced

FIXTURE = Path(__file__).parent.parent / "fixtures" / "blkparse" / "mixed.txt"


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


def test_a_refusing_kernel_gives_blktraces_reason(tools: Path, tmp_path: Path) -> None:
    _tool(
        tools,
        "blktrace",
        "echo 'failed open /sys/kernel/debug/block/loop0/trace0:"
        " Operation not permitted' >&2\nexit 1\n",
    )
    _tool(tools, "blkparse", "cat >/dev/null\n")
    found = blktrace.start("/dev/loop0", tmp_path / "t.txt")
    assert found == (
        "blktrace could not trace /dev/loop0 (failed open"
        " /sys/kernel/debug/block/loop0/trace0: Operation not permitted)"
    )


def test_blktrace_where_it_works(
    tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blktrace traces until SIGINT (as Ctrl-C or -w ends it); blkparse prints the text
    _tool(tools, "blktrace", "trap 'exit 0' INT\nwhile :; do sleep 0.05; done\n")
    _tool(tools, "blkparse", f"cat >/dev/null\ncat {FIXTURE}\n")
    monkeypatch.setattr(capturing, "device_number", lambda device: (8, 0))
    monkeypatch.setattr(capturing, "traced_device", lambda device: Traced(8, 0))
    found = capturing.capture("/dev/sda", 1.2, tmp_path / "scratch")
    assert found.method == capturing.BLKTRACE
    assert found.trace.ops == "RRWWFRD"
    assert found.trace.duration_ns >= 1_200_000_000
    assert not found.interrupted
    assert not (tmp_path / "scratch").exists()  # the scratch text is gone


def test_ctrl_c_keeps_what_was_traced(
    tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tool(tools, "blktrace", "trap 'exit 0' INT\nwhile :; do sleep 0.05; done\n")
    _tool(tools, "blkparse", f"cat >/dev/null\ncat {FIXTURE}\n")
    monkeypatch.setattr(capturing, "device_number", lambda device: (8, 0))
    monkeypatch.setattr(capturing, "traced_device", lambda device: Traced(8, 0))
    ticks: list[float] = []

    def tick(seconds: float, _read: int) -> None:
        ticks.append(seconds)
        if seconds > 1.2:
            raise KeyboardInterrupt  # as the terminal's Ctrl-C arrives in the main thread

    before = set(threading.enumerate())  # an earlier test's threads in this worker
    began = time.monotonic()
    found = capturing.capture("/dev/sda", 60, tmp_path / "scratch", tick)
    assert time.monotonic() - began < 10
    assert found.interrupted and found.trace.ops == "RRWWFRD"
    assert set(threading.enumerate()) <= before  # the capture's readers have ended


def test_no_blktrace_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert blktrace.start("/dev/loop0", tmp_path / "t.txt") == "blktrace is not installed"


def test_a_partition_is_traced_on_its_disk() -> None:
    traced = Traced(7, 0, start_sector=2048, sectors=32768)
    assert traced.filter() == "dev == 7340032 && sector >= 2048 && sector < 34816"
    assert Traced(8, 16).filter() == "dev == 8388624"
