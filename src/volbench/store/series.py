"""fio's per-second series in the store: one ``series`` row per round, test, kind of
log, host and direction, holding every job's log of it packed in one compressed blob.

A blob (format 1) is zlib-compressed bytes, all little-endian:

- the format number (uint8, 1), the value type (1 byte: ``q`` int64 when every value
  fio wrote was an integer, which is what fio writes; else ``d`` float64) and the
  number of jobs J (uint32);
- J pairs (fio's job number, number of points), uint32 each;
- every job's times in ms, one after another, as int64 differences (each job's
  first from 0: regular 1000 ms steps compress to almost nothing);
- every job's values, in the same order.

Values keep the unit fio wrote them in (:data:`volbench.fio.logs.UNITS`: IOPS,
KiB/s, ns); times are fio's (ms since the job started, or Unix-epoch ms). Sizes:
BENCHMARKS.md, "bench/series_size".
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import sqlalchemy as sa

from volbench.errors import StoreError
from volbench.model import LogSeries

FORMAT = 1
_HEADER = struct.Struct("<BcI")
_JOB = struct.Struct("<II")
_INT64 = (-(2**63), 2**63 - 1)

Points = Sequence[tuple[int, int | float]]
"""(time in ms, value) pairs of one job's log, as fio wrote them."""


def pack(jobs: Sequence[tuple[int, Points]]) -> bytes:
    """The blob of the logs ``jobs`` ((fio's job number, its points) pairs)."""
    times, values = array("q"), []
    for _, points in jobs:
        stamps = [t for t, _ in points]
        times.extend(t - before for before, t in zip([0, *stamps], stamps, strict=False))
        values += [v for _, v in points]
    whole = all(type(v) is int and _INT64[0] <= v <= _INT64[1] for v in values)
    packed = array("q", values) if whole else array("d", values)
    if sys.byteorder == "big":
        times.byteswap()
        packed.byteswap()
    parts = [_HEADER.pack(FORMAT, packed.typecode.encode(), len(jobs))]
    parts += [_JOB.pack(job, len(points)) for job, points in jobs]
    return zlib.compress(b"".join([*parts, times.tobytes(), packed.tobytes()]))


def unpack(blob: bytes) -> list[tuple[int, tuple[tuple[int, int | float], ...]]]:
    """The (job number, points) pairs of a blob made by :func:`pack`, with the same
    times and values (an integer value comes back as an int). StoreError for a blob
    it did not make."""
    try:
        data = zlib.decompress(blob)
        fmt, code, count = _HEADER.unpack_from(data)
        typecode = code.decode("ascii", "replace")
        if fmt != FORMAT or typecode not in ("q", "d"):
            raise StoreError(f"a stored series has format {fmt}/{typecode}: upgrade volbench")
        jobs = [_JOB.unpack_from(data, _HEADER.size + i * _JOB.size) for i in range(count)]
    except (zlib.error, struct.error) as exc:
        raise StoreError(f"a stored series is not readable: {exc}") from None
    body = memoryview(data)[_HEADER.size + count * _JOB.size :]
    total = sum(n for _, n in jobs)
    if len(body) != 16 * total:
        raise StoreError(f"a stored series holds {len(body)} bytes for {total} points")
    times, values = array("q"), array(typecode)
    times.frombytes(body[: 8 * total])
    values.frombytes(body[8 * total :])
    if sys.byteorder == "big":
        times.byteswap()
        values.byteswap()
    found = []
    start = 0
    for job, n in jobs:
        clock = accumulate(times[start : start + n])
        found.append((job, tuple(zip(clock, values[start : start + n], strict=True))))
        start += n
    return found


def series_rows(run_id: int, found: Sequence[LogSeries]) -> list[dict[str, Any]]:
    """The ``series`` rows of ``found``: one per round, test, kind, host and direction,
    with the jobs in the order given."""
    groups: dict[tuple[int, str, str, str | None, str], list[LogSeries]] = {}
    for s in found:
        groups.setdefault((s.round, s.test, s.kind, s.host, s.direction), []).append(s)
    return [
        {
            "run_id": run_id,
            "round": round_no,
            "test": test,
            "kind": kind,
            "host": host,
            "direction": direction,
            "samples": sum(len(s.points) for s in jobs),
            "data": pack([(s.job, s.points) for s in jobs]),
        }
        for (round_no, test, kind, host, direction), jobs in groups.items()
    ]


def log_series(row: sa.Row[Any]) -> list[LogSeries]:
    """The series (one per job) of a ``series`` row."""
    return [
        LogSeries(row.round, row.test, row.kind, job, row.host, row.direction, points)
        for job, points in unpack(bytes(row.data))
    ]
