"""blkparse's default text output, as ``blkparse -i TRACE`` prints a blktrace capture.

blkparse(1), "DEFAULT OUTPUT": each event is one line::

    8,0    3        1     0.000000000   697  Q  WS 3414123 + 8 [kjournald]
    8,0    3        5     0.000006586   697  D  WS 3414123 + 8 [kjournald]
    8,0    0        1     0.000390461     0  C  WS 3414123 + 8 [0]

``MAJOR,MINOR CPU SEQUENCE SECONDS.NANOSECONDS PID ACTION RWBS`` then, for
requests, ``SECTOR + SECTORS [PROCESS]`` (a completion ends with ``[ERROR]``).
The per-CPU and per-device summaries blkparse prints at the end are not events
and are skipped. volbench keeps ``D`` (issued to the driver) and ``C``
(completed), as its own tracepoint capture does; a trace without any ``D`` (a
bio-based device such as device-mapper has no request queue) uses ``Q`` (queued)
as the issue instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from volbench.errors import UsageError
from volbench.trace.events import (
    MAX_EVENTS,
    IoTrace,
    TraceBuilder,
    event_numbers,
    numbered_lines,
    op_of,
)

_LINE = re.compile(
    r"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(\d+)\.(\d+)\s+\d+\s+([A-Za-z])\s+([A-Z]+)"
    r"(?:\s+(\d+)(?:\s+\+\s+(\d+))?)?"
)

Event = tuple[int, str, str, int, int]
"""(time in ns, action, RWBS, sector, sectors)."""


def recognise(head: str) -> bool:
    """Whether text starting with ``head`` is blkparse's default output: its first
    non-empty lines are events."""
    lines = [line for line in head.splitlines()[:5] if line.strip()]
    return bool(lines) and all(_LINE.match(line) for line in lines[:-1] or lines)


def events_by_device(lines: Iterable[str]) -> dict[tuple[int, int], list[Event]]:
    """Every event of ``lines``, by device (major, minor); bounded as
    :func:`~volbench.trace.events.numbered_lines` and
    :func:`~volbench.trace.events.event_numbers` say, at most
    :data:`~volbench.trace.events.MAX_EVENTS` events."""
    found: dict[tuple[int, int], list[Event]] = {}
    source = getattr(lines, "name", "trace text")
    kept = 0
    for number, line in numbered_lines(lines):
        match = _LINE.match(line)
        if match is None:
            continue
        major, minor, seconds, fraction, action, rwbs, sector, sectors = match.groups()
        if action not in "QDC":
            continue
        kept += 1
        if kept > MAX_EVENTS:
            raise UsageError(
                f"{source}: more than {MAX_EVENTS:,} events: split the trace"
                " (blkparse -w SECONDS) or capture a shorter time"
            )
        time_ns, device, first, count = event_numbers(
            f"{source} line {number}", seconds, fraction, (major, minor),
            sector or "0", sectors or "0",
        )  # fmt: skip
        found.setdefault(device, []).append((time_ns, action, rwbs[:16], first, count))
    return found


def pick_device(found: dict[tuple[int, int], list[Event]], source: str) -> tuple[int, int]:
    """The device a file's events are about: the only one, or the one with the most
    issued requests (several devices traced at once)."""
    if not found:
        raise UsageError(f"{source}: no block I/O events (is it blkparse's default output?)")
    counts = Counter({dev: sum(1 for e in events if e[1] in "DQ") for dev, events in found.items()})
    return counts.most_common(1)[0][0]


def build(events: Sequence[Event]) -> IoTrace:
    """The trace of one device's events (issues: ``D``, else ``Q``)."""
    issue = "D" if any(e[1] == "D" for e in events) else "Q"
    builder = TraceBuilder()
    for time_ns, action, rwbs, sector, sectors in sorted(events, key=lambda e: e[0]):
        if action == "C":
            op = op_of(rwbs, sectors)
            if op is not None:
                builder.complete(time_ns, op, sector)
        elif action == issue:
            op = op_of(rwbs, sectors)
            if op is not None:
                builder.issue(time_ns, op, sector, sectors * 512)
    return builder.build()
