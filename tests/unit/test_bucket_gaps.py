"""The MB/s bucket a limits run's card counts: the reads' larger tests before the MB/s
burst probe spent part of it, and it came back at its baseline in the gaps between
fio processes. The gaps are measured (analysis/test_windows.py ``io_span``): from fio's
logs on the Unix clock (a lab guest, a host), or from each local output's own end
(``timestamp_ms``); the plan's 0.7 s a gap only where neither places a round (a lab
draw: read 9.6 MB/s bursting to 28.8 for 115.2 MB, 1.5 s gaps, fitted 128 MB)."""

from __future__ import annotations

import json
import math
import random

import pytest
from test_export import result
from test_limits_charts import limits_record

from volbench.analysis.test_windows import io_span
from volbench.fio.job_times import JobTimes
from volbench.model import RunRecord, StoredResult, StoredWorkload
from volbench.plans.limits import BBURST, BYTES_BS
from volbench.report.limits_card import limits_card
from volbench.timeline import LogSeries, RoundTimes

MB = 1e6
EPOCH_MS = 1_796_000_000_000
BASELINE_S = 5
"""Seconds the probe runs at its baseline after the burst."""


def _bucket_run(
    bucket_mb: float,
    ceiling: float,
    baseline: float,
    gaps: tuple[float, float],
    epoch: bool,
    iops_cap: float = 1200,
) -> RunRecord:
    """A limits run: ``read-16k-qd4`` at its IOPS cap (``iops_cap``) and ``read-64k-qd4``
    at the MB/s ceiling, each 1 s of ramp and 1 s timed, then the MB/s burst probe, with
    ``gaps`` (s) without I/O after each; the read bucket (``bucket_mb`` above
    ``baseline`` MB/s, refilling at it, spent up to ``ceiling``) full before them. Logs
    on the Unix clock (``epoch``), else on each job's own and each output's end
    (``timestamp_ms``)."""
    tests = (
        ("read-16k-qd4", 16 * 1024, min(ceiling, iops_cap * 16 * 1024 / MB)),
        ("read-64k-qd4", 65536, ceiling),
    )
    level = 0.0  # MB spent from the bucket
    clock = float(EPOCH_MS)
    rows, series, outputs, rounds = [], [], [], []
    for round_no, ((name, bs, rate), gap) in enumerate(zip(tests, gaps, strict=True)):
        level = max(0.0, level + (rate - baseline) * 2)
        workload = StoredWorkload(rw="randread", bs_bytes=bs, iodepth=4, ramp_time_s=1.0)
        rows.append(_row(round_no, name, workload, rate))
        end = clock + 2000
        series.append(_log(round_no, name, [end], [rate], epoch))
        outputs.append(json.dumps({"timestamp_ms": int(end), "jobs": []}))
        rounds.append(_times(round_no))
        clock = end + gap * 1000
        level = max(0.0, level - baseline * gap)
    at_ceiling = (bucket_mb - level) / (ceiling - baseline)
    probe_s = math.ceil(at_ceiling) + BASELINE_S
    times = [clock + 1000 * (i + 1) for i in range(probe_s)]
    values = [
        ceiling * min(1.0, max(0.0, at_ceiling - i))
        + baseline * (1 - min(1.0, max(0.0, at_ceiling - i)))
        for i in range(probe_s)
    ]
    probe = StoredWorkload(rw="randread", bs_bytes=BYTES_BS, iodepth=4)
    rows.append(_row(2, BBURST.name, probe, sum(values) / probe_s, probe_s))
    series.append(_log(2, BBURST.name, times, values, epoch))
    outputs.append(json.dumps({"timestamp_ms": int(times[-1]), "jobs": []}))
    rounds.append(_times(2))
    return limits_record(
        tuple(rows), raw_outputs=tuple(outputs), rounds=tuple(rounds), series=tuple(series)
    )


