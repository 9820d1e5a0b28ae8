"""The adaptive peak search on synthetic volumes whose IOPS surface is known."""

from __future__ import annotations

import itertools

from volbench.analysis.peak_search import best, next_point

DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
JOBS = (1, 2, 4, 8, 16, 32)


def capped(limit: float, per_io: float, host_per_job: float):  # type: ignore[no-untyped-def]
    """IOPS of a volume capped at ``limit``: each outstanding I/O adds ``per_io`` until
    the cap, and each job can drive at most ``host_per_job`` (a host-bound client)."""

    def iops(point: tuple[int, int]) -> float:
        depth, jobs = point
        return min(limit, depth * jobs * per_io, jobs * host_per_job)

    return iops


def search(surface, depths=DEPTHS, jobs=JOBS) -> dict[tuple[int, int], float]:  # type: ignore[no-untyped-def]
    measured: dict[tuple[int, int], float] = {}
    while (point := next_point(depths, jobs, measured)) is not None:
        assert point not in measured
        measured[point] = surface(point)
    return measured


def test_finds_the_cap_with_far_fewer_points_than_the_grid() -> None:
    for surface in (
        capped(104_000, 1_700, 60_000),  # the UCloud RSSD post-like: 2 jobs needed to reach the cap
        capped(20_000, 500, 1e9),  # Azure account cap, device-bound
        capped(5_000, 100, 1_200),  # needs many jobs (the Azure VM disk post's 16 workers)
    ):
        measured = search(surface)
        grid_best = max(surface(p) for p in itertools.product(DEPTHS, JOBS))
        assert surface(best(measured)) >= 0.97 * grid_best
        assert len(measured) <= len(DEPTHS) * len(JOBS) / 3


def test_never_repeats_and_stops_on_a_flat_surface() -> None:
    measured = search(lambda point: 1_000.0)
    assert (1, 1) in measured and len(measured) <= 4


def test_single_point_grid() -> None:
    assert search(lambda p: 5.0, depths=(4,), jobs=(2,)) == {(4, 2): 5.0}


def test_noise_on_a_flat_top_does_not_make_it_wander() -> None:
    noise = itertools.cycle((1.0, 1.01, 0.99, 1.02, 1.005))
    measured = search(lambda point: 1_000.0 * next(noise))
    assert len(measured) <= 4
