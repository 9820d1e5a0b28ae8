"""``--fill``: write the range a run will read once, before its tests.

A thin volume answers a read of a block nothing wrote without touching its medium, so
the cloud pages fill a disk before reading it: Google Cloud, "Benchmarking persistent
disk performance" ("Fill the disk with nonzero data ... We recommend filling the disk
before running any read latency benchmarks": ``fio --name=fill_disk --bs=128K
--iodepth=64 --rw=randwrite``, every block once through fio's random map); AWS,
"Initialize Amazon EBS volumes" (a volume restored from a snapshot: read every block
once). volbench's fill writes every block of the range once in order, 128 KiB at
queue depth 64 with fresh random data (``refill_buffers``, nothing a volume could
deduplicate): the same bytes as Google's fill, each block once, as PTS's WIPC
preconditioning writes its active range. It is a test of the run, named
:data:`NAME`, run first through the round path every test takes (the safety checks: a
device holding data needs ``--destroy-data``), stored with the run; the "blocks never
written" check (:mod:`volbench.analysis.validity_unwritten`) counts it as written. A
PTS run needs none: its WIPC writes the active range twice before it measures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.model import RW, RunRecord, TestResult, Workload
from volbench.plans.runs.execution import NextRound, PlanSpec
from volbench.records import json_object
from volbench.units import KiB, format_bytes

NAME = "fill"
"""The fill's test name, as runs store it (and the key of its range in the plan's
recorded options)."""

BS_BYTES = 128 * KiB
IODEPTH = 64
"""Google Cloud's fill: ``--bs=128K --iodepth=64``."""


@dataclass(frozen=True)
class FillRange:
    """What a run records of its fill (under the plan's options key :data:`NAME`): the
    range it wrote, from ``offset_bytes``, ``size_bytes`` long (None: to the end of the
    volume)."""

    offset_bytes: int
    size_bytes: int | None


def fill_range(plan: PlanSpec, size_bytes: int | None) -> tuple[int, int | None]:
    """The bytes ``plan`` reads: from its tests' first offset to their last end (None:
    the end of the volume, where a test has no size); an adaptive plan's tests are not
    known before it runs: its active range, from 0 to ``size_bytes`` (None: the
    volume)."""
    if plan.next_round is not None:
        return 0, size_bytes
    reads = [w for round_ in plan.rounds for w in round_ if w.rw.reads]
    if not reads:
        raise UsageError("--fill writes what a run reads, and this one reads nothing: leave it out")
    ends = [None if w.size_bytes is None else w.offset_bytes + w.size_bytes for w in reads]
    known = [e for e in ends if e is not None]
    return min(w.offset_bytes for w in reads), max(known) if len(known) == len(ends) else None


def workload(start_bytes: int, end_bytes: int | None) -> Workload:
    """The fill of bytes ``start_bytes`` to ``end_bytes`` (None: the end of the
    volume): once through, in order."""
    return Workload(
        NAME,
        RW.WRITE,
        bs_bytes=BS_BYTES,
        iodepth=IODEPTH,
        offset_bytes=start_bytes,
        size_bytes=None if end_bytes is None else end_bytes - start_bytes,
        runtime_s=None,
        time_based=False,
        refill_buffers=True,
    )


def with_fill(plan: PlanSpec, capacity_bytes: int, size_bytes: int | None) -> PlanSpec:
    """``plan`` with the fill of what it reads (:func:`fill_range`, within the volume's
    ``capacity_bytes``; 0: not known) as its first test; an adaptive plan chooses its
    next tests without seeing it (:func:`hidden`)."""
    if any(w.name == NAME for round_ in plan.rounds for w in round_):
        raise UsageError(f"--fill: the run has a test named {NAME!r} already (rename it)")
    start, end = fill_range(plan, size_bytes)
    if capacity_bytes > 0:
        end = capacity_bytes if end is None else min(end, capacity_bytes)
        start = min(start, end)
    if end is not None and end <= start:
        raise UsageError("--fill: the range the run reads is empty")
    inner = plan.next_round
    size = None if end is None else end - start
    return dataclasses.replace(
        plan,
        rounds=((workload(start, end),), *plan.rounds),
        next_round=None if inner is None else hidden(inner),
        options={**plan.options, NAME: json_object(FillRange(start, size))},
    )


def hidden(next_round: NextRound) -> NextRound:
    """``next_round`` shown every test but the fill."""

    def without_fill(tests: Sequence[TestResult]) -> Sequence[Workload] | None:
        return next_round([t for t in tests if t.name != NAME])

    return without_fill


def without(run: RunRecord) -> RunRecord:
    """``run`` without its fill's rows (what its plan's own sheets read)."""
    if not any(r.test == NAME for r in run.results):
        return run
    return dataclasses.replace(run, results=tuple(r for r in run.results if r.test != NAME))


def done(run: RunRecord) -> str | None:
    """What ``run``'s fill wrote, from fio's own figures (None: no fill stored)."""
    rows = [r for r in run.aggregate if r.test == NAME and r.direction == "write"]
    if not rows:
        return None
    row = rows[0]
    return (
        f"round {row.round}: the fill (--fill) wrote {format_bytes(row.io_bytes)} at "
        f"{row.bw_bytes_per_s / 1e6:,.1f} MB/s before the tests"
    )


def note(plan: PlanSpec) -> str | None:
    """What the fill of ``plan`` will do, for the line before a run and ``--dry-run``
    (None: no fill). Its time is the range at the volume's write rate, which no
    estimate before the run knows: not in the time shown."""
    fills = [w for round_ in plan.rounds for w in round_ if w.name == NAME]
    if not fills:
        return None
    fill = fills[0]
    size = fill.size_bytes
    end = "the end" if size is None else format_bytes(fill.offset_bytes + size)
    amount = "the range" if size is None else format_bytes(size)
    return (
        f"fill: writes bytes {format_bytes(fill.offset_bytes)} to {end} once before the "
        f"tests (128 KiB in order, queue depth {IODEPTH}); its time, {amount} at the "
        "volume's write rate, is not in the estimated duration"
    )
