"""An :class:`~volbench.trace.events.IoTrace` as stored: parts of at most
:data:`PART_IOS` requests, each one compressed blob.

A part (format 1) is zlib-compressed bytes, all little-endian: the format number
(uint8, 1) and the number of requests N (uint32); then N issue times as int64
differences (the part's first from 0: issue times only grow), N latencies, N
offsets as int64 differences from the previous request's end (sequential I/O is
all zeros), N sizes (int64) and N operation letters (one byte each). The trace's
own figures (duration, requests issued before it, events lost) are kept apart
(:func:`trace_meta`), as are the times of the parts (each part's first issue time).
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from volbench.errors import StoreError
from volbench.model import TracePart
from volbench.trace.events import IoTrace

FORMAT = 1
PART_IOS = 262_144
"""Requests per stored part (about 2 MB compressed at most)."""
_HEADER = struct.Struct("<BI")


def _le(values: array[int]) -> bytes:
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def pack_part(trace: IoTrace, start: int, stop: int) -> bytes:
    """The blob of requests ``start``..``stop`` of ``trace``."""
    issue = trace.issue_ns[start:stop]
    offset = trace.offset_bytes[start:stop]
    size = trace.size_bytes[start:stop]
    first = issue[0] if len(issue) else 0
    issue_d = array("q", (b - a for a, b in zip([first, *issue], issue, strict=False)))
    ends = [0, *(o + s for o, s in zip(offset, size, strict=True))]
    offset_d = array("q", (o - e for e, o in zip(ends, offset, strict=False)))
    parts = [
        _HEADER.pack(FORMAT, stop - start),
        _le(issue_d),
        _le(trace.latency_ns[start:stop]),
        _le(offset_d),
        _le(size),
        trace.ops[start:stop].encode("ascii"),
    ]
    return zlib.compress(b"".join(parts), 6)


def unpack_part(blob: bytes, first_ns: int) -> tuple[list[array[int]], str]:
    """The columns (issue, latency, offset, size) and letters of one part."""
    try:
        data = zlib.decompress(blob)
        fmt, count = _HEADER.unpack_from(data)
    except (zlib.error, struct.error) as exc:
        raise StoreError(f"a stored trace is not readable: {exc}") from None
    if fmt != FORMAT:
        raise StoreError(f"a stored trace has format {fmt}: upgrade volbench")
    if len(data) != _HEADER.size + 33 * count:
        raise StoreError(f"a stored trace part holds {len(data)} bytes for {count} requests")
    columns = []
    at = _HEADER.size
    for _ in range(4):
        column = array("q")
        column.frombytes(data[at : at + 8 * count])
        if sys.byteorder == "big":
            column.byteswap()
        columns.append(column)
        at += 8 * count
    ops = data[at:].decode("ascii")
    issue_d, latency, offset_d, size = columns
    issue = array("q", accumulate(issue_d, initial=first_ns))[1:]
    offset = array("q")
    end = 0
    for delta, length in zip(offset_d, size, strict=True):
        offset.append(end + delta)
        end += delta + length
    return [issue, latency, offset, size], ops


def pack(trace: IoTrace) -> tuple[TracePart, ...]:
    """The stored parts of ``trace``."""
    return tuple(
        TracePart(
            trace.issue_ns[start],
            min(len(trace), start + PART_IOS) - start,
            pack_part(trace, start, min(len(trace), start + PART_IOS)),
        )
        for start in range(0, len(trace), PART_IOS)
    )


@dataclass(frozen=True)
class TraceMeta:
    """What a trace holds besides its requests: its length (ns), the requests issued
    before it began and the events the kernel lost (stored with the run's settings)."""

    duration_ns: int = 0
    before: int = 0
    lost: int = 0


def unpack(parts: Sequence[TracePart], meta: TraceMeta) -> IoTrace:
    """The trace of its stored parts (in order) and :func:`trace_meta`."""
    issue, latency, offset, size = (array("q") for _ in range(4))
    letters = []
    for part in parts:
        (i, lat, off, sz), ops = unpack_part(part.data, part.first_ns)
        if len(ops) != part.ios:
            raise StoreError(f"a stored trace part holds {len(ops)} requests, not {part.ios}")
        issue.extend(i)
        latency.extend(lat)
        offset.extend(off)
        size.extend(sz)
        letters.append(ops)
    return IoTrace(
        issue,
        latency,
        offset,
        size,
        "".join(letters),
        meta.duration_ns,
        meta.before,
        meta.lost,
    )


def trace_meta(trace: IoTrace) -> TraceMeta:
    """What a trace holds besides its requests (stored with the run's settings)."""
    return TraceMeta(trace.duration_ns, trace.before, trace.lost)
