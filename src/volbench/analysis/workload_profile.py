"""Characterising a block I/O trace the way SNIA's Real World Storage Workload
(RWSW) Performance Test Specification for Datacenter Storage does: I/O count and
rate over time, read/write mix, block-size histogram, sequential vs random,
queue depth over time, working set, how concentrated the accesses are, and the
few dominant access patterns (RWSW "IO Streams": a transfer size, a direction and
random or sequential access) that make up most of the I/O.

Definitions (all over the read, write and trim requests; flushes carry no data and
are only counted):

- *sequential*: a request that starts where one of the last :data:`STREAM_WINDOW`
  requests of the same direction ended (contiguous with the previous I/O of its
  stream; interleaved streams and reordering at a queue depth keep their
  sequential requests sequential); every other request is *random*.
- *queue depth*: requests issued and not yet completed, over time (from the issue
  and completion events); the mean and percentiles are weighted by time and taken
  over the time the device had work (idle time is not a queue depth of 0 for an
  application that waits for nothing).
- *working set*: the bytes touched at least once (union of the requests' ranges);
  *span*: from the lowest offset touched to the highest end.
- *concentration*: the touched span is cut in regions (:func:`region_bytes`); the
  share of requests that fall in the hottest 5, 20 and 50% of the touched regions.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.trace.clock import MAX_SPAN_NS, MAX_SPAN_S
from volbench.trace.events import FLUSH, OPS, READ, TRIM, WRITE, IoTrace
from volbench.units import KiB, MiB

STREAM_WINDOW = 16
"""How many recent requests of a direction a sequential request may continue."""
HOT_SHARES = (5, 20, 50)
"""The hottest shares of the touched space whose share of requests is reported (%)."""
MAX_REGIONS = 4096
PATTERN_MIN_PCT = 1.0
"""Patterns below this share of the requests are left in "other"."""
PATTERN_COVER_PCT = 95.0
MAX_PATTERNS = 8
QD_PERCENTILE = 90.0
"""The queue depth the application kept: this time-weighted percentile while busy."""


def size_label(size: int) -> str:
    """``4096`` -> ``4 KiB``, ``1048576`` -> ``1 MiB``, ``512`` -> ``512 B``."""
    if size and size % MiB == 0:
        return f"{size // MiB} MiB"
    if size and size % KiB == 0:
        return f"{size // KiB} KiB"
    return f"{size} B"


@dataclass(frozen=True)
class Pattern:
    """One access pattern: random or sequential, a direction, a transfer size, and
    its share of the requests (%)."""

    access: str  # "RND" | "SEQ"
    op: str  # "read" | "write" | "trim"
    size_bytes: int
    share_pct: float

    @property
    def label(self) -> str:
        return f"{self.access} {size_label(self.size_bytes)} {self.op} {self.share_pct:.0f}%"


@dataclass(frozen=True)
class SizeCount:
    op: str
    size_bytes: int
    count: int


@dataclass(frozen=True)
class Latency:
    """Device time (issue to completion) of one direction's requests, in ns."""

    op: str
    count: int
    mean_ns: float
    p50_ns: int
    p99_ns: int
    max_ns: int


@dataclass(frozen=True)
class WorkloadProfile:
    """What a trace shows; see the module docstring for the definitions."""

    ios: int
    counts: dict[str, int]
    """Requests per direction (``read``, ``write``, ``trim``, ``flush``)."""
    bytes_by_op: dict[str, int]
    duration_s: float
    iops: float
    read_pct: float
    """Reads among reads and writes, by count."""
    sequential_pct: float
    sequential_by_op: dict[str, float]
    sizes: tuple[SizeCount, ...]
    qd_mean: float
    qd_percentile: float
    qd_max: int
    busy_pct: float
    longest_idle_s: float
    """The longest time between two requests with nothing outstanding."""
    working_set_bytes: int
    span_bytes: int
    lowest_offset: int
    region_bytes: int
    hot_pct: dict[int, float]
    """Share of requests (%) in the hottest 5, 20 and 50% of the touched regions."""
    patterns: tuple[Pattern, ...]
    pattern_shares: dict[tuple[str, str, int], float]
    """Every (access, op, size) pattern's share (%), for fitting and comparing."""
    latency: tuple[Latency, ...]
    per_second: tuple[tuple[int, int, int], ...]
    """(reads, writes, other) issued in each second of the trace."""
    qd_per_second: tuple[float, ...]
    """Mean queue depth in each second (time-weighted, idle included)."""
    before: int = 0
    lost: int = 0

    @property
    def other_pct(self) -> float:
        return max(0.0, 100.0 - sum(p.share_pct for p in self.patterns))


