"""Where a PTS run stands, from its stored results alone; and what to run next. Pure.

Every cell runs as a fio process of its own, committed as it ends (a store round
each), so a PTS round is a run of consecutive committed cells of one test and
phase (:func:`group_rounds`). Because the next step is decided only from what is
committed, starting a run and resuming one (after Ctrl-C, a crash or kill -9) are
the same loop: a committed cell never runs again, and a round cut off is
continued at its first missing cell, under its own number.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from volbench.analysis.steady_state import Verdict
from volbench.model import StoredResult
from volbench.plans.pts import catalog
from volbench.plans.pts.cells import cell_name
from volbench.plans.pts.options import PtsOptions
from volbench.plans.pts.test import Cell, Phase, Round, StoredRound


def _cell(name: str, results: Sequence[StoredResult]) -> Cell:
    iops = sum(r.iops for r in results)
    timed = [(r.iops, r.lat_mean_ns) for r in results if r.lat_mean_ns is not None]
    weight = sum(i for i, _ in timed)
    lat = sum(i * (m or 0.0) for i, m in timed) / weight if timed and weight > 0 else None
    return Cell(
        name=name,
        iops=iops,
        bw_bytes_per_s=sum(r.bw_bytes_per_s for r in results),
        # per target: a round on several targets at once writes each its share
        io_bytes=sum(r.io_bytes for r in results) // _places(results),
        lat_mean_ns=lat,
        results=tuple(results),
        round_no=results[0].round if results else 0,
    )


def _places(results: Sequence[StoredResult]) -> int:
    """On how many targets at once the cell ran (1 but for multi-target runs)."""
    return max((r.workload.places for r in results), default=1)


@lru_cache(maxsize=256)
def expected_cells(
    options: PtsOptions, active: int, test: str, phase: str
) -> frozenset[frozenset[str]]:
    """The cell names (``CELL`` of ``TEST.PHASE.CELL``) of each whole round of this phase
    (:meth:`.test.PtsTest.phase_rounds`; cached: :func:`stored_rounds` asks for every
    stored round, after every round)."""
    if phase not in set(Phase):
        return frozenset()
    rounds = catalog.by_name(test).phase_rounds(options, active, Phase(phase))
    return frozenset(frozenset(cell_name(w) for w in r) for r in rounds)


def _complete(options: PtsOptions, active: int, stored: StoredRound) -> bool:
    """A round counts only when every cell finished (Ctrl-C keeps finished cells of a
    round cut short; such a round is run again whole) and WIPC wrote every pass."""
    if stored.test not in options.tests:
        return False
    if frozenset(stored.cells) not in expected_cells(options, active, stored.test, stored.phase):
        return False
    return stored.phase != Phase.WIPC or all(c.io_bytes >= active for c in stored.cells.values())


def stored_rounds(
    results: Sequence[StoredResult], options: PtsOptions, active: int
) -> list[StoredRound]:
    """The complete committed rounds of a PTS run, in order, with their cells.

    Mean latency of a cell is the IOPS-weighted mean over its directions.
    """
    return group_rounds(results, options, active)[0]


def group_rounds(
    results: Sequence[StoredResult], options: PtsOptions, active: int
) -> tuple[list[StoredRound], StoredRound | None]:
    """The complete rounds of a run, in order, and the round still open at its end
    (cells committed, others missing: a run cut off mid-round), if any.

    Consecutive cells of one test and phase make a round until it is complete or a
    cell repeats. A round left incomplete before another began (runs of older
    volbench versions ran a cut-off round again whole) is not a round.
    """
    cells: dict[tuple[int, str], list[StoredResult]] = {}
    for result in results:
        if result.place is None:  # not a place's share of a multi-target round
            cells.setdefault((result.round, result.test), []).append(result)
    complete: list[StoredRound] = []
    counts: dict[tuple[str, str], int] = {}
    current: StoredRound | None = None
    for (round_no, name), rows in sorted(cells.items(), key=lambda item: item[0][0]):
        test, phase, cell = name.split(".", 2)
        if (
            current is None
            or (current.test, current.phase) != (test, phase)
            or cell in current.cells
            or _complete(options, active, current)
        ):
            if current is not None and _complete(options, active, current):
                complete.append(current)
                counts[(current.test, current.phase)] = current.index + 1
            current = StoredRound(round_no, test, phase, {}, counts.get((test, phase), 0))
        current.cells[cell] = _cell(name, rows)
    if current is not None and _complete(options, active, current):
        complete.append(current)
        current = None
    return complete, current


def tracking(test: str, rounds: Sequence[StoredRound]) -> dict[str, list[float]]:
    """The tracking variables of ``test`` over its steady-state rounds, by name."""
    return catalog.by_name(test).tracking(rounds)


def verdict(test: str, history: Sequence[StoredRound]) -> Verdict:
    """Steady state of ``test`` from its stored rounds."""
    return catalog.by_name(test).verdict(history)


def next_round(options: PtsOptions, active: int, results: Sequence[StoredResult]) -> Round | None:
    """The next round of a run with these committed results; None when it is done.

    The first round of each test purges first (unless purging is off); a round cut
    off mid-way goes on with its missing cells.
    """
    return next_step(options, active, *group_rounds(results, options, active))


def next_step(
    options: PtsOptions,
    active: int,
    rounds: Sequence[StoredRound],
    open_round: StoredRound | None = None,
) -> Round | None:
    """:func:`next_round` from the complete rounds and the open one (:func:`group_rounds`)."""
    for test in options.tests:
        history = [r for r in rounds if r.test == test]
        step = catalog.by_name(test).next_round(options, active, history)
        if step is None:
            continue
        if open_round is not None and (open_round.test, open_round.phase) == (test, step.phase):
            missing = tuple(w for w in step.workloads if cell_name(w) not in open_round.cells)
            if missing and len(missing) < len(step.workloads):  # the open round goes on
                return Round(step.test, step.phase, step.index, missing)
        if not history and options.purge:
            return Round(step.test, step.phase, step.index, step.workloads, True)
        return step
    return None


def active_bytes(options: PtsOptions, capacity_bytes: int) -> int:
    """The active range: the given percent of the capacity, in whole MiB."""
    return capacity_bytes * options.active_range_pct // 100 // (1 << 20) * (1 << 20)
