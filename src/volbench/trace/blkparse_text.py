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

The file is read line by line into columns (:class:`DeviceEvents`, 26 bytes an event
kept), whatever its size: a blktrace capture of a million requests is a few hundred
MB of text, with five to seven lines a request (``Q``, ``G``, ``I``, ``D``, ``C``...),
of which volbench keeps two. Times are checked as they are read
(:class:`~volbench.trace.clock.EventClock`).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from volbench.errors import UsageError
from volbench.trace.clock import EventClock
from volbench.trace.events import (
    MAX_EVENTS,
    SECTOR_BYTES,
    IoTrace,
    TraceBuilder,
    event_numbers,
    numbered_lines,
    op_of,
)

_LINE = re.compile(
    r"^\s*(\d+),(\d+)\s+\d+\s+\d+\s+(-?\d+)\.(\d+)\s+\d+\s+([A-Za-z])\s+([A-Z]+)"
    r"(?:\s+(\d+)(?:\s+\+\s+(\d+))?)?"
)
MAX_DEVICES = 4096
"""The most devices one file may trace (blktrace traces those named with ``-d``)."""
QUEUED, DISPATCHED, COMPLETED = (ord(action) for action in "QDC")


@dataclass
class DeviceEvents:
    """One device's events in a file, as columns in the file's order: time (ns),
    first sector, sectors, action (``Q``, ``D`` or ``C``) and kind of request
    (:data:`~volbench.trace.events.OPS`), both letters as bytes.

    Only events of a kind are kept, and ``Q`` ones only until the device's first
    ``D`` (its issues are then its ``D`` events); ``issues`` counts every ``D`` and
    ``Q`` line, whether kept or not.
    """

    time_ns: array[int] = field(default_factory=lambda: array("q"))
    sector: array[int] = field(default_factory=lambda: array("q"))
    sectors: array[int] = field(default_factory=lambda: array("q"))
    actions: bytearray = field(default_factory=bytearray)
    ops: bytearray = field(default_factory=bytearray)
    issues: int = 0
    dispatched: bool = False

    def __len__(self) -> int:
        return len(self.actions)

    def add(self, time_ns: int, action: int, op: str, sector: int, sectors: int) -> None:
        self.time_ns.append(time_ns)
        self.sector.append(sector)
        self.sectors.append(sectors)
        self.actions.append(action)
        self.ops.append(ord(op))

    def drop_queued(self) -> int:
        """Forget the ``Q`` events kept; how many there were."""
        kept = [i for i, action in enumerate(self.actions) if action != QUEUED]
        dropped = len(self) - len(kept)
        if dropped:
            for name in ("time_ns", "sector", "sectors"):
                column = getattr(self, name)
                setattr(self, name, array("q", (column[i] for i in kept)))
            self.actions = bytearray(self.actions[i] for i in kept)
            self.ops = bytearray(self.ops[i] for i in kept)
        return dropped


def recognise(head: str) -> bool:
    """Whether text starting with ``head`` is blkparse's default output: its first
    non-empty lines are events."""
    lines = [line for line in head.splitlines()[:5] if line.strip()]
    return bool(lines) and all(_LINE.match(line) for line in lines[:-1] or lines)


def events_by_device(lines: Iterable[str]) -> dict[tuple[int, int], DeviceEvents]:
    """Every event of ``lines``, by device (major, minor); bounded as
    :func:`~volbench.trace.events.numbered_lines` and
    :func:`~volbench.trace.events.event_numbers` say, times checked by an
    :class:`~volbench.trace.clock.EventClock`, at most :data:`MAX_DEVICES` devices
    and :data:`~volbench.trace.events.MAX_EVENTS` events kept."""
    found: dict[tuple[int, int], DeviceEvents] = {}
    source = getattr(lines, "name", "trace text")
    clock = EventClock(source)
    kept = 0
    for number, line in numbered_lines(lines):
        match = _LINE.match(line)
        if match is None:
            continue
        major, minor, seconds, fraction, action, rwbs, sector, sectors = match.groups()
        if action not in "QDC":
            continue
        time_ns, device, first, count = event_numbers(
            f"{source} line {number}",
            seconds,
            fraction,
            (major, minor),
            sector or "0",
            sectors or "0",
        )
        clock.check(time_ns, number)
        events = found.get(device)
        if events is None:
            if len(found) >= MAX_DEVICES:
                raise UsageError(
                    f"{source} line {number}: more than {MAX_DEVICES:,} devices traced:"
                    " give blkparse the device's own trace (blkparse -i DEVICE)"
                )
            events = found[device] = DeviceEvents()
        if action != "C":
            events.issues += 1
            if action == "D" and not events.dispatched:
                events.dispatched = True
                kept -= events.drop_queued()
            elif action == "Q" and events.dispatched:
                continue
        op = op_of(rwbs, count)
        if op is None:
            continue
        kept += 1
        if kept > MAX_EVENTS:
            raise UsageError(
                f"{source}: more than {MAX_EVENTS:,} events: split the trace"
                " (blkparse -w START:END) or capture a shorter time"
            )
        events.add(time_ns, ord(action), op, first, count)
    return found


def pick_device(found: dict[tuple[int, int], DeviceEvents], source: str) -> tuple[int, int]:
    """The device a file's events are about: the only one, or the one with the most
    issued requests (several devices traced at once; the first of equals)."""
    if not found:
        raise UsageError(f"{source}: no block I/O events (is it blkparse's default output?)")
    return max(found, key=lambda device: found[device].issues)


def build(events: DeviceEvents) -> IoTrace:
    """The trace of one device's events (issues: ``D``, else ``Q``), in time order
    (events of the same time in the file's)."""
    issued = DISPATCHED if events.dispatched else QUEUED
    times, actions, ops, sector = events.time_ns, events.actions, events.ops, events.sector
    order: Iterable[int] = range(len(events))
    if any(b < a for a, b in pairwise(times)):
        order = sorted(order, key=times.__getitem__)
    builder = TraceBuilder()
    for i in order:
        if actions[i] == COMPLETED:
            builder.complete(times[i], chr(ops[i]), sector[i])
        elif actions[i] == issued:
            builder.issue(times[i], chr(ops[i]), sector[i], events.sectors[i] * SECTOR_BYTES)
    return builder.build()
