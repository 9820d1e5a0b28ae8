"""A block I/O trace as volbench keeps it: one record per request, in issue order.

The kernel reports two events per request (blktrace's ``D`` issue-to-driver and
``C`` complete; the ``block_rq_issue`` and ``block_rq_complete`` tracepoints). A
:class:`TraceBuilder` takes them in time order and pairs each completion with the
oldest open issue of the same start sector and kind (FIFO, as the device completes
a sector's requests in order), giving one I/O with its latency. Requests issued
before the trace began (a completion without an issue) are counted, not kept;
requests still outstanding when it ended keep an unknown latency (-1).

An :class:`IoTrace` is columns (``array``), not objects: a million I/Os take about
33 MB and characterise in seconds (BENCHMARKS.md, "bench/trace_profile"); so is the
:class:`TraceBuilder` that pairs them.

Trace text is hostile input (an imported file): :func:`numbered_lines` reads lines of
at most :data:`MAX_LINE` characters, and :func:`event_numbers` refuses, in one line
naming the line, a time, device or sector that no kernel prints or that the
columns (signed 64-bit) cannot hold; a file holds at most :data:`MAX_EVENTS` events
kept (:mod:`volbench.trace.clock` checks their times). At that limit, ``volbench
import`` of a million requests in 136 MB of blkparse text took 16 s of CPU and
250 MB at most, 390 MB with every request waiting for its completion at once
(BENCHMARKS.md, "bench/trace_import").
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise

from volbench.errors import UsageError

SECTOR_BYTES = 512
"""The block layer counts sectors of 512 bytes whatever the device's block size."""

MAX_LINE = 4096
"""The longest line of trace text read (an event's line is about 100 characters)."""
MAX_EVENTS = 2_000_000
"""The most events (issues and completions, those kept) one file may hold: a million
requests."""
MAX_SECONDS = 9_000_000_000
"""The latest event time, in seconds: nanoseconds stay below 2**63."""
MAX_SECTOR = 2**54
"""Sectors end below this: byte offsets (x 512) stay below 2**63."""
MAX_DEVICE_NUMBER = 2**32
"""A device's major or minor number is below this (Linux: 12 and 20 bits)."""

READ, WRITE, TRIM, FLUSH = "R", "W", "D", "F"
OPS: dict[str, str] = {READ: "read", WRITE: "write", TRIM: "trim", FLUSH: "flush"}
"""One letter per kind of request (blkparse's RWBS letters) -> its name."""


def op_of(rwbs: str, sectors: int) -> str | None:
    """The kind of request from the RWBS field (blkparse(1), "RWBS": R read, W write,
    D discard, E secure erase, F flush, S sync, M metadata, A read-ahead, N none):
    a discard or erase is a trim, a request with data a read or write, an empty one
    with F a flush; None for anything else (no data, no flush)."""
    if sectors > 0:
        if "D" in rwbs or "E" in rwbs:
            return TRIM
        if "W" in rwbs:
            return WRITE
        if "R" in rwbs:
            return READ
        return None
    return FLUSH if "F" in rwbs else None


def numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) of ``lines``; a file object is read with
    ``readline(MAX_LINE + 1)``, so a file without line breaks is never read whole.
    A line longer than :data:`MAX_LINE` is a :class:`UsageError` naming it."""
    readline = getattr(lines, "readline", None)
    source = getattr(lines, "name", "trace text")
    chunks: Iterable[str] = (
        iter(partial(readline, MAX_LINE + 1), "") if readline is not None else lines
    )
    for number, line in enumerate(chunks, 1):
        if len(line) > MAX_LINE:
            raise UsageError(f"{source} line {number}: longer than {MAX_LINE} characters")
        yield number, line


def event_numbers(
    where: str, seconds: str, fraction: str, device: tuple[str, str], sector: str, sectors: str
) -> tuple[int, tuple[int, int], int, int]:
    """(time in ns, (major, minor), sector, sectors) of one event's digits; a
    :class:`UsageError` naming ``where`` when one is beyond what a kernel prints or
    the trace's 64-bit columns hold (the digits are checked before conversion)."""
    if seconds.startswith("-"):
        raise UsageError(
            f"{where}: time {seconds[:24]}.{fraction[:9]} is negative, which blkparse and the"
            " kernel never print: give their output unchanged"
        )
    # the usual line's digits are below every limit by their count alone (10**9 s,
    # 10**9 < 2**32, 10**16 < 2**54); only longer ones are weighed
    if max(len(seconds), len(device[0]), len(device[1])) > 9 or max(len(sector), len(sectors)) > 16:
        for label, digits, limit in (
            ("time", seconds, MAX_SECONDS),
            ("device number", device[0], MAX_DEVICE_NUMBER - 1),
            ("device number", device[1], MAX_DEVICE_NUMBER - 1),
            ("sector", sector, MAX_SECTOR),
            ("sector count", sectors, MAX_SECTOR),
        ):
            if len(digits) > 20 or int(digits) > limit:
                raise UsageError(f"{where}: {label} {digits[:24]} is beyond {limit:,}")
    first, count = int(sector), int(sectors)
    if first + count > MAX_SECTOR:
        raise UsageError(f"{where}: sectors {first:,} + {count:,} end beyond {MAX_SECTOR:,}")
    time_ns = int(seconds) * 1_000_000_000 + int(fraction[:9].ljust(9, "0"))
    return time_ns, (int(device[0]), int(device[1])), first, count


