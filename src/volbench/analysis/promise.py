"""Measured vs promised: each stored test of a run against a vendor's figures.

Pure functions over stored result rows and an :class:`Expectation`.

- Deep-queue tests (outstanding I/O > 1) are checked for rate. The promised
  rate at the test's block size ``bs`` is the tighter of the IOPS limit and the
  throughput limit: IOPS-bound when ``iops_cap / n <= bw_cap / bs``, where an
  I/O counts as ``n = ceil(bs / count_unit)`` I/Os on vendors that count in
  units (AWS SSD and Azure: 256 KiB, so a 1 MiB I/O is 4; AWS HDD: 1 MiB;
  catalogue A5, Z1, A4); the verdict names the unit used.
  Instance-side caps, when given, lower both limits (per direction where
  the vendor caps reads and writes apart: ``min(read / r, write / (1 - r))``).
- Burst: the sustained (baseline) caps give the expected figure; a figure
  above it but within the burst ceiling (volume credits: AWS gp2 IOPS and
  throughput, st1/sc1 throughput, Azure P1-P20/E1-E30 for 30 minutes;
  burstable instances: 30 minutes a day, src A6) meets, the burst named.
  Over a test longer than a full bucket lasts (fio's own runtime T), the
  ceiling is the best average, ``baseline + (burst - baseline) x D / T``
  for a bucket lasting D seconds at the burst rate.
- Mixed read/write tests: with a combined limit the reads and writes share the
  cap; with separate limits each direction may reach it, so a mix of read share
  r reaches ``min(cap / r, cap / (1 - r))`` in total (twice the cap at 50/50:
  the 2016 Aliyun/Tencent post's Tencent finding).
- QD 1 tests are checked for latency against the stated maximum.
- Verdict: ratio = measured / expected; ``meets`` within 0.9-1.1, ``below``
  under 0.9 (AWS promises 90% of provisioned performance, catalogue A2/A8),
  ``above`` over 1.1. Latency ``below`` means slower than stated.
- A test whose fio jobs ended with an error (fio's ``error``, stored with its rows)
  stopped early: whatever its figure, its verdict is ``error``, which fails the check
  as ``below`` does (:data:`FAILING`).
- A figure that is not the volume's (a cache answered, another process shared the
  device, a mixed average, fio short of CPU: analysis/run_validity.py) is ``not judged``
  (:data:`NOT_JUDGED`, :func:`not_judged`), with the reason: never ``below``, ``meets``
  or ``above``. A check passes when no judged figure fails (:func:`passed`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.burst import average_ceiling, burst_notes, tighter
from volbench.model import StoredResult
from volbench.specs.expectation import Expectation, InstanceCaps, directional_cap

MEETS_LOW = 0.9
MEETS_HIGH = 1.1

FAILING = frozenset({"below", "error"})
"""The verdicts that fail a check (exit 1): a figure below the promise, and one of a
test fio reported an error in."""
NOT_JUDGED = "not judged"
"""The verdict of a figure that is not the volume's: neither failing nor meeting."""


@dataclass(frozen=True)
class Measured:
    """One stored test (last round), its directions summed; rates per second."""

    test: str
    rw: str
    bs_bytes: int
    outstanding: int
    read_iops: float
    write_iops: float
    read_bw_bytes_per_s: float
    write_bw_bytes_per_s: float
    read_lat_mean_ns: float | None
    write_lat_mean_ns: float | None
    read_mix_pct: int | None = None  # fio rwmixread of a mixed workload, when recorded
    runtime_s: float | None = None  # fio's runtime of the test (longest direction)
    error: int = 0  # fio's error of the test's jobs (errno), 0 for none

    @property
    def read_share(self) -> float:
        """Share of reads in a mixed test: fio's rwmixread, else the measured share."""
        if self.read_mix_pct is not None and 0 < self.read_mix_pct < 100:
            return self.read_mix_pct / 100
        return self.read_iops / self.iops if self.iops else 0.0

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def bw_bytes_per_s(self) -> float:
        return self.read_bw_bytes_per_s + self.write_bw_bytes_per_s

    @property
    def mixed(self) -> bool:
        return self.read_iops > 0 and self.write_iops > 0


@dataclass(frozen=True)
class Verdict:
    """One checked metric of one test."""

    test: str
    metric: str  # "IOPS", "MB/s", "latency read", "latency write"
    expected: float
    measured: float
    unit: str
    verdict: str  # meets | below | above | error
    reason: str

    @property
    def ratio(self) -> float:
        return self.measured / self.expected if self.expected else math.inf


