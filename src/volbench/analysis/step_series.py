"""Steps and drift in a test's per-second series: what a single average hides.

1. Levels (:func:`levels`): binary segmentation with the least-squares change point of
   analysis/burst_series.py (Hinkley, Biometrika 57(1), 1970), applied again to each
   side while a significant step is found (Scott and Knott, "A cluster analysis method
   for grouping means in the analysis of variance", Biometrics 30(3), 1974, split a
   sequence of means the same way); where one change point does not split a stretch
   (a level in its middle, as a cap lowered and raised again), the least-squares pair of
   them does, both steps significant (searched in stretches of at most
   :data:`PAIR_SEARCH_MAX` windows). A step is significant as burst_series has it, each
   side at least ``MIN_PLATEAU_S`` long and held there (half the step past the midpoint
   for that long), the step at least ``MIN_RISE`` of the lower level and
   ``STEP_SIGMAS`` times the noise of either side (the median absolute deviation x
   ``MAD_SCALE``, floored at ``NOISE_FLOOR`` of the level: Hampel, JASA 69, 1974). At
   most :data:`MAX_LEVELS` levels.
2. Drift (:func:`drift`): with no step, a series that never settled: its last third's
   median differs from its first third's by more than :data:`DRIFT_SIGMAS` times the
   larger noise of the two (each third's robust deviation from its own least-squares
   line, so a trend inside a third is not taken for noise) and by ``MIN_RISE`` of the
   mean (less is within the 0.9-1.1 band in which ``check`` calls two figures the
   same). Where it settled is the first window from which the rest shows no drift (and
   is at least a third of the series);
   the runtime that would settle it keeps the part before within :data:`SETTLE_BAND` of
   the settled level's average: ``runtime >= |sum((x_i - L) x window)| / (BAND x L)``
   over the windows before it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

from volbench.analysis.burst_series import (
    MAD_SCALE,
    MIN_PLATEAU_S,
    MIN_RISE,
    NOISE_FLOOR,
    STEP_SIGMAS,
    change_point,
)
from volbench.analysis.steady_state import least_squares

MAX_LEVELS = 4
"""Levels a series is split into at most (three steps)."""
DRIFT_SIGMAS = 3.0
"""The thirds' medians differ by this many times their noise: beyond the spread."""
SETTLE_BAND = 0.05
"""The suggested runtime keeps the unsettled part within this share of the average."""
THIRDS = 3
PAIR_SEARCH_MAX = 900
"""The pair of change points is searched in stretches of at most this many windows
(15 minutes of 1 s windows: the search costs the square of the length)."""


@dataclass(frozen=True)
class Level:
    """A stretch of a series at one level: windows ``first``..``last`` (indexes), from
    ``start_s`` to ``end_s`` (the first window's start, the last one's end), its median
    (``level``), mean and noise (robust standard deviation), in the series' unit."""

    first: int
    last: int
    start_s: float
    end_s: float
    level: float
    mean: float
    noise: float

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class Drift:
    """A series that never settled: its first and last thirds' medians, the larger of
    their noises, where it settled (s on the series' clock; None: not within it), the
    level it settled at and the runtime (s) that would keep the part before within
    :data:`SETTLE_BAND` of it (None: not settled)."""

    first: float
    last: float
    noise: float
    settled_s: float | None
    settled_level: float | None
    runtime_s: float | None


def noise(values: Sequence[float]) -> float:
    """Robust standard deviation: median absolute deviation x ``MAD_SCALE``."""
    middle = statistics.median(values)
    return MAD_SCALE * statistics.median(abs(v - middle) for v in values)


def window_s(points: Sequence[tuple[float, float]]) -> float:
    """The series' window (s): the median gap between points (0 for fewer than two)."""
    gaps = [b - a for (a, _), (b, _) in pairwise(points)]
    return statistics.median(gaps) if gaps else 0.0


def min_windows(points: Sequence[tuple[float, float]]) -> int:
    """Windows a level lasts at least (``MIN_PLATEAU_S``); 0 when the window is unknown."""
    window = window_s(points)
    return max(1, math.ceil(MIN_PLATEAU_S / window - 1e-9)) if window > 0 else 0


def _significant(high: Sequence[float], low: Sequence[float], min_len: int) -> bool:
    """A step between two adjacent stretches (either way) as module docstring 1 says."""
    a, b = statistics.median(high), statistics.median(low)
    lower, step = min(a, b), abs(a - b)
    if lower < 0 or step < MIN_RISE * max(lower, 1e-12) or step == 0:
        return False
    middle = (a + b) / 2
    held_a = sum((v > middle) == (a > b) for v in high)
    held_b = sum((v < middle) == (a > b) for v in low)
    if held_a < min_len or held_b < min_len:
        return False
    floor = NOISE_FLOOR * max(lower, 1e-12)
    return step >= STEP_SIGMAS * max(noise(high), noise(low), floor)