def sequential_flags(trace: IoTrace) -> bytearray:
    """1 for each sequential request of ``trace`` (see the module docstring)."""
    flags = bytearray(len(trace))
    recent: dict[str, deque[int]] = {}
    ends: dict[str, dict[int, int]] = {}
    for index, (op, offset, size) in enumerate(
        zip(trace.ops, trace.offset_bytes, trace.size_bytes, strict=True)
    ):
        if op == FLUSH:
            continue
        window = recent.get(op)
        if window is None:
            window = recent[op] = deque()
            ends[op] = {}
        seen = ends[op]
        if offset in seen:
            flags[index] = 1
        end = offset + size
        window.append(end)
        seen[end] = seen.get(end, 0) + 1
        if len(window) > STREAM_WINDOW:
            old = window.popleft()
            left = seen[old] - 1
            if left:
                seen[old] = left
            else:
                del seen[old]
    return flags


def _queue_depth(trace: IoTrace) -> tuple[dict[int, int], list[float], int, int]:
    """(time in ns at each queue depth, mean depth per second, highest depth, longest
    time in ns with nothing outstanding between two requests)."""
    end = trace.duration_ns
    # each event as one integer, time x 2 + 1 for an issue (a completion at the same
    # time comes first); two sorted runs, which one sort merges in linear time
    events = [t * 2 + 1 for t in trace.issue_ns]
    events += sorted(
        (i + lat if lat >= 0 else end) * 2
        for i, lat in zip(trace.issue_ns, trace.latency_ns, strict=True)
    )
    events.sort()
    seconds = max(1, math.ceil(end / 1e9))
    area = array("d", bytes(8 * seconds))
    at: dict[int, int] = {}
    depth = highest = idle = 0
    last = 0
    for event in events:
        time = event >> 1
        if time > last:
            if not depth:
                idle = max(idle, time - last)
            else:
                at[depth] = at.get(depth, 0) + time - last
                first, final = last // 1_000_000_000, time // 1_000_000_000
                if first == final:
                    area[min(first, seconds - 1)] += depth * (time - last)
                else:
                    area[first] += depth * ((first + 1) * 1e9 - last)
                    for s in range(first + 1, min(final, seconds)):
                        area[s] += depth * 1e9
                    if final < seconds:
                        area[final] += depth * (time - final * 1e9)
            last = time
        if event & 1:
            depth += 1
            if depth > highest:
                highest = depth
        else:
            depth -= 1
    return at, [a / 1e9 for a in area], highest, idle


def _weighted_percentile(at: dict[int, int], pct: float) -> float:
    total = sum(at.values())
    if not total:
        return 0.0
    running = 0
    for depth in sorted(at):
        running += at[depth]
        if running >= total * pct / 100:
            return float(depth)
    return float(max(at))


def region_bytes(span: int) -> int:
    """The region size for concentration: a power of two, at least 4 KiB, that cuts
    the span into at most :data:`MAX_REGIONS` regions."""
    size = 4 * KiB
    while span > size * MAX_REGIONS:
        size *= 2
    return size


def _working_set(trace: IoTrace) -> int:
    """Bytes covered by at least one request (sweep over sorted starts and ends; a
    flush is an empty range and adds nothing)."""
    starts = sorted(trace.offset_bytes)
    ends = sorted(map(operator.add, trace.offset_bytes, trace.size_bytes))
    covered = depth = 0
    opened = 0
    j = 0
    for start in starts:
        while j < len(ends) and ends[j] <= start:
            depth -= 1
            if depth == 0:
                covered += ends[j] - opened
            j += 1
        if depth == 0:
            opened = start
        depth += 1
    if depth:
        covered += ends[-1] - opened
    return covered


def _hot(trace: IoTrace, data: Sequence[int], low: int, region: int) -> dict[int, float]:
    shift = region.bit_length() - 1
    offsets = trace.offset_bytes
    counts = sorted(Counter((offsets[i] - low) >> shift for i in data).values(), reverse=True)
    total = sum(counts)
    found = {}
    for share in HOT_SHARES:
        top = max(1, math.ceil(len(counts) * share / 100))
        found[share] = 100.0 * sum(counts[:top]) / total if total else 0.0
    return found


