"""Percentiles from json+ bins must equal fio's own, exactly (fio stat.c
calc_clat_percentiles)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.analysis.percentiles import (
    REPORTED_PERCENTILES,
    _quotient,
    _threshold,
    _threshold_count,
    merge_bins,
    percentile_from_bins,
    percentiles_from_bins,
)


def _histograms_with_fio_percentiles() -> list[Any]:
    """Every latency block of a single job (or host) that has both bins and percentiles."""
    cases = []
    for path in sorted(FIO_FIXTURES.iterdir()):
        if path.suffix not in (".json", ".txt"):
            continue
        raw = raw_document(path.name)
        for n, entry in enumerate(raw.get("jobs", []) + raw.get("client_stats", [])):
            for direction in ("read", "write", "trim"):
                for kind in ("lat_ns", "clat_ns", "slat_ns"):
                    block = entry.get(direction, {}).get(kind, {})
                    if block.get("bins") and block.get("percentile"):
                        case_id = f"{path.stem}-{n}-{direction}-{kind}"
                        cases.append(pytest.param(block, id=case_id))
    return cases


CASES = _histograms_with_fio_percentiles()


def test_fixtures_provide_enough_histograms() -> None:
    # randrw (2 dirs x lat+clat), 4 clones, 2 stonewall jobs, psync, 2 hosts
    assert len(CASES) >= 13


@pytest.mark.parametrize("block", CASES)
def test_bins_reproduce_every_percentile_fio_reported(block: dict[str, Any]) -> None:
    bins = {int(k): v for k, v in block["bins"].items()}
    assert sum(bins.values()) == block["N"]
    expected = {float(k): float(v) for k, v in block["percentile"].items()}
    assert len(expected) == 17  # fio's default percentile_list
    assert percentiles_from_bins(bins, expected) == expected
    for pct, value in expected.items():
        assert percentile_from_bins(bins, pct) == value


def test_threshold_uses_long_double_rounding() -> None:
    # fio compares sum >= (long double) 30.0 / 100.0 * 50. In exact arithmetic that is
    # 15, but the x87 long double of 0.3 is slightly above 0.3, so 15 samples do not
    # reach it and fio reports the next bucket. Checked against the C expression
    # compiled with gcc on x86-64.
    assert percentile_from_bins({1: 15, 2: 35}, 30.0) == 2.0
    # 99.95 / 100 * 2000: the double product rounds below 1999, the long double one
    # does not, so 1999 samples are not enough.
    assert percentile_from_bins({1: 1999, 2: 1}, 99.95) == 2.0
    # An exactly representable threshold: 50 of 100 samples reach the median.
    assert percentile_from_bins({1: 50, 2: 50}, 50.0) == 1.0


def test_percentiles_walk_bins_in_value_order() -> None:
    bins = {300: 1, 100: 8, 200: 1}
    assert percentiles_from_bins(bins, (50.0, 90.0, 95.0, 100.0)) == {
        50.0: 100.0,
        90.0: 200.0,
        95.0: 300.0,
        100.0: 300.0,
    }


def test_single_bucket() -> None:
    assert percentiles_from_bins({4096: 7}, REPORTED_PERCENTILES) == {
        p: 4096.0 for p in REPORTED_PERCENTILES
    }


@pytest.mark.parametrize("pct", [0.0, -1.0, 100.5])
def test_percentile_out_of_range(pct: float) -> None:
    with pytest.raises(ValueError):
        percentile_from_bins({1: 1}, pct)


def test_empty_histogram() -> None:
    with pytest.raises(ValueError):
        percentile_from_bins({}, 50.0)
    with pytest.raises(ValueError):
        percentiles_from_bins({1: 0}, (50.0,))


def test_merge_bins_sums_counts_and_sorts() -> None:
    merged = merge_bins({300: 1, 100: 2}, {100: 3, 200: 0}, {})
    assert merged == {100: 5, 300: 1}
    assert list(merged) == [100, 300]
    assert merge_bins() == {}


def test_merged_clone_bins_equal_the_sum_of_raw_bins() -> None:
    raw_jobs = raw_document("numjobs4_jsonplus.json")["jobs"]
    hists = [{int(k): v for k, v in j["read"]["clat_ns"]["bins"].items()} for j in raw_jobs]
    merged = merge_bins(*hists)
    assert sum(merged.values()) == sum(j["read"]["clat_ns"]["N"] for j in raw_jobs)
    for key in {k for h in hists for k in h}:
        assert merged[key] == sum(h.get(key, 0) for h in hists)


def test_reported_percentiles() -> None:
    assert REPORTED_PERCENTILES == (50.0, 90.0, 99.0, 99.9, 99.99)


def test_whole_sample_thresholds_equal_the_long_double_ones() -> None:
    """The integer form of fio's threshold (:func:`_threshold_count`, the one the
    percentiles use) is the ceiling of its exact long-double rounding, ties included:
    totals ``u x 2^k`` whose product with the percentile's quotient has 65 significant
    bits before its ``k`` trailing zeros are halfway between two long doubles."""
    pcts = (1.0, 5.0, 10.0, 30.0, 50.0, 90.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0)
    for pct in pcts:
        numerator = _quotient(pct).numerator
        halfway = [u for u in range(1, 200, 2) if (numerator * u).bit_length() == 65]
        totals = [*range(1, 2001), *(u << k for u in halfway for k in range(40))]
        totals += [10**k + d for k in range(4, 19) for d in (-1, 0, 1)]
        for total in totals:
            assert _threshold_count(pct, total) == math.ceil(_threshold(pct, total)), (pct, total)
