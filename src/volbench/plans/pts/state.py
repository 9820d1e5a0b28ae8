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
from dataclasses import dataclass, field
from functools import lru_cache

from volbench.analysis.steady_state import Verdict, assess
from volbench.model import StoredResult, Workload
from volbench.plans.pts import catalog
from volbench.plans.pts.options import PtsOptions

WSAT_CAPACITY_MULTIPLE = 4
"""WSAT writes until 4 x the user capacity (here: the active range) is written."""


@dataclass(frozen=True)
class Cell:
    """One cell of one stored round: fio's figures summed over its directions
    (``io_bytes``: per target, when the round ran on several at once)."""

    name: str
    iops: float
    bw_bytes_per_s: float
    io_bytes: int
    lat_mean_ns: float | None
    results: tuple[StoredResult, ...] = ()
    round_no: int = 0
    """The store round (fio process) that measured the cell: its raw output's index."""


@dataclass(frozen=True)
class StoredRound:
    """A PTS round: ``index`` counts the rounds of its test and phase from 0 (what
    reports call round ``index + 1``); ``round_no`` is the store round of its first
    cell (older runs stored a whole PTS round in one store round)."""

    round_no: int
    test: str
    phase: str
    cells: dict[str, Cell] = field(default_factory=dict)
    index: int = 0


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
def expected_cells(options: PtsOptions, active: int, test: str, phase: str) -> frozenset[str]:
    """The cell names (``CELL`` of ``TEST.PHASE.CELL``) a whole round of this phase has
    (cached: :func:`stored_rounds` asks for every stored round, after every round)."""
    if phase == "wipc":
        workloads = catalog.wipc(options, active, test)
    elif phase == "sweep":
        workloads = catalog.grid_sweep_cells(options, active, test)
    else:
        workloads = catalog.ss_cells(options, active, test, phase)
    return frozenset(_cell_name(w) for w in workloads)


def _complete(options: PtsOptions, active: int, stored: StoredRound) -> bool:
    """A round counts only when every cell finished (Ctrl-C keeps finished cells of a
    round cut short; such a round is run again whole) and WIPC wrote every pass."""
    if stored.test not in options.tests:
        return False
    if stored.phase == "group":
        return any(
            set(stored.cells)
            == {w.name.split(".", 2)[2] for w in catalog.xsr_cells(options, active, i)}
            for i in range(len(catalog.XSR_GROUPS))
        )
    if stored.phase == "idle":
        return any(
            set(stored.cells) == {f"w{w}-cycles", f"w{w}-cont"} for w in catalog.HIR_WAIT_STATES_S
        )
    if set(stored.cells) != expected_cells(options, active, stored.test, stored.phase):
        return False
    return stored.phase != "wipc" or all(c.io_bytes >= active for c in stored.cells.values())


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


_FIGURES = {"iops": "iops", "bw": "bw_bytes_per_s", "lat": "lat_mean_ns"}


def tracking(test: str, rounds: Sequence[StoredRound]) -> dict[str, list[float]]:
    """The tracking variables of ``test`` over its steady-state rounds, by name."""
    if not rounds:
        return {}
    cells = tuple(rounds[0].cells)
    series: dict[str, list[float]] = {}
    for cell, figure in catalog.tracked_cells(test, cells):
        values = []
        for r in rounds:
            found = r.cells.get(cell)
            value = getattr(found, _FIGURES[figure], None)
            values.append(float(value or 0.0) if found else 0.0)
        series[f"{cell} {figure}"] = values
    return series


def verdict(test: str, history: Sequence[StoredRound]) -> Verdict:
    """Steady state of ``test`` from its stored steady-state rounds."""
    return assess(tracking(test, [r for r in history if r.phase == "ss"]))


def next_for(
    options: PtsOptions, active: int, test: str, history: Sequence[StoredRound]
) -> catalog.Round | None:
    """The next round of ``test`` after its complete committed rounds; None when done."""
    phases = [r.phase for r in history]
    if test == "xsr":
        groups = phases.count("group")
        if groups < len(catalog.XSR_GROUPS):
            return catalog.Round(test, "group", groups, catalog.xsr_cells(options, active, groups))
        return None
    if test != "wsat" and "wipc" not in phases:
        return catalog.Round(test, "wipc", 0, catalog.wipc(options, active, test))
    if test == "wsat":  # samples until 4 x the range is written, the last one cut short
        samples = [
            (
                sum(c.io_bytes for c in r.cells.values()),
                max((x.runtime_ms for c in r.cells.values() for x in c.results), default=0) / 1e3,
            )
            for r in history
        ]
        target = WSAT_CAPACITY_MULTIPLE * active
        cells = catalog.wsat_sample(options, active, target, samples)
        return catalog.Round(test, "run", len(history), cells) if cells else None
    ss_count = phases.count("ss")
    if not verdict(test, history).steady and ss_count < options.max_rounds:
        return catalog.Round(test, "ss", ss_count, catalog.ss_cells(options, active, test))
    idle = phases.count("idle")
    if test == "hir" and idle < len(catalog.HIR_WAIT_STATES_S):
        return catalog.Round(test, "idle", idle, catalog.hir_cells(options, active, idle))
    if test in ("ecw", "dirth") and "sweep" not in phases:
        return catalog.Round(test, "sweep", 0, catalog.grid_sweep_cells(options, active, test))
    return None


def next_round(
    options: PtsOptions, active: int, results: Sequence[StoredResult]
) -> catalog.Round | None:
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
) -> catalog.Round | None:
    """:func:`next_round` from the complete rounds and the open one (:func:`group_rounds`)."""
    for test in options.tests:
        history = [r for r in rounds if r.test == test]
        step = next_for(options, active, test, history)
        if step is None:
            continue
        if open_round is not None and (open_round.test, open_round.phase) == (test, step.phase):
            missing = tuple(w for w in step.workloads if _cell_name(w) not in open_round.cells)
            if missing and len(missing) < len(step.workloads):  # the open round goes on
                return catalog.Round(step.test, step.phase, step.index, missing)
        if not history and options.purge:
            return catalog.Round(step.test, step.phase, step.index, step.workloads, True)
        return step
    return None


def _cell_name(workload: Workload) -> str:
    """``CELL`` of a cell's job name ``TEST.PHASE.CELL``."""
    return workload.name.split(".", 2)[2]


def active_bytes(options: PtsOptions, capacity_bytes: int) -> int:
    """The active range: the given percent of the capacity, in whole MiB."""
    return capacity_bytes * options.active_range_pct // 100 // (1 << 20) * (1 << 20)