def _row(
    round_no: int, name: str, workload: StoredWorkload, mb_s: float, seconds: int = 1
) -> StoredResult:
    iops = mb_s * MB / (workload.bs_bytes or BYTES_BS)
    return result(
        iops,
        4 / iops * 1e9,
        round=round_no,
        test=name,
        direction="read",
        workload=workload,
        bw_bytes_per_s=mb_s * MB,
        io_bytes=int(mb_s * MB * seconds),
        runtime_ms=seconds * 1000,
    )


def _log(round_no: int, name: str, times: list[float], mb_s: list[float], epoch: bool) -> LogSeries:
    """fio's IOPS log of one test: each window's end (ms) and its requests a second."""
    bs = BYTES_BS if name == BBURST.name else (16 if "16k" in name else 64) * 1024
    origin = 0.0 if epoch else times[0] - 1000
    points = tuple((int(t - origin), v * MB / bs) for t, v in zip(times, mb_s, strict=True))
    return LogSeries(round_no, f"{name}@1" if epoch else name, "iops", 1, None, "read", points)


def _times(round_no: int) -> RoundTimes:
    return RoundTimes(
        round_no,
        "2026-11-30T00:00:00+00:00",
        "2026-11-30T00:00:01+00:00",
        "2026-11-30T00:00:01+00:00",
    )


def _credits(run: RunRecord) -> float:
    card = limits_card(run)
    row = next(r for r in card.rows if r["figure"] == "MB/s burst credits")
    return float(str(row["value"]).split()[0].replace(",", ""))


@pytest.mark.parametrize("epoch", [True, False], ids=["guest-logs", "local-outputs"])
def test_the_bucket_counts_the_gaps_between_processes_as_measured(epoch: bool) -> None:
    """The lab draw's bucket, 115.2 MB: counted within 5 % with 1.5 s gaps (the plan's
    0.7 s a gap would make it 128 MB), and buckets of 100-220 MB with gaps drawn from 0.1 to 3 s."""
    run = _bucket_run(115.2, 28.8, 9.6, (1.5, 1.5), epoch)
    assert _credits(run) == pytest.approx(115.2, rel=0.05)
    draw = random.Random(5)
    for _ in range(12):
        baseline = draw.uniform(6.0, 20.0)
        ceiling = baseline * draw.uniform(2.0, 4.0)
        bucket = draw.uniform(12, 16) * baseline  # the probe sees 3 s at its ceiling or more
        gaps = (draw.uniform(0.1, 3.0), draw.uniform(0.1, 3.0))
        iops_cap = draw.uniform(400, 2000)
        run = _bucket_run(bucket, ceiling, baseline, gaps, epoch, iops_cap)
        assert _credits(run) == pytest.approx(bucket, rel=0.05), (bucket, gaps, iops_cap)


def test_a_gap_refills_no_more_than_the_test_before_it_spent() -> None:
    """A lab draw on a busy machine: reads bursting from 13.1 to 39.2 MB/s for 156.8 MB;
    the 16 KiB test (1,000 IOPS, 16.4 MB/s) spent 6.6 MB and the 1.67 s gap after it gave
    back all of it, not the 21.9 MB the baseline would have. Counted as one sum of gaps,
    the bucket was 139 MB (-11 %)."""
    run = _bucket_run(156.8, 39.2, 13.07, (1.67, 1.55), True, iops_cap=1000)
    assert _credits(run) == pytest.approx(156.8, rel=0.03)


def test_a_round_nothing_places_counts_the_plans_gap() -> None:
    assert io_span(None, 1.0, 2.0, JobTimes()) is None
    assert io_span(None, 1.0, 2.0, JobTimes(timestamp_ms=10_000.0, client=True)) is None
    assert io_span(None, 1.0, 2.0, JobTimes(timestamp_ms=10_000.0)) == (8.0, 10.0)
    assert io_span(None, 1.0, 2.0, JobTimes(start_ms={"a": 5_000.0, "b": 6_000.0})) == (5.0, 7.0)
    # per-second logs on the Unix clock: the first window's start less the ramp
    assert io_span((EPOCH_MS + 2000.0, EPOCH_MS + 9000.0), 1.0, 8.0, JobTimes()) == (
        EPOCH_MS / 1000,
        EPOCH_MS / 1000 + 9,
    )
