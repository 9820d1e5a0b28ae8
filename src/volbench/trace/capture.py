"""One capture: trace a device for a while (blktrace where the kernel allows it, else
the block tracepoints), then read what was traced into an :class:`IoTrace`.

Ctrl-C (or SIGTERM, which volbench turns into one) ends the capture early: what
was traced until then is read and kept, and :attr:`Captured.interrupted` says so.
The scratch text is removed once it has been read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from volbench.trace import blkparse_text, blktrace
from volbench.trace.events import SECTOR_BYTES, IoTrace
from volbench.trace.tracefs import TraceInstance, device_number, traced_device
from volbench.trace.tracepoint_text import parse_tracepoints

TRACEPOINTS = "tracepoints"
BLKTRACE = "blktrace"

Tick = Callable[[float, int], None]
"""Told the seconds traced so far and the bytes of trace text read, a few times a second."""


@dataclass(frozen=True)
class Captured:
    """What a capture traced, and how."""

    device: str
    major: int
    minor: int
    method: str
    trace: IoTrace
    started_at: str
    duration_s: float
    interrupted: bool
    note: str | None = None
    """Why blktrace was not used (None: it was, or it was not asked for)."""


def _wait(duration_s: float, tick: Tick | None, read: Callable[[], int]) -> tuple[float, bool]:
    """Wait ``duration_s`` (telling ``tick``); (seconds waited, whether Ctrl-C cut it)."""
    began = time.monotonic()
    try:
        while (waited := time.monotonic() - began) < duration_s:
            if tick is not None:
                tick(waited, read())
            time.sleep(min(0.25, duration_s - waited))
    except KeyboardInterrupt:
        return time.monotonic() - began, True
    return time.monotonic() - began, False


def capture(
    device: str,
    duration_s: float,
    scratch: Path,
    tick: Tick | None = None,
    use_blktrace: bool = True,
) -> Captured:
    """Trace ``device`` for ``duration_s`` seconds (scratch text under ``scratch``)."""
    major, minor = device_number(device)
    traced = traced_device(device)
    partition = traced.sectors is not None
    scratch.mkdir(parents=True, exist_ok=True)
    text = scratch / "trace.txt"
    started = datetime.now(UTC).isoformat(timespec="seconds")
    note = None
    try:
        if partition:
            run: blktrace.BlktraceRun | str = "a partition is traced on its disk"
        elif use_blktrace:
            run = blktrace.start(device, text)
        else:
            run = "blktrace not asked for"
        if isinstance(run, blktrace.BlktraceRun):
            try:
                waited, cut = _wait(duration_s, tick, lambda: text.stat().st_size)
            finally:
                run.stop()
            with text.open(errors="replace") as lines:
                found = blkparse_text.events_by_device(lines)
            events = found.get((major, minor), blkparse_text.DeviceEvents())
            trace = blkparse_text.build(events)
            return Captured(
                device, major, minor, BLKTRACE, _timed(trace, waited), started, waited, cut
            )
        note = run if use_blktrace or partition else None
        with TraceInstance(device, text) as instance:
            try:
                waited, cut = _wait(duration_s, tick, lambda: instance.bytes_read)
            finally:
                instance.stop()
        if instance.leftover is not None:
            left = f"the trace instance {instance.leftover} was busy: `rmdir` it"
            note = f"{note}; {left}" if note else left
        with text.open(errors="replace") as lines:
            trace = parse_tracepoints(lines, (traced.major, traced.minor), round(waited * 1e9))
        if partition:  # offsets from the partition's start
            shift = traced.start_sector * SECTOR_BYTES
            offsets = array("q", (o - shift for o in trace.offset_bytes))
            trace = dataclasses.replace(trace, offset_bytes=offsets)
        return Captured(device, major, minor, TRACEPOINTS, trace, started, waited, cut, note)
    finally:
        with contextlib.suppress(OSError):
            text.unlink()
        with contextlib.suppress(OSError):
            scratch.rmdir()


def _timed(trace: IoTrace, waited_s: float) -> IoTrace:
    """``trace`` lasting as long as the capture did (not only its events' span)."""
    return dataclasses.replace(trace, duration_ns=max(trace.duration_ns, round(waited_s * 1e9)))
