"""The "blocks never written" check: a read test over a range no write reached, on this
volume, in this run or a stored one before it (:mod:`volbench.analysis.written_ranges`).

A thin volume answers a read of a block nothing wrote without touching its medium
(Google Cloud, "Benchmarking persistent disk performance": fill the disk before
reading it; AWS, "Initialize Amazon EBS volumes": a restored volume's first read of a
block is slower), so such a read test measures something other than the volume. A
test is marked when at least :data:`UNWRITTEN_LIMIT` of the bytes its reads addressed
were never written. Pure functions of the stored runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from volbench.analysis.validity import Checked, Mark, MarkKind
from volbench.analysis.validity_facts import TestFacts
from volbench.analysis.written_ranges import (
    RunWrites,
    Written,
    place_bytes,
    reach,
    written_before,
)
from volbench.model import RunRecord, StoredResult, TargetInfo
from volbench.units import format_bytes

UNWRITTEN_LIMIT = 0.05
"""The share of a read test's range never written from which it is marked: below it,
fewer than 1 read in 20 (uniform random reads) met a block nothing wrote. volbench's
choice, not a published threshold."""

FILL_ADVICE = (
    "run it again with --fill (it writes the range once before the tests, as Google "
    "Cloud's benchmarking page fills a disk), or write the range in a run before it"
)


NOT_NAMED = (
    "blocks never written: volbench cannot name this volume again (several places or "
    "files at once, an imported output), so what was written on it before is not known"
)
NOT_LAID_OUT = (
    "blocks never written: a file volbench did not lay out (whether it has holes, read "
    "without touching the device, is not recorded)"
)


def unchecked_reason(target: TargetInfo, before: Written | None) -> str | None:
    """Why the check cannot judge a test on ``target`` (None: it can): ``before`` not
    known (:func:`volbench.volume_writes.volume_history` found no volume to name), or
    a file volbench did not lay out, which may hold holes (read as zeros without the
    device) that no stored run records."""
    if before is None:
        return NOT_NAMED
    if target.kind == "file" and not target.created_by_volbench:
        return NOT_LAID_OUT
    return None


def unwritten_mark(
    rows: Sequence[StoredResult], target: TargetInfo, before: Written | None
) -> Mark | None:
    """The mark of a test with fio's ``rows`` (one per direction) on ``target`` when
    its reads met blocks never written (None: no read, at most :data:`UNWRITTEN_LIMIT`
    of its range unwritten, or a test the check cannot judge: :func:`unchecked_reason`).
    ``before``: what was written on the volume before the test
    (:func:`~volbench.analysis.written_ranges.written_before` of the runs stored on it,
    :func:`volbench.volume_writes.volume_history`; None: not known)."""
    reads = [r for r in rows if r.direction == "read" and r.io_bytes > 0]
    capacity = target.capacity_bytes
    if not reads or capacity <= 0 or before is None or unchecked_reason(target, before):
        return None
    row = reads[0]
    read = reach(row.workload, place_bytes(row), capacity)
    share = before.unwritten_share(read.start_bytes, read.end_bytes)
    if share < UNWRITTEN_LIMIT:
        return None
    return Mark(
        MarkKind.UNWRITTEN,
        f"{share:.0%} of the blocks it read were never written",
        _evidence(row, read.start_bytes, read.end_bytes, share, before.writers),
        FILL_ADVICE,
        {
            "unwritten_share": round(share, 4),
            "read_start_bytes": read.start_bytes,
            "read_end_bytes": read.end_bytes,
            "read_io_bytes": row.io_bytes,
        },
    )


def run_marks(run: RunRecord, history: Sequence[RunWrites] | None) -> dict[tuple[int, str], Mark]:
    """The marks of ``run``'s tests by (round, test): each test's rows against what was
    written before it, ``history`` being the runs stored on its volume, ``run`` among
    them, in the order they ran (:func:`volbench.volume_writes.volume_history`; None:
    the volume cannot be named, nothing is judged)."""
    tests: dict[tuple[int, str], list[StoredResult]] = {}
    for row in run.aggregate:
        tests.setdefault((row.round, row.test), []).append(row)
    if history is None:
        return {}
    capacity = run.target.capacity_bytes
    before = written_before(history, capacity, run.id, (r for r, _ in tests))
    found = {}
    for (round_no, test), rows in tests.items():
        mark = unwritten_mark(rows, run.target, before[round_no])
        if mark is not None:
            found[(round_no, test)] = mark
    return found


def _evidence(
    row: StoredResult, start: int, end: int, share: float, writers: Sequence[int]
) -> tuple[str, ...]:
    how = "sequentially" if not (row.workload.rw or "").startswith("rand") else "at random"
    written = (
        f"written before on this volume by run{'s' if len(writers) > 1 else ''} "
        + ", ".join(str(w) for w in writers)
        if writers
        else "no stored run wrote this volume before it"
    )
    return (
        f"it read {format_bytes(row.io_bytes)} {how} over bytes {format_bytes(start)} to "
        f"{format_bytes(end)} of the volume (fio's io_bytes)",
        f"{written}; {share:.1%} of that range never written",
    )


def check(facts: TestFacts) -> Checked:
    """The check of the validity service (:data:`volbench.analysis.run_validity.CHECKS`):
    a read test's mark against what was written before its round (``facts.written``, from
    the volume's history the view gave: ``facts.known``); not run when the view did not
    ask the store, unchecked when the volume cannot be named or its file may hold holes."""
    if not facts.known.volume_known or not facts.reads:
        return Checked()
    reason = unchecked_reason(facts.target, facts.written)
    if reason is not None:
        return Checked(unchecked=(reason,))
    mark = unwritten_mark(facts.rows, facts.target, facts.written)
    return Checked((mark,) if mark is not None else ())
