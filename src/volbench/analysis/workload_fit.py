"""A synthetic fio workload fitted to a :class:`WorkloadProfile`, and how well it matches.

One fio job (fio HOWTO: ``rw=randrw``, ``rwmixread``, ``bssplit`` with a split per
direction, ``percentage_random`` per direction, ``random_distribution=zoned``,
``iodepth``) reproduces a trace's mix when, within each direction, transfer size
and sequential-or-random are independent: fio draws them apart. The fit takes

- ``rwmixread`` from the read share (by count) of reads and writes;
- each direction's ``bssplit`` from its sizes (those of at least 1% of the
  direction, whole percentages by largest remainder; at most :data:`MAX_SIZES`);
- each direction's ``percentage_random`` from its random share;
- ``random_distribution=zoned`` from the concentration: the hottest 5% of the range
  gets the share of requests the hottest 5% of the touched space had, the next 15%
  the next share, then 30% and 50% (fio ``zoned``: access%/range% pairs);
- ``iodepth`` from the queue depth the application kept (the time-weighted 90th
  percentile while the device was busy).

The *match* compares the patterns the fitted job issues (direction x access x size,
the product of the fitted shares) with the trace's patterns: 100 minus the total
variation distance in points (half the sum of the absolute differences of the
shares), so 100 is an exact reproduction of the mix. Trims and flushes are not in
the job (fio's ``randrw`` issues reads and writes): their share is reported apart.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volbench.analysis.workload_profile import HOT_SHARES, WorkloadProfile

MAX_SIZES = 16
MIN_SIZE_PCT = 1.0


@dataclass(frozen=True)
class SyntheticFit:
    """The fitted job's options (fio's own units: bytes, percentages) and its match."""

    rwmixread_pct: int
    read_bssplit: tuple[tuple[int, int], ...]
    write_bssplit: tuple[tuple[int, int], ...]
    read_random_pct: int
    write_random_pct: int
    zones: tuple[tuple[int, int], ...]
    """(access %, range %) pairs of ``random_distribution=zoned``."""
    iodepth: int
    span_bytes: int
    match_pct: float
    left_out_pct: float
    """Share of the trace's requests the job cannot issue (trims)."""

    @property
    def random_distribution(self) -> str:
        return "zoned:" + ":".join(f"{a}/{r}" for a, r in self.zones)

    def predicted(self) -> dict[tuple[str, str, int], float]:
        """The share (%) of each (access, op, size) pattern the job issues."""
        return _predicted(self)


def _largest_remainder(weights: Mapping[int, float], total: int = 100) -> dict[int, int]:
    """Whole numbers proportional to ``weights`` that add up to ``total``."""
    whole = sum(weights.values())
    if whole <= 0:
        return {}
    exact = {k: total * w / whole for k, w in weights.items()}
    shares = {k: math.floor(v) for k, v in exact.items()}
    short = total - sum(shares.values())
    for k in sorted(exact, key=lambda k: exact[k] - shares[k], reverse=True)[:short]:
        shares[k] += 1
    return {k: v for k, v in shares.items() if v > 0}


def _split(sizes: Mapping[int, int]) -> tuple[tuple[int, int], ...]:
    total = sum(sizes.values())
    if not total:
        return ()
    kept = {
        size: count
        for size, count in Counter(sizes).most_common(MAX_SIZES)
        if 100.0 * count / total >= MIN_SIZE_PCT
    } or dict(Counter(sizes).most_common(1))
    return tuple(sorted(_largest_remainder(kept).items()))


def _zones(hot: Mapping[int, float]) -> tuple[tuple[int, int], ...]:
    """Zones of 5, 15, 30 and 50% of the range with the trace's shares of requests."""
    edges = [0, *HOT_SHARES, 100]
    cumulative = [0.0, *(hot.get(s, float(s)) for s in HOT_SHARES), 100.0]
    weights = {i: max(0.0, cumulative[i + 1] - cumulative[i]) for i in range(len(edges) - 1)}
    access = _largest_remainder(weights)
    return tuple((access.get(i, 0), edges[i + 1] - edges[i]) for i in range(len(edges) - 1))


def fit(profile: WorkloadProfile) -> SyntheticFit:
    """The synthetic job of ``profile`` (see the module docstring)."""
    by_op: dict[str, Counter[int]] = {"read": Counter(), "write": Counter()}
    for entry in profile.sizes:
        if entry.op in by_op:
            by_op[entry.op][entry.size_bytes] += entry.count
    seq = profile.sequential_by_op
    rw = profile.counts["read"] + profile.counts["write"]
    data = rw + profile.counts["trim"]
    zones = _zones(profile.hot_pct)
    if sum(a for a, _ in zones) != 100:  # nothing touched
        zones = ((100, 100),)
    found = SyntheticFit(
        rwmixread_pct=round(profile.read_pct),
        read_bssplit=_split(by_op["read"]),
        write_bssplit=_split(by_op["write"]),
        read_random_pct=round(100 - seq.get("read", 0.0)),
        write_random_pct=round(100 - seq.get("write", 0.0)),
        zones=zones,
        iodepth=max(1, round(profile.qd_percentile)),
        span_bytes=profile.span_bytes,
        match_pct=0.0,
        left_out_pct=100.0 * profile.counts["trim"] / data if data else 0.0,
    )
    if not profile.pattern_shares:  # nothing traced: nothing matched
        return found
    match = 100.0 - distance(profile.pattern_shares, found.predicted())
    return dataclasses.replace(found, match_pct=max(0.0, match))


def _predicted(found: SyntheticFit) -> dict[tuple[str, str, int], float]:
    shares: dict[tuple[str, str, int], float] = {}
    for op, mix, split, random_pct in (
        ("read", found.rwmixread_pct, found.read_bssplit, found.read_random_pct),
        ("write", 100 - found.rwmixread_pct, found.write_bssplit, found.write_random_pct),
    ):
        for size, pct in split:
            for access, part in (("RND", random_pct), ("SEQ", 100 - random_pct)):
                share = mix * pct * part / 10_000
                if share > 0:
                    shares[(access, op, size)] = share
    return shares


def distance(
    a: Mapping[tuple[str, str, int], float], b: Mapping[tuple[str, str, int], float]
) -> float:
    """Total variation distance between two pattern mixes, in points (0..100)."""
    keys = set(a) | set(b)
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in keys) / 2


def workload_record(profile: WorkloadProfile, found: SyntheticFit) -> dict[str, Any]:
    """The profile and its fit as JSON-ready data (stored with the capture run; what
    ``volbench workload`` shows and exports). Patterns are rows: access, op, size,
    share (%) in the trace and as the fitted job issues it."""
    record = dataclasses.asdict(profile)
    predicted = found.predicted()
    record["pattern_shares"] = [
        {
            "access": a,
            "op": op,
            "size_bytes": size,
            "share_pct": share,
            "fitted_pct": predicted.get((a, op, size), 0.0),
        }
        for (a, op, size), share in sorted(profile.pattern_shares.items(), key=lambda kv: -kv[1])
    ]
    record["patterns"] = [{**dataclasses.asdict(p), "label": p.label} for p in profile.patterns]
    record["hot_pct"] = {str(k): v for k, v in profile.hot_pct.items()}
    fitted = dataclasses.asdict(found)
    fitted["random_distribution"] = found.random_distribution
    record["synthetic"] = fitted
    return record