def measured_tests(results: Sequence[StoredResult]) -> tuple[list[Measured], list[str]]:
    """Tests that can be compared (last round of each), and why others cannot. Only the
    run's own rows count (:attr:`RunRecord.aggregate`): a place's share is not the run's
    figure."""
    results = [row for row in results if row.place is None]
    newest = {row.test: row.round for row in results}
    for row in results:
        newest[row.test] = max(newest[row.test], row.round)
    last: dict[str, list[StoredResult]] = {}
    for row in results:
        if row.round == newest[row.test]:
            last.setdefault(row.test, []).append(row)
    tests: list[Measured] = []
    skipped: list[str] = []
    for name, rows in last.items():
        workload = rows[0].workload
        bs = workload.bs_bytes
        if bs is None or workload.bssplit:
            skipped.append(f"{name}: no single block size (bs) recorded")
            continue
        by_dir = {r.direction: r for r in rows}
        read, write = by_dir.get("read"), by_dir.get("write")
        tests.append(
            Measured(
                test=name,
                rw=workload.rw or "",
                bs_bytes=bs,
                outstanding=rows[0].outstanding_io,
                read_iops=read.iops if read else 0.0,
                write_iops=write.iops if write else 0.0,
                read_bw_bytes_per_s=read.bw_bytes_per_s if read else 0.0,
                write_bw_bytes_per_s=write.bw_bytes_per_s if write else 0.0,
                read_lat_mean_ns=read.lat_mean_ns if read else None,
                write_lat_mean_ns=write.lat_mean_ns if write else None,
                read_mix_pct=_mix(workload.rwmixread_pct),
                runtime_s=max(r.runtime_ms for r in rows) / 1000,
                error=next((r.error for r in rows if r.error), 0),
            )
        )
    return tests, skipped


def _mix(value: object) -> int | None:
    return value if isinstance(value, int) else None


def verdict_of(ratio: float) -> str:
    """meets (:data:`MEETS_LOW` to :data:`MEETS_HIGH` of the promise), below or above."""
    if ratio < MEETS_LOW:
        return "below"
    return "above" if ratio > MEETS_HIGH else "meets"


def io_count(bs_bytes: int, unit_bytes: int | None) -> int:
    """How many of the vendor's I/Os one I/O of ``bs_bytes`` counts as:
    ``ceil(bs / unit)``, at least 1 (1 where the vendor counts no unit)."""
    return max(1, math.ceil(bs_bytes / unit_bytes)) if unit_bytes else 1


def counting(bs_bytes: int, vendor: str, unit_bytes: int | None) -> str:
    """How an I/O of ``bs_bytes`` was counted, naming the vendor's unit."""
    count = io_count(bs_bytes, unit_bytes)
    if unit_bytes is None:
        return f"{vendor} counts each I/O as one"
    if count > 1:
        return (
            f"{bs_bytes // 1024} KiB I/O counted as {count} x {unit_bytes // 1024} KiB ({vendor})"
        )
    return f"{vendor} counts an I/O of up to {unit_bytes // 1024} KiB as one"


def _share(test: Measured) -> float:
    """Reads' share of the test's I/O: 1 read-only, 0 write-only."""
    if test.mixed:
        return test.read_share
    return 0.0 if test.write_iops > 0 and test.read_iops == 0 else 1.0


