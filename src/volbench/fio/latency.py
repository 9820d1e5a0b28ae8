"""One direction's latency from fio's JSON: which kind, its figures, bins and
percentiles, and the checks that refuse latency fio cannot have measured.

Kinds: fio prints ``slat``, ``clat`` and ``lat`` per direction (``*_ns`` in ns since
fio 3.0, plain names in usec before). A :class:`LatencyStats` describes ONE kind
entirely. Preference (:data:`PREFERENCE`): total latency ``lat`` when fio gave it a
distribution (percentiles or json+ bins: ``lat_percentiles=1``), else ``clat`` with
one, else ``lat`` (mean/min/max only), else ``clat``. Entries that may be merged must
share a kind (merging ``lat`` with ``clat`` mixes different intervals), so the parser
picks the first preference that every entry of a reporting group offers
(:func:`common_kind`).

Checks (fio stat.c ``add_ddir_lat_json``, ``calc_lat``, ``calc_clat_percentiles``):

* min <= mean <= max, and the sample standard deviation within the Bhatia-Davis
  bound s^2 <= (max - mean)(mean - min) n / (n - 1) (R. Bhatia, C. Davis, "A better
  bound on the variance", Amer. Math. Monthly 107 (2000)); n = 1 gives s = 0;
* json+ bins keyed by a bucket value (fio >= 3.0) or, with ``FIO_IO_U_PLAT_BITS``,
  by bucket index (fio 2.x); bits must be fio's 6 (stat.h), indexes below
  ``FIO_IO_U_PLAT_NR``; counts whole and >= 0; their sum equals ``N``;
* every bin and percentile within one bucket of [min, max] (a bucket's value is its
  middle, stat.c ``plat_idx_to_val``), percentiles in (0, 100] (fio 2.1's unused
  ``"0.00"`` slots are dropped) and non-decreasing.

Tolerance: fio prints doubles with 6 decimals (2 before fio 2.2), so comparisons
with means and deviations allow 0.01 of the block's unit.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from volbench.errors import ParseError
from volbench.fio.fields import Fields, shown
from volbench.model import LatencyStats

PLAT_BITS = 6
"""fio stat.h ``FIO_IO_U_PLAT_BITS``: 64 buckets per group, error <= 1/128."""

PLAT_NRS = (19 << PLAT_BITS, 29 << PLAT_BITS)
"""``FIO_IO_U_PLAT_NR`` = ``FIO_IO_U_PLAT_GROUP_NR`` x 64: 19 groups before fio 3.0,
29 since (fio commit d6bb626e, "nanosecond: update completion latency recording")."""

PREFERENCE: tuple[tuple[str, bool], ...] = (
    ("lat", True),
    ("clat", True),
    ("lat", False),
    ("clat", False),
)
"""(kind, with a distribution), most wanted first."""

_TOLERANCE = 0.01
_USEC_TO_NS = 1000.0
_PLAT_KEYS = ("FIO_IO_U_PLAT_BITS", "FIO_IO_U_PLAT_VAL", "FIO_IO_U_PLAT_NR")


def plat_idx_to_val(idx: int, bits: int = PLAT_BITS) -> int:
    """Bucket index -> bucket value (the middle of the bucket), fio stat.c
    ``plat_idx_to_val``: indexes below 2 x 2^bits are exact; above, group
    ``error_bits = (idx >> bits) - 1`` starts at ``2^(error_bits + bits)`` and
    bucket ``k = idx % 2^bits`` is ``base + (k + 0.5) x 2^error_bits``."""
    plat_val = 1 << bits
    if idx < (plat_val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx % plat_val
    return base + (k << error_bits) + ((1 << error_bits) >> 1)


def bucket_width(value: float) -> int:
    """Width of fio's histogram bucket holding ``value``: 1 below 128, else
    2^(floor(log2 value) - 6) (stat.h: each bucket's error is at most 1/128)."""
    return max(1, 1 << max(0, int(value).bit_length() - (PLAT_BITS + 1)))


def _block(direction: Fields, kind: str) -> tuple[Fields, float] | None:
    """fio's ``<kind>_ns`` block (ns, scale 1) or the fio 2.x ``<kind>`` one (usec)."""
    new = direction.child(f"{kind}_ns")
    if new is not None:
        return new, 1.0
    old = direction.child(kind)
    return (old, _USEC_TO_NS) if old is not None else None


def offered(direction: Fields) -> frozenset[tuple[str, bool]]:
    """The (kind, with a distribution) choices this direction's JSON offers."""
    found: set[tuple[str, bool]] = set()
    for kind in ("lat", "clat"):
        block = _block(direction, kind)
        if block is not None:
            found.add((kind, False))
            if block[0].raw("bins") or block[0].raw("percentile"):
                found.add((kind, True))
    return frozenset(found)


def common_kind(offers: list[frozenset[tuple[str, bool]]]) -> tuple[str, bool] | None:
    """The first of :data:`PREFERENCE` that every offer holds (entries without any
    latency block aside: they have no latency); None if none does."""
    present = [offer for offer in offers if offer]
    return next((c for c in PREFERENCE if present and all(c in o for o in present)), None)


def latency(direction: Fields, kind: str, completed_limit: int | None) -> LatencyStats:
    """The direction's ``kind`` latency in ns, checked (see the module docstring).

    ``completed_limit`` bounds fio's sample count ``N`` (completed I/Os each moved at
    least one byte, so N <= io_bytes once fio has accounted a runtime); None: no bound.
    """
    found = _block(direction, kind)
    if found is None:
        raise ParseError(f"no {kind} latency block", direction.at(f"{kind}_ns"))
    stats, scale = found
    low, high = stats.number("min"), stats.number("max")
    mean, stddev = stats.number("mean"), stats.number("stddev")
    count = stats.count("N")
    if low > high:
        raise ParseError(f"min {shown(low)} above max {shown(high)}", stats.at("min"))
    tol = _TOLERANCE + 1e-9 * high
    if not low - tol <= mean <= high + tol:
        raise ParseError(f"mean {shown(mean)} outside min..max", stats.at("mean"))
    _check_spread(stats, low, high, mean, stddev, count, tol)
    if completed_limit is not None and count > completed_limit:
        raise ParseError(
            f"{count} completed I/Os in {completed_limit} bytes (each moves at least one)",
            stats.at("N"),
        )
    bins = _bins(stats, low, high)
    if count and bins and sum(bins.values()) != count:
        raise ParseError(
            f"the bins hold {sum(bins.values())} I/Os, N says {count}", stats.at("bins")
        )
    samples = count or sum(bins.values())
    if not (scale == 1.0 and _exact(bins)):  # fio 2.x usec: to ns
        bins = {round(value * scale): n for value, n in bins.items()}
    return LatencyStats(
        kind=kind,
        min_ns=low * scale,
        max_ns=high * scale,
        mean_ns=mean * scale,
        stddev_ns=stddev * scale,
        samples=samples,
        percentiles_ns={p: v * scale for p, v in _percentiles(stats, low, high).items()},
        bins=bins,
    )


def _exact(bins: dict[int, int]) -> bool:
    """Whether every bucket value is an integer a double holds exactly (below 2^53),
    so that ``round(value * 1.0)`` is the value itself."""
    return not bins or max(bins) < 1 << 53


def _check_spread(
    stats: Fields, low: float, high: float, mean: float, stddev: float, count: int, tol: float
) -> None:
    """Bhatia-Davis: s^2 <= (max - mean)(mean - min) n / (n - 1); n unknown (0) is
    taken as 2, the loosest bound; one sample has no spread."""
    if count == 1:
        if stddev > tol:
            raise ParseError(f"stddev {shown(stddev)} of a single sample", stats.at("stddev"))
        return
    n = count if count >= 2 else 2
    bound = (high - mean + tol) * (mean - low + tol) * n / (n - 1)
    if stddev * stddev > bound + tol:
        raise ParseError(f"stddev {shown(stddev)} wider than min..max allows", stats.at("stddev"))


def _within(stats: Fields, key: str, value: float, low: float, high: float, what: str) -> None:
    if not low - bucket_width(low) <= value <= high + bucket_width(high):
        raise ParseError(
            f"{what} {shown(value)} beyond one bucket of min..max ({shown(low)}..{shown(high)})",
            stats.at(key),
        )


def _bins(stats: Fields, low: float, high: float) -> dict[int, int]:
    """json+ ``bins`` as {bucket value in the block's unit: count}, ascending, empty
    buckets dropped; fio 2.x index keys converted with :func:`plat_idx_to_val`."""
    bins = stats.child("bins")
    if bins is None:
        return {}
    plain = _plain_bins(stats.raw("bins"), low, high)
    if plain is not None:
        return plain
    indexed = bins.has("FIO_IO_U_PLAT_BITS")
    limit = PLAT_NRS[-1]
    if indexed:
        if bins.count("FIO_IO_U_PLAT_BITS") != PLAT_BITS:
            raise ParseError(
                f"FIO_IO_U_PLAT_BITS is not fio's {PLAT_BITS}", bins.at("FIO_IO_U_PLAT_BITS")
            )
        if bins.count("FIO_IO_U_PLAT_VAL", 1 << PLAT_BITS) != 1 << PLAT_BITS:
            raise ParseError(
                f"FIO_IO_U_PLAT_VAL is not fio's {1 << PLAT_BITS}", bins.at("FIO_IO_U_PLAT_VAL")
            )
        limit = bins.count("FIO_IO_U_PLAT_NR", limit)
        if limit not in PLAT_NRS:
            raise ParseError(
                f"FIO_IO_U_PLAT_NR is none of fio's {PLAT_NRS}", bins.at("FIO_IO_U_PLAT_NR")
            )
    result: dict[int, int] = {}
    for key, _ in bins.items():
        if key in _PLAT_KEYS:
            if not indexed:
                raise ParseError("FIO_IO_U_PLAT_BITS missing", bins.at(key))
            continue
        number = int(key) if key.isascii() and key.isdigit() and len(key) <= 20 else -1
        if number < 0 or (indexed and number >= limit):
            raise ParseError("a bin key that is no histogram bucket", bins.at(key))
        count = bins.count(key)
        if count == 0:
            continue
        value = plat_idx_to_val(number) if indexed else number
        _within(bins, key, value, low, high, "bin")
        result[value] = result.get(value, 0) + count
    return dict(sorted(result.items()))


def _plain_bins(raw: dict[str, Any], low: float, high: float) -> dict[int, int] | None:
    """:func:`_bins` of fio 3's json+ bins (keys bucket values) in one pass over plain
    data, for bins that pass every check of :func:`_bins`; None for any other (fio 2.x
    index keys, a key or count fio cannot have written, a bucket beyond min..max),
    which :func:`_bins` then reads entry by entry to name what is wrong. Every cell of
    a PTS round is parsed as it is committed, hundreds of bins a job: checked entry
    by entry they were a third of its parsing."""
    counts, keys = raw.values(), raw.keys()
    if not set(map(type, counts)) <= {int} or min(counts, default=0) < 0:
        return None  # a count fio cannot have written (bool, float, negative)
    if not all(map(str.isdigit, keys)) or not "".join(keys).isascii():
        return None  # a key that is no bucket value
    if max(map(len, keys), default=0) > 20:
        return None
    floor, ceiling = low - bucket_width(low), high + bucket_width(high)
    result: dict[int, int] = {}
    for key, count in raw.items():
        if count:
            value = int(key)
            if not floor <= value <= ceiling:
                return None
            result[value] = result.get(value, 0) + count
    return dict(sorted(result.items()))


def _percentiles(stats: Fields, low: float, high: float) -> dict[float, float]:
    """``{"99.000000": v}`` -> ``{99.0: v}``, ascending; fio 2.1's ``"0.00"`` dropped."""
    table = stats.child("percentile")
    if table is None:
        return {}
    result: dict[float, float] = {}
    for key, _ in table.items():
        try:
            pct = float(key)
        except ValueError:
            pct = -1.0
        if pct == 0.0:
            continue
        if not 0.0 < pct <= 100.0:
            raise ParseError("a percentile outside (0, 100]", table.at(key))
        value = table.count(key)
        _within(table, key, value, low, high, "percentile")
        result[pct] = float(value)
    ordered = dict(sorted(result.items()))
    values = list(ordered.values())
    if any(b < a for a, b in pairwise(values)):
        raise ParseError("percentiles that fall as the percentile rises", stats.at("percentile"))
    return ordered
