"""What writes reached on a volume (analysis/written_ranges.py) and the "blocks never
written" mark (analysis/validity_unwritten.py), on hand-made stored rows."""

from __future__ import annotations

import dataclasses
import math

import pytest

from stored_rows import bare_row
from volbench.analysis.validity import Mark, MarkKind
from volbench.analysis.validity_unwritten import run_marks, unchecked_reason
from volbench.analysis.written_ranges import (
    Reach,
    RunWrites,
    Written,
    purge_writes,
    reach,
    written_before,
)
from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.units import MiB

GIB = 1024 * MiB


def row(
    round_no: int, test: str, direction: str, rw: str, io_bytes: int, **workload: object
) -> StoredResult:
    return bare_row(
        1.0,
        round=round_no,
        test=test,
        direction=direction,
        workload=StoredWorkload(rw=rw, bs_bytes=4096, numjobs=1, **workload),  # type: ignore[arg-type]
        bw_bytes_per_s=1.0,
        io_bytes=io_bytes,
    )


def run(run_id: int, *rows: StoredResult, kind: str = "block", ours: bool = False) -> RunRecord:
    return RunRecord(
        id=run_id,
        plan="quick",
        status=RunStatus.COMPLETED,
        started_at="2026-11-29T00:00:00",
        ended_at=None,
        target=TargetInfo("/dev/loop9", kind, GIB, created_by_volbench=ours),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(),
        results=rows,
    )


def writes(record: RunRecord, purge: str | None = None) -> RunWrites:
    laid_out = record.target.kind == "file" and record.target.created_by_volbench
    return RunWrites(record.id, GIB, record.aggregate, laid_out=laid_out, purge=purge)


def test_a_sequential_write_covers_the_prefix_each_job_reached() -> None:
    one = reach(StoredWorkload(rw="write", numjobs=2, offset_bytes=MiB), 200 * MiB, GIB)
    assert one == Reach(MiB, 101 * MiB, 1.0)  # 100 MiB a job, from the offset
    wrapped = reach(StoredWorkload(rw="write", size_bytes=64 * MiB), 5 * GIB, GIB)
    assert wrapped == Reach(0, 64 * MiB, 1.0)  # time-based: it went round its range


def test_a_random_write_with_norandommap_leaves_one_in_e_after_a_pass() -> None:
    # fio's HOWTO "norandommap": offsets drawn independently; one pass of the range's
    # size in bytes leaves exp(-1) of it unwritten, two passes exp(-2)
    one = reach(StoredWorkload(rw="randwrite", size_bytes=GIB), GIB, GIB)
    assert one.start_bytes == 0 and one.end_bytes == GIB
    assert one.share == pytest.approx(1 - math.exp(-1))
    two = reach(StoredWorkload(rw="randwrite", numjobs=4), 2 * GIB, GIB)
    assert two.share == pytest.approx(1 - math.exp(-2))


