"""A block I/O trace as volbench keeps it: one record per request, in issue order.

The kernel reports two events per request (blktrace's ``D`` issue-to-driver and
``C`` complete; the ``block_rq_issue`` and ``block_rq_complete`` tracepoints). A
:class:`TraceBuilder` takes them in time order and pairs each completion with the
oldest open issue of the same start sector and kind (FIFO, as the device completes
a sector's requests in order), giving one I/O with its latency. Requests issued
before the trace began (a completion without an issue) are counted, not kept;
requests still outstanding when it ended keep an unknown latency (-1).

An :class:`IoTrace` is columns (``array``), not objects: a million I/Os take about
33 MB and characterise in seconds (BENCHMARKS.md, "bench/trace_profile").
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field

SECTOR_BYTES = 512
"""The block layer counts sectors of 512 bytes whatever the device's block size."""

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


@dataclass
class TraceBuilder:
    """Pairs issue and completion events (fed in time order) into an :class:`IoTrace`.

    Times are nanoseconds on any clock; the first event's time becomes 0.
    """

    _issue: list[int] = field(default_factory=list)
    _latency: list[int] = field(default_factory=list)
    _offset: list[int] = field(default_factory=list)
    _size: list[int] = field(default_factory=list)
    _ops: list[str] = field(default_factory=list)
    _open: dict[tuple[str, int], deque[int]] = field(default_factory=dict)
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
        self._ops.append(op)
        self._open.setdefault((op, sector), deque()).append(index)
        self._last = max(self._last, time_ns)

    def complete(self, time_ns: int, op: str, sector: int) -> None:
        if self._start is None:
            self._start = time_ns
        self._last = max(self._last, time_ns)
        waiting = self._open.get((op, sector))
        if not waiting:
            self.before += 1
            return
        index = waiting.popleft()
        if not waiting:
            del self._open[(op, sector)]
        self._latency[index] = max(0, time_ns - self._start - self._issue[index])

    def build(self, duration_ns: int | None = None) -> IoTrace:
        """The trace so far; ``duration_ns`` when known (else the events' span)."""
        columns = (self._issue, self._latency, self._offset, self._size)
        ops = self._ops
        if any(b < a for a, b in zip(self._issue, self._issue[1:], strict=False)):
            order = sorted(range(len(ops)), key=self._issue.__getitem__)  # CPUs interleave
            columns = tuple([c[i] for i in order] for c in columns)  # type: ignore[assignment]
            ops = [ops[i] for i in order]
        span = self._last - self._start if self._start is not None else 0
        issue, latency, offset, size = (array("q", c) for c in columns)
        return IoTrace(
            issue, latency, offset, size, "".join(ops), max(span, duration_ns or 0),
            self.before, self.lost,
        )  # fmt: skip