@dataclass(frozen=True)
class IoTrace:
    """The requests of one trace in issue order, as parallel columns.

    ``issue_ns`` is nanoseconds since the trace began; ``latency_ns`` issue to
    completion (-1: not seen); ``ops`` one letter per request (:data:`OPS`).
    ``duration_ns`` is how long the trace ran (at least the span of its events).
    ``before`` counts completions of requests issued before it began, ``lost`` the
    events the kernel dropped (its trace buffer was full).
    """

    issue_ns: array[int]
    latency_ns: array[int]
    offset_bytes: array[int]
    size_bytes: array[int]
    ops: str
    duration_ns: int
    before: int = 0
    lost: int = 0

    def __len__(self) -> int:
        return len(self.ops)

    def count(self, op: str) -> int:
        return self.ops.count(op)


_KIND_BITS = {READ: 0, WRITE: 1, TRIM: 2, FLUSH: 3}
"""Each kind's code in the low two bits of a waiting request's key (sector x 4)."""


@dataclass
class TraceBuilder:
    """Pairs issue and completion events (fed in time order) into an :class:`IoTrace`.

    Times are nanoseconds on any clock; the first event's time becomes 0. The builder
    keeps columns (33 bytes a request) and, for the requests waiting for their
    completion, one entry per sector and kind: the oldest waiting, and the requests
    after it chained through ``_next`` (a FIFO of arrays, not an object per request).
    :meth:`build` is called once, at the end: the trace takes the builder's columns.
    """

    _issue: array[int] = field(default_factory=lambda: array("q"))
    _latency: array[int] = field(default_factory=lambda: array("q"))
    _offset: array[int] = field(default_factory=lambda: array("q"))
    _size: array[int] = field(default_factory=lambda: array("q"))
    _ops: bytearray = field(default_factory=bytearray)
    _next: array[int] = field(default_factory=lambda: array("q"))
    """For each request, the next one issued to its sector and kind while it waited."""
    _head: dict[int, int] = field(default_factory=dict)
    """(sector x 4 + kind) -> the oldest request waiting for its completion."""
    _tail: dict[int, int] = field(default_factory=dict)
    """(sector x 4 + kind) -> the newest waiting request, when more than one waits."""
    _start: int | None = None
    _last: int = 0
    before: int = 0
    lost: int = 0

    def issue(self, time_ns: int, op: str, sector: int, size_bytes: int) -> None:
        if self._start is None:
            self._start = time_ns
        index = len(self._ops)
        self._issue.append(time_ns - self._start)
        self._latency.append(-1)
        self._offset.append(sector * SECTOR_BYTES)
        self._size.append(size_bytes)
        self._ops.append(ord(op))
        self._next.append(-1)
        key = sector << 2 | _KIND_BITS[op]
        oldest = self._head.get(key)
        if oldest is None:
            self._head[key] = index
        else:
            self._next[self._tail.get(key, oldest)] = index
            self._tail[key] = index
        self._last = max(self._last, time_ns)

    def complete(self, time_ns: int, op: str, sector: int) -> None:
        if self._start is None:
            self._start = time_ns
        self._last = max(self._last, time_ns)
        key = sector << 2 | _KIND_BITS[op]
        index = self._head.get(key)
        if index is None:
            self.before += 1
            return
        following = self._next[index]
        if following < 0:
            del self._head[key]
        else:
            self._head[key] = following
            if self._tail[key] == following:
                del self._tail[key]
        self._latency[index] = max(0, time_ns - self._start - self._issue[index])

    def build(self, duration_ns: int | None = None) -> IoTrace:
        """The trace so far; ``duration_ns`` when known (else the events' span)."""
        issue, latency, offset, size = self._issue, self._latency, self._offset, self._size
        ops = self._ops
        if any(b < a for a, b in pairwise(issue)):  # CPUs interleave
            order = sorted(range(len(ops)), key=issue.__getitem__)
            issue, latency, offset, size = (
                array("q", (c[i] for i in order)) for c in (issue, latency, offset, size)
            )
            ops = bytearray(ops[i] for i in order)
        earliest = min(issue, default=0)  # an event of another CPU before the first
        if earliest < 0:
            issue = array("q", (t - earliest for t in issue))
        span = self._last - self._start - min(earliest, 0) if self._start is not None else 0
        return IoTrace(
            issue,
            latency,
            offset,
            size,
            ops.decode("ascii"),
            max(span, duration_ns or 0),
            self.before,
            self.lost,
        )