def test_fio_s_random_map_writes_every_block_once_a_pass() -> None:
    full = reach(StoredWorkload(rw="randwrite"), GIB, GIB, random_map=True)
    assert full.share == pytest.approx(1.0)
    half = reach(StoredWorkload(rw="randwrite", numjobs=2), GIB // 2, GIB, random_map=True)
    assert half.share == pytest.approx(1 - 0.75**2)  # two jobs, a quarter pass each


def test_spans_combine_offsets_and_a_discard_unwrites() -> None:
    written = Written.nothing(GIB).with_write(Reach(256 * MiB, 512 * MiB, 1.0), 3)
    assert written.unwritten_share(256 * MiB, 512 * MiB) == 0.0
    assert written.unwritten_share(0, 512 * MiB) == pytest.approx(0.5)
    assert written.unwritten_share(0, GIB) == pytest.approx(0.75)
    random = written.with_write(Reach(0, GIB, 0.5), 4)
    assert random.unwritten_share(0, 256 * MiB) == pytest.approx(0.5)
    assert random.unwritten_share(256 * MiB, 512 * MiB) == 0.0
    assert random.writers == (3, 4)
    trimmed = random.with_discard(Reach(0, 300 * MiB, 1.0), 5)
    assert trimmed.unwritten_share(0, 300 * MiB) == 1.0
    assert trimmed.unwritten_share(300 * MiB, 512 * MiB) == 0.0
    assert [s.start_bytes for s in trimmed.spans] == [0, 300 * MiB, 512 * MiB]


def test_purge_methods_as_pts_records_them() -> None:
    assert purge_writes("discard (blkdiscard)") is False
    assert purge_writes("lab image deallocated (fallocate --punch-hole)") is False
    assert purge_writes("nvme-format") is False
    assert purge_writes("zero fill (blkdiscard --zeroout)") is True
    assert purge_writes("file emptied and refilled") is True
    assert purge_writes("none (--no-purge)") is None


def test_a_pts_run_s_discard_unwrites_what_an_earlier_run_wrote() -> None:
    first = run(1, row(0, "fill", "write", "write", GIB))
    pts = run(2)
    history = [writes(first), writes(pts, "discard (blkdiscard)")]
    assert written_before(history, GIB, 2, [0])[0].unwritten_share(0, GIB) == 1.0
    zeroed = [writes(first), writes(pts, "zero fill (blkdiscard --zeroout)")]
    assert written_before(zeroed, GIB, 2, [0])[0].unwritten_share(0, GIB) == 0.0


def _mark(record: RunRecord, round_no: int, test: str, history: list[RunWrites]) -> Mark | None:
    return run_marks(record, history).get((round_no, test))


def _read_test(**workload: object) -> StoredResult:
    return row(1, "randread", "read", "randread", 64 * MiB, **workload)


def test_a_read_over_blocks_never_written_is_marked() -> None:
    record = run(1, row(0, "randwrite", "write", "randwrite", 0), _read_test())
    mark = _mark(record, 1, "randread", [writes(record)])
    assert mark is not None and mark.kind is MarkKind.UNWRITTEN
    assert mark.figures["unwritten_share"] == 1.0
    assert "no stored run wrote this volume before it" in mark.evidence[1]
    assert "--fill" in mark.advice


def test_a_write_in_an_earlier_run_on_the_volume_clears_it() -> None:
    # the control: the same read after a sequential pass over the volume
    before = run(1, row(0, "fill", "write", "write", GIB))
    record = run(2, _read_test())
    history = [writes(before), writes(record)]
    assert _mark(record, 1, "randread", history) is None
    partial = run(1, row(0, "randwrite", "write", "randwrite", GIB))
    mark = _mark(record, 1, "randread", [writes(partial), writes(record)])
    assert mark is not None and mark.figures["unwritten_share"] == pytest.approx(
        math.exp(-1), abs=1e-4
    )
    assert "by run 1" in mark.evidence[1]


def test_a_sequential_read_is_judged_on_what_it_reached() -> None:
    before = run(1, row(0, "w", "write", "write", 128 * MiB))
    record = run(2, row(0, "seqread", "read", "read", 100 * MiB))
    assert _mark(record, 0, "seqread", [writes(before), writes(record)]) is None
    far = run(2, row(0, "seqread", "read", "read", 100 * MiB, offset_bytes=512 * MiB))
    assert _mark(far, 0, "seqread", [writes(before), writes(far)]) is not None


def test_a_test_s_own_writes_and_later_rounds_do_not_count() -> None:
    record = run(
        1,
        row(0, "mixed", "read", "randrw", 32 * MiB),
        row(0, "mixed", "write", "randrw", 4 * GIB),
        row(1, "randread", "read", "randread", 32 * MiB),
    )
    history = [writes(record)]
    assert _mark(record, 0, "mixed", history) is not None
    assert _mark(record, 1, "randread", history) is None  # round 0 wrote it


def test_files_volbench_laid_out_are_written_others_not_judged() -> None:
    scratch = run(1, _read_test(), kind="file", ours=True)
    assert _mark(scratch, 1, "randread", [writes(scratch)]) is None
    assert unchecked_reason(scratch.target, Written.nothing(GIB)) is None
    theirs = dataclasses.replace(scratch, target=TargetInfo("/data/f", "file", GIB))
    assert _mark(theirs, 1, "randread", [writes(theirs)]) is None
    assert "did not lay out" in (unchecked_reason(theirs.target, Written.nothing(GIB)) or "")
    assert "cannot name this volume" in (unchecked_reason(scratch.target, None) or "")


def test_a_write_only_test_is_never_marked() -> None:
    record = run(1, row(0, "randwrite", "write", "randwrite", 64 * MiB))
    assert _mark(record, 0, "randwrite", [writes(record)]) is None
