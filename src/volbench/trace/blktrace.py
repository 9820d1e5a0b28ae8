"""Tracing one block device with blktrace(8) piped into blkparse(1), where the
kernel allows it.

``blktrace -d DEV -o -`` writes its binary events to stdout and ``blkparse -q -i -``
turns them into its default text (:mod:`volbench.trace.blkparse_text`), written to a
scratch file. blktrace needs debugfs (``/sys/kernel/debug/block/NAME/trace*``);
kernels that do not allow it make blktrace exit at once, e.g. "failed open
/sys/kernel/debug/block/loop0/trace0: Operation not permitted": :func:`start`
then returns the reason and the capture uses the tracepoints instead
(:mod:`volbench.trace.tracefs`). blktrace opens the device read-only, for its
``BLKTRACESETUP`` ioctl; it never writes it.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
from pathlib import Path

STARTUP_S = 1.0
"""How long blktrace gets to fail before it is taken as tracing."""


class BlktraceRun:
    """blktrace | blkparse, writing text to ``output`` until :meth:`stop`."""

    def __init__(self, tracer: subprocess.Popen[bytes], parser: subprocess.Popen[bytes]) -> None:
        self.tracer = tracer
        self.parser = parser

    def stop(self) -> None:
        """End blktrace as its Ctrl-C does (it flushes what it traced), then blkparse."""
        if self.tracer.poll() is None:
            self.tracer.send_signal(signal.SIGINT)
        try:
            self.tracer.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.tracer.kill()
            self.tracer.wait()
        try:
            self.parser.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.parser.kill()
            self.parser.wait()


def start(device: str, output: Path) -> BlktraceRun | str:
    """Start tracing ``device`` with blktrace; the run, or why it cannot (not
    installed, or blktrace's own message when the kernel refuses)."""
    tracer_path, parser_path = shutil.which("blktrace"), shutil.which("blkparse")
    if tracer_path is None or parser_path is None:
        return "blktrace is not installed"
    error = output.with_suffix(".blktrace-errors")
    with error.open("wb") as errors, output.open("wb") as out:
        tracer = subprocess.Popen(
            [tracer_path, "-d", device, "-o", "-"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            start_new_session=True,  # the terminal's Ctrl-C is volbench's to pass on
        )
        assert tracer.stdout is not None
        parser = subprocess.Popen(
            [parser_path, "-q", "-i", "-"],
            stdin=tracer.stdout,
            stdout=out,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        tracer.stdout.close()
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and tracer.poll() is None:
        time.sleep(0.05)
    if tracer.poll() is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            parser.wait(timeout=5)
        message = error.read_text(errors="replace").strip().splitlines()
        error.unlink(missing_ok=True)
        reason = message[0] if message else f"exit code {tracer.returncode}"
        return f"blktrace could not trace {device} ({reason})"
    error.unlink(missing_ok=True)
    return BlktraceRun(tracer, parser)
