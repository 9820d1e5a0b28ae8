"""A bundled run's result rows checked against the fio output the bundle carries.

Every stored figure comes from fio's final JSON of its round (kept verbatim beside
it), so a bundle is checked for meaning as ``volbench import`` checks fio's JSON:
each round holding result rows must carry an output the parser reads
(:func:`volbench.fio.parser.parse`, which refuses what fio cannot print), and each
row must be a figure that output can give. Whatever the plan made of its entries
(one test per job name or reporting group, a place's share, the aggregate of every
place, fio's "All clients"), a row merges some of the round's entries in its
direction, so with ``E`` the round's entries reporting that direction:

* every figure is finite and >= 0 (the bundle reader checked finiteness), rates
  only with a run time of at least 1 ms (fio stat.c prints 0 for less), so at most
  the row's bytes per ms (plus 1 KiB/s a job for rounding);
* IOPS, bandwidth and bytes at most the sum over ``E`` (IOPS within 1 + 10^-6 of it
  plus 1, bandwidth plus 1 KiB/s an entry for fio's rounding, stat.c);
* the run time at most the longest of ``E`` (1 ms rounding), CPU shares at most the
  largest of ``E`` (a row holds their mean), the job count from 1 to the entries;
* a fio error (``error``, other than 0 or not recorded) only one an entry of ``E``
  ended with;
* latency figures only with a kind (fio's ``lat`` or ``clat``), only where an entry
  of ``E`` has one: every figure within the lowest entry minimum and the highest
  entry maximum (one histogram bucket, :func:`volbench.fio.latency.bucket_width`,
  plus 1 us for fio 2.x's whole usec), and in order as in any latency block of
  fio's: min <= mean <= max, a standard deviation within max - min, percentiles
  rising and within a bucket of the row's own min..max.

Anything else is refused with one line naming the row and the figure
(:meth:`volbench.store.bundle_reader.Reader.damaged`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import ParseError
from volbench.fio.latency import bucket_width
from volbench.fio.parser import parse
from volbench.model import JobResult, RunRecord, StoredResult
from volbench.store.bundle_reader import Reader

_PERCENTILES = ("lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_p999_ns", "lat_p9999_ns")
_NUMBERS = ("iops", "bw_bytes_per_s", "runtime_ms", "usr_cpu_pct", "sys_cpu_pct")
_LATENCIES = ("lat_min_ns", "lat_mean_ns", "lat_max_ns", "lat_stddev_ns", *_PERCENTILES)
_USEC_NS = 1000.0
"""fio 2.x printed latencies in whole usec: one unit of slack."""
_TOLERANCE_NS = 10.0
"""fio prints means and deviations with 6 decimals of usec in fio 2.x: 10 ns of slack."""


@dataclass(frozen=True)
class _Bounds:
    """What a round's entries give in one direction (see the module docstring)."""

    entries: int
    iops: float
    bw_bytes_per_s: float
    io_bytes: int
    runtime_ms: float
    cpu_pct: float
    lat_min_ns: float | None
    lat_max_ns: float | None
    errors: frozenset[int]


def _bounds(entries: Sequence[JobResult], direction: str) -> _Bounds:
    found = [(e, e.directions[direction]) for e in entries if direction in e.directions]
    lows = [d.latency.min_ns for _, d in found if d.latency is not None]
    highs = [d.latency.max_ns for _, d in found if d.latency is not None]
    return _Bounds(
        entries=len(entries),
        iops=sum(d.iops for _, d in found),
        bw_bytes_per_s=sum(d.bw_bytes_per_s for _, d in found),
        io_bytes=sum(d.io_bytes for _, d in found),
        runtime_ms=max([e.runtime_ms for e, _ in found] + [d.runtime_ms for _, d in found] or [0]),
        cpu_pct=max([max(e.usr_cpu_pct, e.sys_cpu_pct) for e, _ in found] or [0.0]),
        lat_min_ns=min(lows) if lows else None,
        lat_max_ns=max(highs) if highs else None,
        errors=frozenset(e.error for e, _ in found if e.error),
    )


def _slack(value: float) -> float:
    return bucket_width(value) + _USEC_NS