def rate_verdict(
    test: Measured, expectation: Expectation, instance: InstanceCaps | None = None
) -> Verdict | None:
    """The rate check of one deep-queue test (None if nothing is promised).

    The sustained caps give the expected figure; a measured figure above it but
    within the burst ceiling (volume burst credits, burstable instance) meets
    the promise, with the burst named in the reason.
    """
    product = expectation.product
    unit = product.count_unit_bytes
    count = io_count(test.bs_bytes, unit)
    reasons: list[str] = []
    share = 1.0
    directional = expectation.read_iops is not None or expectation.write_iops is not None
    if test.mixed and not directional:
        r = test.read_share
        if product.rw_limits == "separate":
            share = min(1 / r, 1 / (1 - r))
            reasons.append(f"separate read/write limits: {share:.2f} x cap at {r:.0%} reads")
        elif product.rw_limits == "combined":
            reasons.append("reads and writes share one combined limit")
        else:
            reasons.append(
                "compared as one limit reads and writes share (the catalogue does not say)"
            )

    def scaled(value: float | None) -> float | None:
        return None if value is None else value * share

    iops_cap = scaled(expectation.iops)
    if directional:
        read, write = expectation.read_iops, expectation.write_iops
        iops_cap = directional_cap(expectation.iops, read, write, _share(test))
        reasons.append(f"separate read {read or 0:,.0f} / write {write or 0:,.0f} IOPS limits")
    runtime = test.runtime_s
    e = expectation
    iops_burst = average_ceiling(e.iops, e.burst_iops, e.burst_seconds, runtime)
    iops_ceiling = scaled(iops_burst) or iops_cap
    bw_cap = scaled(e.throughput_bytes_per_s)
    bw_burst = average_ceiling(
        e.throughput_bytes_per_s,
        e.burst_throughput_bytes_per_s,
        e.burst_throughput_seconds,
        runtime,
    )
    bw_ceiling = scaled(bw_burst) or bw_cap
    if instance is not None:
        i_iops, i_iops_burst, i_bw, i_bw_burst = instance.rates(_share(test))
        if instance.burst_minutes is not None:
            held = instance.burst_minutes * 60
            i_iops_burst = average_ceiling(i_iops, i_iops_burst, held, runtime)
            i_bw_burst = average_ceiling(i_bw, i_bw_burst, held, runtime)
        iops_cap, iops_ceiling, lowered = tighter(iops_cap, iops_ceiling, i_iops, i_iops_burst)
        if lowered:
            reasons.append(f"instance cap {i_iops:,.0f} IOPS ({instance.source})")
        bw_cap, bw_ceiling, lowered = tighter(bw_cap, bw_ceiling, i_bw, i_bw_burst)
        if lowered:
            assert i_bw is not None
            reasons.append(f"instance cap {i_bw / 1e6:,.1f} MB/s ({instance.source})")
    if iops_cap is None and bw_cap is None:
        return None
    iops_bound = iops_cap is not None and (
        bw_cap is None or iops_cap / count <= bw_cap / test.bs_bytes
    )
    reasons.insert(0, counting(test.bs_bytes, product.vendor, unit))
    if iops_bound:
        assert iops_cap is not None
        reasons.insert(0, f"IOPS-bound at {test.bs_bytes / 1024:g} KiB")
        metric, expected, ceiling, measured = "IOPS", iops_cap, iops_ceiling, test.iops * count
    else:
        assert bw_cap is not None
        reasons.insert(
            0,
            f"throughput-bound at {test.bs_bytes / 1024:g} KiB"
            f" ({bw_cap / test.bs_bytes:,.0f} IOPS x {test.bs_bytes / 1024:g} KiB)",
        )
        metric, expected = "MB/s", bw_cap / 1e6
        ceiling = None if bw_ceiling is None else bw_ceiling / 1e6
        measured = test.bw_bytes_per_s / 1e6
    verdict = verdict_of(measured / expected)
    notes = burst_notes(expectation, instance, metric) if verdict == "above" else []
    if notes and ceiling is not None:
        if measured <= ceiling * MEETS_HIGH:
            verdict = "meets"
            reasons.append(f"bursting above the baseline {expected:,.0f}: " + "; ".join(notes))
        else:
            reasons.append(
                f"above even a burst: {'; '.join(notes)};"
                f" over fio's {runtime or 0:,.1f} s at most {ceiling:,.1f} {metric} on average"
            )
    return Verdict(test.test, metric, expected, measured, metric, verdict, "; ".join(reasons))


def latency_verdicts(test: Measured, expectation: Expectation) -> list[Verdict]:
    """Mean latency of a QD 1 test per direction against the stated maximum."""
    latency = expectation.latency
    if latency is None:
        return []
    found = []
    for direction, mean_ns in (("read", test.read_lat_mean_ns), ("write", test.write_lat_mean_ns)):
        if mean_ns is None:
            continue
        mean_ms = mean_ns / 1e6
        if mean_ms > latency.max_ms:
            verdict = "below"
        elif latency.min_ms is not None and mean_ms < latency.min_ms:
            verdict = "above"
        else:
            verdict = "meets"
        reason = (
            f"QD 1 mean vs stated {latency.text!r} [{latency.status} {', '.join(latency.sources)}]"
        )
        found.append(
            Verdict(
                test.test, f"latency {direction}", latency.max_ms, mean_ms, "ms", verdict, reason
            )
        )
    return found


def _at(value: float, cap: float) -> bool:
    """``value`` within the meets band of ``cap`` (0.9-1.1 x)."""
    return MEETS_LOW * cap <= value <= MEETS_HIGH * cap