def _latency(trace: IoTrace) -> tuple[Latency, ...]:
    found = []
    for op in (READ, WRITE, TRIM):
        values = sorted(
            lat for o, lat in zip(trace.ops, trace.latency_ns, strict=True) if o == op and lat >= 0
        )
        if values:
            n = len(values)
            p50, p99 = values[(n - 1) // 2], values[min(n - 1, math.ceil(0.99 * n) - 1)]
            found.append(Latency(OPS[op], n, sum(values) / n, p50, p99, values[-1]))
    return tuple(found)


def _patterns(shares: dict[tuple[str, str, int], float]) -> tuple[Pattern, ...]:
    chosen: list[Pattern] = []
    for (access, op, size), share in sorted(shares.items(), key=lambda kv: -kv[1]):
        covered = sum(p.share_pct for p in chosen)
        if share < PATTERN_MIN_PCT or len(chosen) >= MAX_PATTERNS or covered >= PATTERN_COVER_PCT:
            break
        chosen.append(Pattern(access, op, size, share))
    return tuple(chosen)


def characterise(trace: IoTrace) -> WorkloadProfile:
    """The profile of ``trace`` (see the module docstring); a :class:`UsageError` when
    it lasts longer than :data:`~volbench.trace.clock.MAX_SPAN_NS` (its per-second
    series take a row a second)."""
    if not 0 <= trace.duration_ns <= MAX_SPAN_NS:
        raise UsageError(
            f"the trace lasts {trace.duration_ns / 1e9:,.0f} s, beyond the {MAX_SPAN_S:,} s"
            " (7 days) a workload profile covers: split it and import each part"
        )
    ops = trace.ops
    counts = {name: ops.count(op) for op, name in OPS.items()}
    data = [i for i, op in enumerate(ops) if op != FLUSH]
    seq = sequential_flags(trace)
    # (sequential, op letter, size) -> requests, counted in C (flushes dropped after)
    counted = Counter(zip(seq, ops, trace.size_bytes, strict=True))
    sizes_counter: Counter[tuple[str, int]] = Counter()
    pattern_counter: Counter[tuple[str, str, int]] = Counter()
    seq_by_op: Counter[str] = Counter()
    bytes_by_op: Counter[str] = Counter()
    for (is_seq, letter, size), count in counted.items():
        if letter == FLUSH:
            continue
        op = OPS[letter]
        sizes_counter[(op, size)] += count
        pattern_counter[("SEQ" if is_seq else "RND", op, size)] += count
        seq_by_op[op] += count if is_seq else 0
        bytes_by_op[op] += size * count
    size_col = trace.size_bytes
    n = len(data)
    shares = {k: 100.0 * v / n for k, v in pattern_counter.items()} if n else {}
    at, qd_seconds, highest, idle = _queue_depth(trace)
    busy = sum(at.values())
    low = min((trace.offset_bytes[i] for i in data), default=0)
    high = max((trace.offset_bytes[i] + size_col[i] for i in data), default=0)
    region = region_bytes(high - low)
    seconds = max(1, math.ceil(trace.duration_ns / 1e9))
    per_second = [array("q", bytes(8 * seconds)) for _ in range(3)]  # reads, writes, other
    column = {READ: 0, WRITE: 1, TRIM: 2, FLUSH: 2}
    by_second = Counter(zip((t // 1_000_000_000 for t in trace.issue_ns), ops, strict=True))
    for (second, letter), count in by_second.items():
        per_second[column[letter]][min(seconds - 1, second)] += count
    rw = counts["read"] + counts["write"]
    duration_s = trace.duration_ns / 1e9
    return WorkloadProfile(
        ios=len(trace),
        counts=counts,
        bytes_by_op=dict(bytes_by_op),
        duration_s=duration_s,
        iops=len(trace) / duration_s if duration_s else 0.0,
        read_pct=100.0 * counts["read"] / rw if rw else 0.0,
        sequential_pct=100.0 * sum(seq_by_op.values()) / n if n else 0.0,
        sequential_by_op={
            OPS[op]: 100.0 * seq_by_op[OPS[op]] / counts[OPS[op]]
            for op in (READ, WRITE, TRIM)
            if counts[OPS[op]]
        },
        sizes=tuple(
            SizeCount(op, size, count)
            for (op, size), count in sorted(
                sizes_counter.items(), key=lambda kv: (kv[0][0], kv[0][1])
            )
        ),
        qd_mean=sum(d * t for d, t in at.items()) / busy if busy else 0.0,
        qd_percentile=_weighted_percentile(at, QD_PERCENTILE),
        qd_max=highest,
        busy_pct=100.0 * busy / trace.duration_ns if trace.duration_ns else 0.0,
        longest_idle_s=idle / 1e9,
        working_set_bytes=_working_set(trace),
        span_bytes=high - low,
        lowest_offset=low,
        region_bytes=region,
        hot_pct=_hot(trace, data, low, region),
        patterns=_patterns(shares),
        pattern_shares=shares,
        latency=_latency(trace),
        per_second=tuple(zip(*per_second, strict=True)),
        qd_per_second=tuple(qd_seconds),
        before=trace.before,
        lost=trace.lost,
    )
