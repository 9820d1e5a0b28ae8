"""The bursts of a stored run's tests (analysis/burst_series.py), from the per-second
logs stored with each round (store/series.py, analysis/timeseries.py): every job and
direction of a test added up window by window, on fio's own clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from volbench.analysis.burst_series import Burst, find_burst
from volbench.analysis.timeseries import common_origin_ms, round_logs, shifted, summed
from volbench.fio.logs import LogPoint
from volbench.model import LogSeries


def total_rate(
    by_direction: Mapping[str, Sequence[tuple[float, float]]],
) -> list[tuple[float, float]]:
    """The series of all directions added window by window (time ascending)."""
    totals: dict[float, float] = {}
    for points in by_direction.values():
        for t, v in points:
            totals[t] = totals.get(t, 0.0) + v
    return sorted(totals.items())


def test_series(
    series: Iterable[LogSeries], kind: str = "iops"
) -> dict[tuple[int, str], list[tuple[float, float]]]:
    """Every test's per-second rate by (round, test), from its stored per-second logs
    (``store/series.py``): every job and direction added up (IOPS, or bandwidth in MB/s
    with ``kind="bw"``: fio logs KiB/s), on fio's own clock (s since the test's timed
    part began; a run on several places: since its first window).

    A run on places (``--hosts``, ``--targets``) logs each place's share of a test as
    ``TEST@N``: the test itself is all its places added up window by window (on the
    one clock they share, fio's ``log_unix_epoch``), which is what its verdict is
    about; each place's own series is kept as well when there are two or more."""
    scale = 1.0 if kind == "iops" else 1024 / 1e6
    found: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for round_no, logs in round_logs(series).items():
        tests: dict[str, list[list[LogPoint]]] = {}
        places: dict[str, set[str]] = {}
        for (test, logged), jobs in logs.items():
            if logged != kind:
                continue
            whole, at, place = test.rpartition("@")
            if at and place.isdigit():
                tests.setdefault(whole, []).extend(jobs)
                places.setdefault(whole, set()).add(test)
            else:
                tests.setdefault(test, []).extend(jobs)
        for named in places.values():
            if len(named) > 1:
                tests.update({t: list(logs[(t, kind)]) for t in named})
        for test, jobs in tests.items():
            found[(round_no, test)] = [
                (t, v * scale) for t, v in total_rate(summed(shifted(jobs, common_origin_ms(jobs))))
            ]
    return found


def stored_bursts(series: Iterable[LogSeries], kind: str = "iops") -> dict[tuple[int, str], Burst]:
    """The burst of every test of a run that has one, by (round, test), in its
    per-second series (:func:`test_series`: IOPS, or MB/s with ``kind="bw"``)."""
    unit = "IOPS" if kind == "iops" else "MB/s"
    found: dict[tuple[int, str], Burst] = {}
    for key, points in test_series(series, kind).items():
        burst = find_burst(points, unit)
        if burst is not None:
            found[key] = burst
    return found


def burst_of_test(
    series: Iterable[LogSeries], round_no: int, test: str, kind: str = "iops"
) -> Burst | None:
    """The burst of one stored test (:func:`stored_bursts`), or None."""
    return stored_bursts((s for s in series if s.round == round_no and s.test == test), kind).get(
        (round_no, test)
    )