def _contradiction(row: StoredResult, bounds: _Bounds) -> tuple[str, str] | None:
    """(field, why) of the first figure of ``row`` the round's output contradicts."""
    for name in (*_NUMBERS, *_LATENCIES):
        value = getattr(row, name)
        if value is not None and (not math.isfinite(value) or value < 0):
            return name, f"is {value!r}: fio's figures are never negative"
    if row.bw_bytes_per_s > 1000.0 * row.io_bytes + 1024.0 * row.jobs:
        return "bw_bytes_per_s", f"is {row.bw_bytes_per_s!r}, more than its bytes in 1 ms"
    if row.runtime_ms < 1.0 and (row.iops or row.bw_bytes_per_s):
        return "runtime_ms", f"is {row.runtime_ms!r}: fio gives rates only over 1 ms or more"
    if row.jobs < 1:
        return "jobs", f"is {row.jobs}: a row merges at least one of fio's entries"
    limits = (
        ("iops", row.iops, bounds.iops * (1 + 1e-6) + 1.0),
        ("bw_bytes_per_s", row.bw_bytes_per_s, bounds.bw_bytes_per_s + 1024.0 * bounds.entries),
        ("io_bytes", row.io_bytes, bounds.io_bytes),
        ("runtime_ms", row.runtime_ms, bounds.runtime_ms + 1.0),
        ("usr_cpu_pct", row.usr_cpu_pct, bounds.cpu_pct + 0.01),
        ("sys_cpu_pct", row.sys_cpu_pct, bounds.cpu_pct + 0.01),
        ("jobs", row.jobs, bounds.entries),
    )
    for name, value, most in limits:
        if value > most:
            return name, f"is {value!r}, more than the round's fio output gives ({most!r})"
    if row.error and row.error not in bounds.errors:
        return "error", f"is {row.error!r}, an error no job of the round's fio output ended with"
    if row.lat_kind is None:
        stated = next((n for n in _LATENCIES if getattr(row, n) is not None), None)
        return None if stated is None else (stated, "is stated for a row of no latency kind")
    return _latency_contradiction(row, bounds)


def _latency_contradiction(row: StoredResult, bounds: _Bounds) -> tuple[str, str] | None:
    """(field, why) of the first latency figure of ``row`` that is not one fio gives:
    of a kind fio has, within the round's latencies, in order (min <= mean <= max,
    rising percentiles, a spread within min..max) as any latency block of fio's
    (:mod:`volbench.fio.latency`)."""
    if row.lat_kind not in ("lat", "clat"):
        return "lat_kind", f"is {row.lat_kind!r}, not fio's lat or clat"
    low, high = bounds.lat_min_ns, bounds.lat_max_ns
    if low is None or high is None:
        return "lat_kind", f"is {row.lat_kind!r}: the round's fio output has no such latency"
    floor, ceiling = low - _slack(low), high + _slack(high)
    for name in ("lat_min_ns", "lat_mean_ns", "lat_max_ns", *_PERCENTILES):
        value = getattr(row, name)
        if value is not None and not floor <= value <= ceiling:
            return name, (
                f"is {value!r}, outside the latencies of the round's fio output"
                f" ({low!r}..{high!r} ns)"
            )
    own_low, mean, own_high = row.lat_min_ns, row.lat_mean_ns, row.lat_max_ns
    if own_low is None or mean is None or own_high is None or row.lat_stddev_ns is None:
        return "lat_kind", "is stated without min, mean, max and stddev"
    tolerance = _TOLERANCE_NS + 1e-9 * own_high
    if not own_low - tolerance <= mean <= own_high + tolerance:
        return "lat_mean_ns", f"is {mean!r}, outside the row's min..max"
    if row.lat_stddev_ns > own_high - own_low + tolerance:
        return "lat_stddev_ns", f"is {row.lat_stddev_ns!r}, wider than the row's min..max"
    previous = 0.0
    for name in _PERCENTILES:
        value = getattr(row, name)
        if value is None:
            continue
        if value < previous:
            return name, f"is {value!r}, below a lower percentile ({previous!r})"
        if not own_low - _slack(own_low) <= value <= own_high + _slack(own_high):
            return name, f"is {value!r}, beyond one bucket of the row's min..max"
        previous = value
    return None


def check_figures(reader: Reader, run: RunRecord, at: str) -> None:
    """Refuse (``reader.damaged``) the first result row of ``run`` (``runs[i]`` of the
    bundle: ``at``) that its round's fio output contradicts, or a round with rows
    whose output the parser refuses."""
    index_of = {times.round: i for i, times in enumerate(run.rounds)}
    entries: dict[int, tuple[JobResult, ...]] = {}
    bounds: dict[tuple[int, str], _Bounds] = {}  # once per round and direction
    for number, row in enumerate(run.results):
        if row.round not in entries:
            position = index_of[row.round]
            try:
                output = parse(run.raw_outputs[position])
            except ParseError as error:
                reader.damaged(
                    f"{at}.rounds (round {row.round}).fio_output", f"is not fio's output: {error}"
                )
            entries[row.round] = (*output.jobs, *output.all_clients)
        key = (row.round, row.direction)
        if key not in bounds:
            bounds[key] = _bounds(entries[row.round], row.direction)
        found = _contradiction(row, bounds[key])
        if found is not None:
            name, why = found
            reader.damaged(f"{at}.results[{number}].{name}", why)