def change_pair(values: Sequence[float], min_len: int) -> tuple[int, int] | None:
    """The splits ``i < j`` (three stretches, each ``min_len`` long at least) with the
    least sum of squared deviations from each stretch's mean; None when the series is
    too short or longer than :data:`PAIR_SEARCH_MAX`. O(n^2) with prefix sums."""
    n = len(values)
    if min_len < 1 or n < 3 * min_len or n > PAIR_SEARCH_MAX:
        return None
    sums = [0.0, *accumulate(values)]
    squares = [0.0, *accumulate(v * v for v in values)]

    def sse(a: int, b: int) -> float:
        total = sums[b] - sums[a]
        return squares[b] - squares[a] - total * total / (b - a)

    best: tuple[float, int, int] | None = None
    for i in range(min_len, n - 2 * min_len + 1):
        head = sse(0, i)
        for j in range(i + min_len, n - min_len + 1):
            cost = head + sse(i, j) + sse(j, n)
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return None if best is None else (best[1], best[2])


def _split(values: Sequence[float], start: int, end: int, min_len: int, found: list[int]) -> None:
    if len(found) + 1 >= MAX_LEVELS:
        return
    part = values[start:end]
    k = change_point(part, min_len)
    if k is not None and _significant(part[:k], part[k:], min_len):
        found.append(start + k)
        _split(values, start, start + k, min_len, found)
        _split(values, start + k, end, min_len, found)
        return
    pair = change_pair(part, min_len) if len(found) + 2 < MAX_LEVELS else None
    if pair is None:
        return
    i, j = pair
    head, middle, tail = part[:i], part[i:j], part[j:]
    if _significant(head, middle, min_len) and _significant(middle, tail, min_len):
        found += [start + i, start + j]
        for a, b in ((start, start + i), (start + i, start + j), (start + j, end)):
            _split(values, a, b, min_len, found)


def levels(points: Sequence[tuple[float, float]]) -> list[Level]:
    """The levels of ``points`` ((window end in s, value), time ascending): one for a
    series without a step (module docstring 1); none for fewer than two windows."""
    min_len = min_windows(points)
    if min_len == 0:
        return []
    values = [v for _, v in points]
    cuts: list[int] = []
    _split(values, 0, len(values), min_len, cuts)
    window = window_s(points)
    edges = [0, *sorted(cuts), len(values)]
    found = []
    for first, end in pairwise(edges):
        part = values[first:end]
        found.append(
            Level(
                first,
                end - 1,
                points[first][0] - window,
                points[end - 1][0],
                statistics.median(part),
                statistics.fmean(part),
                noise(part),
            )
        )
    return found


def detrended_noise(values: Sequence[float]) -> float:
    """:func:`noise` of the deviations from the least-squares line through ``values``."""
    if len(values) < 3:
        return noise(values)
    slope, intercept = least_squares([float(i) for i in range(len(values))], values)
    return noise([v - (intercept + slope * i) for i, v in enumerate(values)])


def _drifts(values: Sequence[float]) -> tuple[float, float, float] | None:
    """(first third's median, last third's, the larger noise) when they differ beyond
    the spread (module docstring 2), else None."""
    third = len(values) // THIRDS
    if third < 1:
        return None
    head, tail = values[:third], values[-third:]
    first, last = statistics.median(head), statistics.median(tail)
    mean = statistics.fmean(values)
    spread = max(detrended_noise(head), detrended_noise(tail), NOISE_FLOOR * abs(mean))
    gap = abs(last - first)
    if gap < MIN_RISE * abs(mean) or gap <= DRIFT_SIGMAS * spread:
        return None
    return first, last, spread


def drift(points: Sequence[tuple[float, float]]) -> Drift | None:
    """The drift of ``points`` (module docstring 2), None when it settled or is shorter
    than three levels' worth of windows."""
    min_len = min_windows(points)
    values = [v for _, v in points]
    if min_len == 0 or len(values) < THIRDS * min_len:
        return None
    found = _drifts(values)
    if found is None:
        return None
    first, last, spread = found
    window = window_s(points)
    for k in range(1, len(values) - THIRDS * min_len + 1):
        rest = values[k:]
        if len(rest) * THIRDS < len(values) or _drifts(rest) is not None:
            continue
        level = statistics.median(rest)
        excess = abs(sum(v - level for v in values[:k]) * window)
        runtime = excess / (SETTLE_BAND * level) if level > 0 else None
        return Drift(first, last, spread, points[k][0] - window, level, runtime)
    return Drift(first, last, spread, None, None, None)