def combined_finding(test: Measured, expectation: Expectation) -> str | None:
    """For a mixed test: do reads and writes each have the IOPS cap (separate
    budgets) or share it (one combined budget)? None when it cannot tell.

    IOPS are counted in the vendor's units (``io_count``). Only figures at the
    cap say anything (within the meets band, 0.9-1.1 x cap): separate when the
    busier direction is at the cap and the sum is above it (at 50/50, each
    direction at the cap: about twice the cap in total, the 2016 Aliyun/Tencent post's Tencent);
    combined when the sum is at the cap (the 2016 Aliyun/Tencent post's Aliyun). When the busier
    direction alone is above the cap, the volume was not throttled at the
    promised figure and neither can be concluded; the finding says so. Other
    figures (below the cap, or a sum above it with neither direction at it)
    give None. Throughput-bound tests (the byte cap binds first) give None.
    """
    cap = expectation.iops
    if not test.mixed or cap is None:
        return None
    unit = expectation.product.count_unit_bytes
    count = io_count(test.bs_bytes, unit)
    bw_cap = expectation.throughput_bytes_per_s
    if bw_cap is not None and cap / count > bw_cap / test.bs_bytes:
        return None
    read, write = test.read_iops * count, test.write_iops * count
    total, busier = read + write, max(read, write)
    counted = f" ({count} x {(unit or 0) // 1024} KiB per I/O)" if count > 1 else ""
    figures = f"reads {read:,.0f} and writes {write:,.0f} IOPS{counted}"
    stated = expectation.product.rw_limits
    if _at(total, cap):
        return (
            f"{test.test}: reads + writes {total:,.0f} IOPS{counted} ~ the {cap:,.0f} cap:"
            f" one combined budget (catalogue: {stated})"
        )
    if _at(busier, cap) and total > MEETS_HIGH * cap:
        return (
            f"{test.test}: {figures} at the {cap:,.0f} cap each ({total / cap:.2f} x cap"
            f" in total): separate budgets (catalogue: {stated})"
        )
    if busier > MEETS_HIGH * cap:
        return (
            f"{test.test}: {figures}, {total / cap:.1f} x the {cap:,.0f} cap: figures above"
            " the cap: not throttled at this size, cannot tell combined from separate"
            f" (catalogue: {stated})"
        )
    return None


def check(
    tests: Sequence[Measured], expectation: Expectation, instance: InstanceCaps | None = None
) -> tuple[list[Verdict], list[str]]:
    """Every verdict of a run's tests, and the read/write findings. A test fio reported
    an error in gets ``error`` for each figure (:func:`stopped_on_error`)."""
    verdicts: list[Verdict] = []
    findings: list[str] = []
    for test in tests:
        if test.outstanding <= 1:
            found = latency_verdicts(test, expectation)
            verdicts += [stopped_on_error(v, test.error) for v in found]
            continue
        rate = rate_verdict(test, expectation, instance)
        if rate is not None:
            verdicts.append(stopped_on_error(rate, test.error))
        finding = combined_finding(test, expectation)
        if finding:
            findings.append(finding)
    return verdicts, findings


def stopped_on_error(verdict: Verdict, error: int) -> Verdict:
    """``verdict`` of a test whose fio jobs ended with ``error`` (0: none, unchanged):
    ``error``, whatever the figure: the job stopped early, so its figure is not what
    the volume gives over the test, and a figure that would have met says nothing."""
    if not error:
        return verdict
    said = f"fio error {error}: the test stopped on it ({verdict.verdict} by its figure)"
    reason = f"{said}; {verdict.reason}" if verdict.reason else said
    return dataclasses.replace(verdict, verdict="error", reason=reason)


def not_judged(verdict: Verdict, reason: str) -> Verdict:
    """``verdict`` of a figure that is not the volume's (``reason`` says why): ``not
    judged``, whatever its figure (what it would have been is kept in the reason)."""
    said = f"not the volume's figure: {reason} ({verdict.verdict} by its figure)"
    return dataclasses.replace(verdict, verdict=NOT_JUDGED, reason=f"{said}; {verdict.reason}")


def passed(verdicts: Sequence[Verdict]) -> bool:
    """A check passes when no judged figure fails (:data:`FAILING`): a figure not judged
    neither meets nor fails (``--strict`` fails a run that has one)."""
    return not any(v.verdict in FAILING for v in verdicts)
