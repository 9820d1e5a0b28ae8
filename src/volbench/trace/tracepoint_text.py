"""The text of the kernel's block tracepoints as tracefs prints them (``trace_pipe``).

``block_rq_issue`` (a request handed to the driver) and ``block_rq_complete``
print, after the task, CPU, flags and timestamp (seconds.microseconds), their own
format (``events/block/<event>/format``, Linux ``include/trace/events/block.h``)::

    fio-31194 [000] ..... 12715.800443: block_rq_issue: 7,0 R 4096 () 31616 + 8 be,0,4 [fio]
    <idle>-0  [000] ..s.. 12715.802762: block_rq_complete: 7,0 R () 31616 + 8 be,0,4 [0]

that is ``MAJOR,MINOR RWBS [BYTES] (CMD) SECTOR + SECTORS [IOPRIO] [COMM|ERROR]``;
kernels before 6.3 print no I/O priority, older ones no bytes. When the kernel's
buffer overflows, ``trace_pipe`` prints ``CPU:N [LOST K EVENTS]`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from volbench.errors import UsageError
from volbench.trace.clock import EventClock
from volbench.trace.events import (
    MAX_EVENTS,
    IoTrace,
    TraceBuilder,
    event_numbers,
    numbered_lines,
    op_of,
)

_EVENT = re.compile(
    r" (-?\d+)\.(\d+): block_rq_(issue|complete): (\d+),(\d+) (\S+) (?:\d+ )?\(.*?\) (\d+) \+ (\d+)"
)
_LOST = re.compile(r"\[LOST (\d+) EVENTS\]")


def feed(builder: TraceBuilder, lines: Iterable[str], device: tuple[int, int] | None) -> int:
    """Add the events of ``lines`` on ``device`` (major, minor; None: any) to
    ``builder``; return how many lines were events. Lines and numbers are bounded as
    :func:`~volbench.trace.events.event_numbers` says, times checked by an
    :class:`~volbench.trace.clock.EventClock`; at most
    :data:`~volbench.trace.events.MAX_EVENTS` events."""
    events = 0
    search = _EVENT.search
    source = getattr(lines, "name", "trace text")
    clock = EventClock(source)
    for number, line in numbered_lines(lines):
        match = search(line)
        if match is None:
            lost = _LOST.search(line)
            if lost is not None and len(lost.group(1)) <= 18:
                builder.lost += int(lost.group(1))
            continue
        seconds, fraction, kind, major, minor, rwbs, sector, sectors = match.groups()
        time_ns, found, first, count = event_numbers(
            f"{source} line {number}", seconds, fraction, (major, minor), sector, sectors
        )
        clock.check(time_ns, number)
        if device is not None and found != device:
            continue
        op = op_of(rwbs, count)
        if op is None:
            continue
        events += 1
        if events > MAX_EVENTS:
            raise UsageError(f"{source}: more than {MAX_EVENTS:,} events: capture a shorter time")
        if kind == "issue":
            builder.issue(time_ns, op, first, count * 512)
        else:
            builder.complete(time_ns, op, first)
    return events


def parse_tracepoints(
    lines: Iterable[str], device: tuple[int, int] | None = None, duration_ns: int | None = None
) -> IoTrace:
    """The trace in tracepoint text ``lines`` (see the module docstring)."""
    builder = TraceBuilder()
    feed(builder, lines, device)
    return builder.build(duration_ns)
