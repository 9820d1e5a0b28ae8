"""The bursts of a stored run's tests (analysis/stored_bursts.py): ``volbench explain``'s
burst section, and ``volbench check``'s lines: the catalogue's burst, and each measured
burst beside the catalogue's bucket.

Every figure comes from fio's per-second IOPS logs stored with each round: the ceiling
and the baseline after are the medians of the two plateaus, the credits the I/Os done
above the baseline during the burst (analysis/burst_series.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.burst_series import Burst
from volbench.analysis.promise import io_count
from volbench.analysis.stored_bursts import stored_bursts
from volbench.model import RunRecord
from volbench.report.sheet import Column, Sheet, fmt_count
from volbench.specs.expectation import Expectation


@dataclass(frozen=True)
class BurstOfTest:
    """The burst of one stored test, its block size (bytes; None: several) and fio's
    ramp time before its logged series began (s: fio logs nothing while it ramps)."""

    round: int
    test: str
    burst: Burst
    bs_bytes: int | None
    ramp_s: float = 0.0

    def row(self) -> dict[str, float | int | str | bool | None]:
        b = self.burst
        return {
            "round": self.round,
            "test": self.test,
            "ceiling": b.ceiling,
            "seconds": b.seconds,
            "credits": b.credits,
            "baseline": b.baseline,
            "unit": b.unit,
            "start_s": b.start_s,
            "end_s": b.end_s,
            "bs_bytes": self.bs_bytes,
            "ramp_s": self.ramp_s,
            "spread": b.spread,
            "steady": b.steady,
        }


def run_bursts(run: RunRecord) -> list[BurstOfTest]:
    """The IOPS burst of every test of ``run`` that has one, in round order."""
    work = {(r.round, r.test): r.workload for r in run.results}
    found = []
    for key, burst in sorted(stored_bursts(run.series).items()):
        w = work.get(key)
        bs, ramp = (w.bs_bytes, w.ramp_time_s or 0.0) if w else (None, 0.0)
        found.append(BurstOfTest(*key, burst, bs, ramp))
    return found


def _seconds(value: float | int | str | None) -> str:
    return f"{float(value or 0):,.1f} s"


def _share(value: float | int | str | None) -> str:
    return f"{float(value or 0):.1%}"


COLUMNS = (
    Column("round", "Round", numeric=True),
    Column("test", "Test"),
    Column("ceiling", "Burst ceiling", fmt_count, numeric=True),
    Column("seconds", "At it", _seconds, numeric=True),
    Column("credits", "Above the baseline", fmt_count, numeric=True),
    Column("baseline", "Baseline after", fmt_count, numeric=True),
    Column("spread", "Varies", _share, numeric=True),
    Column("unit", "Unit"),
)


def burst_sheet(run: RunRecord, found: Sequence[BurstOfTest]) -> Sheet | None:
    """``explain``'s burst section: a row per test that burst (None: none did)."""
    if not found:
        return None
    rows = tuple(t.row() for t in found)
    return Sheet(
        title=f"volbench run {run.id}: bursts (a high plateau, then a lower one)",
        columns=COLUMNS,
        rows=rows,
        document={"bursts": list(rows)},
        notes=(
            "from fio's per-second IOPS of each test: the ceiling and the baseline after are"
            " the medians of the two plateaus, 'above the baseline' the I/Os done above it"
            " during the burst (the credits spent), 'at it' those I/Os at the ceiling, 'varies'"
            " the plateaus' robust standard deviation a second (a limiter's: at most 10%)",
        ),
    )


def catalogue_burst_lines(e: Expectation) -> list[str]:
    """The catalogue's burst ceilings for the volume, and how long a full bucket lasts."""
    lines = []
    if e.burst_iops is not None:
        lasting = "" if e.burst_seconds is None else f" for {e.burst_seconds:,.0f} s"
        lines.append(f"burst: up to {e.burst_iops:,.0f} IOPS{lasting} on a full bucket")
    if e.burst_throughput_value is not None:
        seconds = e.burst_throughput_seconds
        lasting = "" if seconds is None else f" for {seconds:,.0f} s"
        lines.append(
            f"burst: up to {e.burst_throughput_value:,.1f} {e.throughput_unit}{lasting}"
            " on a full bucket"
        )
    return lines


def bucket_lines(found: Sequence[BurstOfTest], expectation: Expectation) -> list[str]:
    """``check``'s line per test that burst, in the vendor's I/O unit, beside the
    catalogue's full bucket: (burst - baseline) x the seconds a full bucket lasts; with
    what fio's ramp time, which it does not log, would add were it at the ceiling."""
    e = expectation
    unit = e.product.count_unit_bytes
    bucket = (
        (e.burst_iops - e.iops) * e.burst_seconds
        if e.burst_iops is not None and e.iops is not None and e.burst_seconds is not None
        else None
    )
    lines = []
    for t in found:
        count = io_count(t.bs_bytes, unit) if t.bs_bytes else 1
        b = t.burst
        counted = f" ({count} per {t.bs_bytes // 1024} KiB I/O)" if count > 1 and t.bs_bytes else ""
        line = (
            f"{t.test}: measured {b.seconds:,.1f} s at {b.ceiling * count:,.0f} IOPS, about"
            f" {b.credits * count:,.0f} credits{counted}, then {b.baseline * count:,.0f}"
        )
        if t.ramp_s > 0:
            more = t.ramp_s * (b.ceiling - b.baseline) * count
            line += (
                f" (fio's {t.ramp_s:g} s ramp before it is not in the series: at the ceiling,"
                f" {more:,.0f} more credits, {b.seconds + t.ramp_s:,.1f} s in all)"
            )
        if bucket is not None:
            line += (
                f"; the catalogue's full bucket is {bucket:,.0f} ({e.burst_seconds or 0:,.0f} s"
                f" at {e.burst_iops or 0:,.0f})"
            )
        else:
            line += "; the catalogue gives this volume no IOPS burst at this size"
        lines.append(line)
    return lines
