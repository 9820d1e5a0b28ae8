"""Latency percentiles from fio's json+ histogram bins, computed exactly as fio does.

fio keeps every latency sample in a log-linear histogram (``io_u_plat``; fio stat.h,
``FIO_IO_U_PLAT_BITS`` = 6, so each bucket's error is at most 1/128 of its value).
``--output-format=json+`` prints the non-empty buckets as ``"bins"``: the bucket's
representative value in ns (fio stat.c ``plat_idx_to_val``: the middle of the
bucket) mapped to its I/O count. Bins from several jobs, rounds or hosts can be
summed bucket by bucket, and percentiles recomputed from the sum: this is the only
correct way to combine percentiles (averaging them is wrong).

The algorithm is fio stat.c ``calc_clat_percentiles()``::

    sum = 0; j = 0
    for each bucket i in ascending value order:
        sum += io_u_plat[i]
        while sum >= (long double) plist[j] / 100.0 * nr:
            ovals[j] = plat_idx_to_val(i); j++

where ``plist`` is the sorted percentile list (doubles) and ``nr`` the sample count.
The threshold is computed in C ``long double``, which on x86-64 is the x87 80-bit
format (64-bit significand). When ``p / 100 * nr`` is an integer in exact arithmetic
the rounded long-double threshold can land just above or below it, which decides
whether a bucket that ends exactly there qualifies; this module reproduces that
rounding (``_round_significand``) so results equal fio's to the nanosecond.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from fractions import Fraction

REPORTED_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9, 99.99)
"""Percentiles volbench reports and stores (all in fio's default percentile_list)."""

LONG_DOUBLE_SIGNIFICAND_BITS = 64
"""Significand width of C ``long double`` in the fio builds we reproduce (x86-64 x87)."""


def _round_significand(value: Fraction, bits: int) -> Fraction:
    """Round a non-negative rational to ``bits`` significant bits, ties to even.

    This is IEEE 754 round-to-nearest-even for a binary format whose significand
    has ``bits`` bits (64 for the x87 extended format), ignoring exponent limits.
    """
    if value <= 0:
        return Fraction(0)
    shift = bits - (value.numerator.bit_length() - value.denominator.bit_length())
    scaled = value * (Fraction(2) ** shift)
    while scaled >= 2**bits:
        shift -= 1
        scaled /= 2
    while scaled < 2 ** (bits - 1):
        shift += 1
        scaled *= 2
    return Fraction(round(scaled)) / (Fraction(2) ** shift)


def _threshold(pct: float, total: int) -> Fraction:
    """fio's ``(long double) pct / 100.0 * nr`` with long-double rounding at each step."""
    return _round_significand(_quotient(pct) * total, LONG_DOUBLE_SIGNIFICAND_BITS)


def _threshold_count(pct: float, total: int) -> int:
    """The fewest whole samples that reach fio's threshold (``math.ceil`` of
    :func:`_threshold`), in integers: the quotient's denominator is a power of two
    (it is a rounded binary number), so the product ``m x nr / 2^k`` rounds to the
    significand's 64 bits by dropping its numerator's low bits, ties to even, as
    :func:`_round_significand` does with fractions at about ten times the cost."""
    quotient = _quotient(pct)
    numerator, denominator = quotient.numerator * total, quotient.denominator
    if numerator <= 0 or denominator & (denominator - 1):  # (not from _round_significand)
        return math.ceil(_threshold(pct, total))
    dropped = numerator.bit_length() - LONG_DOUBLE_SIGNIFICAND_BITS
    if dropped > 0:
        kept, rest = numerator >> dropped, numerator & ((1 << dropped) - 1)
        half = 1 << (dropped - 1)
        if rest > half or (rest == half and kept & 1):
            kept += 1
        numerator = kept << dropped
    return -(-numerator // denominator)


@functools.lru_cache(maxsize=256)
def _quotient(pct: float) -> Fraction:
    """fio's ``(long double) pct / 100.0``: the same few percentiles every time."""
    return _round_significand(Fraction(pct) / 100, LONG_DOUBLE_SIGNIFICAND_BITS)


def _check_pct(pct: float) -> None:
    if not 0.0 < pct <= 100.0:
        raise ValueError(f"percentile must be in (0, 100], got {pct!r}")


def percentiles_from_bins(bins: Mapping[int, int], pcts: Iterable[float]) -> dict[float, float]:
    """Several percentiles of a json+ histogram, in one pass (fio stat.c
    ``calc_clat_percentiles``).

    ``bins`` maps bucket value (any unit; json+ uses ns) to I/O count; ``pcts`` are
    percentiles in (0, 100]. Returns {percentile: bucket value} in ascending
    percentile order, in the unit of the bin keys. The total is the sum of the
    counts (fio uses the sample count ``N``, which equals it in json+ output).

    Raises ``ValueError`` for an empty histogram, a negative count or a percentile
    outside (0, 100].
    """
    wanted = sorted(set(pcts))
    for pct in wanted:
        _check_pct(pct)
    if any(count < 0 for count in bins.values()):
        raise ValueError("histogram bin counts must not be negative")
    total = sum(bins.values())
    if total <= 0:
        raise ValueError("cannot compute percentiles of an empty histogram")
    result: dict[float, float] = {}
    if not wanted:
        return result
    # the cumulative count is whole: reaching a threshold is reaching its ceiling,
    # compared as integers (a Fraction comparison per bucket cost more than the rest)
    thresholds = [_threshold_count(pct, total) for pct in wanted]
    cumulative = 0
    j = 0
    last_value = 0
    for value in sorted(bins):
        cumulative += bins[value]
        last_value = value
        while j < len(wanted) and cumulative >= thresholds[j]:
            result[wanted[j]] = float(value)
            j += 1
        if j == len(wanted):
            break
    # Unreachable for valid input (the last threshold is at most the total); fio
    # logs "error calculating latency percentiles" here. Use the largest bucket.
    for pct in wanted[j:]:
        result[pct] = float(last_value)
    return result


def percentile_from_bins(bins: Mapping[int, int], pct: float) -> float:
    """One percentile of a json+ histogram: the first bucket value (ascending) at which
    the cumulative count reaches ``pct / 100 x total`` (fio stat.c
    ``calc_clat_percentiles``). Unit: that of the bin keys (ns for json+)."""
    return percentiles_from_bins(bins, (pct,))[pct]


def merge_bins(*bins: Mapping[int, int]) -> dict[int, int]:
    """Sum json+ histograms bucket by bucket.

    All inputs must come from fio's histogram layout (same ``FIO_IO_U_PLAT_BITS``),
    so equal keys denote the same bucket. Empty buckets are dropped, as fio does in
    json+. The result is ordered by bucket value.
    """
    merged: dict[int, int] = {}
    for histogram in bins:
        for value, count in histogram.items():
            merged[value] = merged.get(value, 0) + count
    return {value: merged[value] for value in sorted(merged) if merged[value] != 0}
