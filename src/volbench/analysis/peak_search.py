"""Adaptive search for the peak IOPS over a queue-depth x jobs grid (``--find-max``).

A volume's IOPS rises with outstanding I/O until it saturates, then stays flat
(Little's law: more queue only adds latency). So instead of the whole grid:

1. at the fewest jobs, raise the queue depth step by step while each step gains
   more than ``gain`` (3%) over the best so far;
2. at the best queue depth, raise the job count the same way;
3. climb from the best point so far: measure its unmeasured grid neighbours
   (one queue-depth or job-count step away) until the best point has none left.
   "Best" is the first point measured within ``gain`` of the highest IOPS, so
   noise on a flat top does not send the search wandering across the plateau.

Points already measured are never measured again. Pure: the caller measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Point = tuple[int, int]
"""(iodepth, numjobs)"""

GAIN = 0.03
"""A step must raise IOPS by more than this fraction of the best so far to go on."""


def _walk(
    axis: Sequence[int], make: Mapping[int, Point], measured: Mapping[Point, float], gain: float
) -> Point | None:
    """Next unmeasured point along ``axis`` while each step still gains; None at a plateau."""
    best = 0.0
    for value in axis:
        point = make[value]
        if point not in measured:
            return point
        if measured[point] <= best * (1 + gain):
            return None
        best = max(best, measured[point])
    return None


def next_point(
    iodepths: Sequence[int],
    numjobs: Sequence[int],
    measured: Mapping[Point, float],
    gain: float = GAIN,
) -> Point | None:
    """The next grid point to measure, or None when the peak is found."""
    depths, jobs = sorted(set(iodepths)), sorted(set(numjobs))
    step = _walk(depths, {d: (d, jobs[0]) for d in depths}, measured, gain)
    if step is not None:
        return step
    best_depth = max((p for p in measured if p[1] == jobs[0]), key=measured.__getitem__)[0]
    step = _walk(jobs, {j: (best_depth, j) for j in jobs}, measured, gain)
    if step is not None:
        return step
    highest = max(measured.values())
    top = next(p for p, iops in measured.items() if iops * (1 + gain) >= highest)
    index_d, index_j = depths.index(top[0]), jobs.index(top[1])
    for d, j in (
        (index_d + 1, index_j),
        (index_d - 1, index_j),
        (index_d, index_j + 1),
        (index_d, index_j - 1),
    ):
        if 0 <= d < len(depths) and 0 <= j < len(jobs) and (depths[d], jobs[j]) not in measured:
            return (depths[d], jobs[j])
    return None


def best(measured: Mapping[Point, float]) -> Point:
    """The measured point with the highest IOPS."""
    return max(measured, key=measured.__getitem__)
