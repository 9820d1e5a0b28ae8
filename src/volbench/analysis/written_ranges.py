"""What writes reached on one volume: byte ranges, each with the share of its bytes
written at least once, from the tests stored on it (their workloads and fio's own
``io_bytes``). Pure functions.

A thin volume (a cloud disk, a sparse image, an SSD's unmapped blocks) answers a read
of a block nothing wrote without touching its medium, so a read test over such blocks
measures something else (Google Cloud, "Benchmarking persistent disk performance":
"Persistent disk reads from empty blocks have a latency profile that is different from
blocks that contain data"). How far a write reached:

- a sequential write covers its range from its offset, as far as each job's bytes went
  (``io_bytes`` / numjobs; a time-based test wraps around and covers it all);
- a random write with ``norandommap`` (volbench's random workloads; fio's HOWTO,
  "norandommap": "fio will just get a new random offset without looking at past I/O
  history. This means that some blocks may not be read or written") picks each block
  independently: after writing ``b`` bytes over a range of ``r`` bytes the share never
  written is about ``exp(-b / r)`` (each pass of the range's size leaves about 1/e,
  37 %, of it unwritten), whatever the block size; with fio's random map (a job file
  without ``norandommap``: "Normally fio will cover every block of the file when doing
  random I/O", whatever its ``randrepeat``) each job writes every block once a pass.
  A skewed ``random_distribution`` reaches fewer blocks than a uniform one with the
  same bytes: counted as uniform, the share never written is a lower bound;
- a discard (TRIM: ``blkdiscard``, a device's own purge, a lab image's punched holes,
  a job file's trim test) un-writes what it covers; a zero fill (``blkdiscard
  --zeroout``, the kernel's BLKZEROOUT, which writes without unmapping) writes it.

Writes of independent tests combine as independent draws: a span's unwritten share is
the product of each write's. A test on several volumes at once counts its share of
each. Bytes fio wrote during ``ramp_time`` are not in
``io_bytes``: left out, so what is counted never exceeds what was written.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from volbench.model import StoredResult, StoredWorkload


@dataclass(frozen=True)
class Span:
    """Bytes ``start_bytes`` to ``end_bytes`` (end excluded) of a volume, of which a
    share ``written`` (0 to 1) was written at least once."""

    start_bytes: int
    end_bytes: int
    written: float


@dataclass(frozen=True)
class Reach:
    """Where one test's I/O of one direction went: ``start_bytes`` to ``end_bytes``,
    each byte of it reached with probability ``share`` (1: every byte)."""

    start_bytes: int
    end_bytes: int
    share: float


@dataclass(frozen=True)
class Written:
    """What was written on a volume of ``capacity_bytes``: disjoint spans in order that
    cover it whole, and the runs whose writes (or discards) made them."""

    capacity_bytes: int
    spans: tuple[Span, ...]
    writers: tuple[int, ...] = ()

    @classmethod
    def nothing(cls, capacity_bytes: int) -> Written:
        """A volume nothing wrote (a fresh thin volume, a purged one)."""
        return cls(capacity_bytes, (Span(0, capacity_bytes, 0.0),) if capacity_bytes else ())

    def unwritten_share(self, start_bytes: int, end_bytes: int) -> float:
        """The share of bytes ``start_bytes`` to ``end_bytes`` never written (bytes past
        the volume's end count as never written); 0 for an empty range."""
        if end_bytes <= start_bytes:
            return 0.0
        written = 0.0
        for span in self.spans:
            low, high = max(span.start_bytes, start_bytes), min(span.end_bytes, end_bytes)
            if high > low:
                written += (high - low) * span.written
        return 1.0 - written / (end_bytes - start_bytes)

    def with_write(self, reach: Reach, run_id: int) -> Written:
        """This, after a write that reached ``reach``."""
        return self._changed(reach, lambda w: 1.0 - (1.0 - w) * (1.0 - reach.share), run_id)

    def with_discard(self, reach: Reach, run_id: int) -> Written:
        """This, after a discard (TRIM) that reached ``reach``."""
        return self._changed(reach, lambda w: w * (1.0 - reach.share), run_id)

    def _changed(self, reach: Reach, change: Callable[[float], float], run_id: int) -> Written:
        start, end = max(0, reach.start_bytes), min(self.capacity_bytes, reach.end_bytes)
        if end <= start or reach.share <= 0.0:
            return self
        spans: list[Span] = []
        for span in self.spans:
            cuts = sorted({span.start_bytes, span.end_bytes, *_inside(span, start, end)})
            for low, high in itertools.pairwise(cuts):
                touched = low >= start and high <= end
                spans.append(Span(low, high, change(span.written) if touched else span.written))
        writers = self.writers if run_id in self.writers else (*self.writers, run_id)
        return replace(self, spans=_merged(spans), writers=writers)


def _inside(span: Span, start: int, end: int) -> tuple[int, ...]:
    return tuple(cut for cut in (start, end) if span.start_bytes < cut < span.end_bytes)


def _merged(spans: Sequence[Span]) -> tuple[Span, ...]:
    """Neighbouring spans of the same share as one."""
    out: list[Span] = []
    for span in spans:
        if out and math.isclose(out[-1].written, span.written, abs_tol=1e-12):
            out[-1] = Span(out[-1].start_bytes, span.end_bytes, out[-1].written)
        else:
            out.append(span)
    return tuple(out)


def addressed(workload: StoredWorkload, capacity_bytes: int) -> tuple[int, int]:
    """The bytes a test's jobs address: from its offset, its size (none: to the end
    of the volume), within the volume."""
    start = min(max(0, workload.offset_bytes or 0), capacity_bytes)
    size = workload.size_bytes
    end = capacity_bytes if size is None else min(capacity_bytes, start + size)
    return start, end


def reach(
    workload: StoredWorkload,
    io_bytes: int,
    capacity_bytes: int,
    random_map: bool = False,
) -> Reach:
    """Where ``io_bytes`` (fio's, of one direction, all the test's jobs) of a test
    with ``workload`` went on a volume of ``capacity_bytes``: a sequential test's
    prefix of its range, as far as each job got, or a random test's whole range with
    the share of it reached (module docstring). ``random_map``: the random offsets
    came from fio's random map (no ``norandommap``: a job file's default)."""
    start, end = addressed(workload, capacity_bytes)
    length = end - start
    jobs = max(1, workload.numjobs or 1)
    if length <= 0 or io_bytes <= 0:
        return Reach(start, start, 0.0)
    passes = io_bytes / length
    if not (workload.rw or "").startswith("rand") or workload.random_pct == 0:
        return Reach(start, start + min(length, io_bytes // jobs), 1.0)
    if random_map:
        per_job = min(1.0, passes / jobs)
        return Reach(start, end, 1.0 - (1.0 - per_job) ** jobs)
    return Reach(start, end, 1.0 - math.exp(-passes))


@dataclass(frozen=True)
class RunWrites:
    """What one stored run on a volume did to it, as :func:`written_before` reads it:
    its rows (each test's, every direction), whether volbench laid its target out
    whole first (a scratch file: written every block), the purge it recorded at its
    start (``"discard (blkdiscard)"``, ``"zero fill ..."``; None: none) and the tests
    whose random offsets came from fio's random map."""

    run_id: int
    capacity_bytes: int
    rows: tuple[StoredResult, ...]
    laid_out: bool = False
    purge: str | None = None
    random_map: frozenset[str] = frozenset()


WRITING_PURGES = ("zero fill", "refilled")
"""Purge methods (as :func:`volbench.targets.purge.purge` records them) that write
every block: ``blkdiscard --zeroout`` (BLKZEROOUT writes zeros without unmapping) and a
file emptied and laid out again. Every other method discards."""


def purge_writes(method: str) -> bool | None:
    """Whether purge ``method`` writes every block (True), discards them (False), or
    was no purge (None: ``none (--no-purge)``, or nothing recorded)."""
    if not method or method.startswith("none"):
        return None
    parts = [p.strip() for p in method.split(",")]
    return all(any(w in p for w in WRITING_PURGES) for p in parts)


def written_before(
    runs: Sequence[RunWrites], capacity_bytes: int, run_id: int, rounds: Iterable[int]
) -> dict[int, Written]:
    """What was written on a volume of ``capacity_bytes`` before each of ``rounds`` of
    run ``run_id``, in one pass over ``runs`` (those stored on the volume, in the order
    they ran) up to it: each run's lay-out and purge first, then its rounds in order (a
    test's own writes do not count for its reads: fio reads and writes them at once)."""
    wanted = sorted(set(rounds))
    found: dict[int, Written] = {}
    written = Written.nothing(capacity_bytes)
    for run in runs:
        if run.run_id > run_id:
            break
        whole = Reach(0, run.capacity_bytes, 1.0)
        if run.laid_out:
            written = written.with_write(whole, run.run_id)
        purged = purge_writes(run.purge or "")
        if purged is not None:
            written = (written.with_write if purged else written.with_discard)(whole, run.run_id)
        for row in run.rows:
            while run.run_id == run_id and wanted and row.round >= wanted[0]:
                found[wanted.pop(0)] = written
            if row.direction in ("write", "trim") and row.io_bytes > 0:
                random_map = row.test in run.random_map
                done = reach(row.workload, place_bytes(row), run.capacity_bytes, random_map)
                change = written.with_write if row.direction == "write" else written.with_discard
                written = change(done, run.run_id)
    return {**found, **{r: written for r in wanted}}


def place_bytes(row: StoredResult) -> int:
    """``row``'s bytes on one of its places: an aggregate's share of each place it ran on
    at once (they ran the same test alike), a place's own row as it is."""
    places = row.workload.places if row.place is None else 1
    return row.io_bytes // max(1, places)
