"""What a PTS test is: the :class:`PtsTest` protocol each test module implements, the
phases of its rounds, the round it runs next and the rounds it has stored.

The tests are objects in modules of their own, each with the options it declares
(:mod:`.declared`), listed once in :data:`volbench.plans.pts.catalog.TESTS`;
everything that spans the tests (grouping stored results into rounds, the driver,
the estimate, the reports, the ``pts`` command's options) asks them. A test module
imports :mod:`.options` for its types only (``if TYPE_CHECKING``): that module
imports the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from volbench.analysis.steady_state import Verdict, assess
from volbench.model import StoredResult, Workload
from volbench.plans.pts.declared import OwnOptions

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions


class Phase(StrEnum):
    """The phase of a round, as its cells' job names ``TEST.PHASE.CELL`` store it."""

    WIPC = "wipc"
    """Workload-independent preconditioning: 2 x the active range of 128 KiB writes."""
    SS = "ss"
    """Rounds tracked for steady state."""
    SWEEP = "sweep"
    """The demand-intensity sweep of ECW and DIRTH, after steady state."""
    RUN = "run"
    """WSAT's continuous samples."""
    IDLE = "idle"
    """HIR's wait states, after steady state."""
    GROUP = "group"
    """XSR's access groups."""


@dataclass(frozen=True)
class Round:
    """One round to run: which test and phase, its cells, and whether to purge first."""

    test: str
    phase: Phase
    index: int
    workloads: tuple[Workload, ...]
    purge: bool = False

    @property
    def planned_s(self) -> float:
        return sum(w.duration_s for w in self.workloads)


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
    cell (older runs stored a whole PTS round in one store round). ``phase`` and
    the keys of ``cells`` are as stored (``str`` of :class:`Phase` and of the cell names)."""

    round_no: int
    test: str
    phase: str
    cells: dict[str, Cell] = field(default_factory=dict)
    index: int = 0


@dataclass(frozen=True)
class Fitting:
    """What a target's logical block size changed in one test (named ``label`` in the
    run's notes): block sizes left out of its matrix, I/O sizes rounded up."""

    label: str = ""
    left_out: tuple[int, ...] = ()
    rounded: tuple[int, ...] = ()


Tracked = tuple[tuple[str, str], ...]
"""(cell, figure) pairs tracked for steady state, figure one of iops, bw, lat."""


class PtsTest(Protocol):
    """One PTS test: its phases and their cells, what it runs next, how it tracks
    steady state, and how long it takes."""

    @property
    def name(self) -> str:
        """The test as its job names, options and reports name it (``iops``)."""

    @property
    def phases(self) -> tuple[Phase, ...]:
        """Its phases, in the order it runs them."""

    @property
    def steady_state(self) -> bool:
        """Whether it runs rounds to steady state (:attr:`Phase.SS`)."""

    @property
    def own(self) -> type[OwnOptions] | None:
        """The record of its own options (None: it has none): the ``pts`` command
        takes each of its declared fields as an option, and the test reads their
        values as ``options.of(record)`` (:mod:`.declared`)."""

    def phase_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        """The distinct rounds of ``phase``: round ``index`` runs the ``index``-th
        (HIR's wait states, XSR's groups); a phase repeated to steady state or to a
        sample limit has one. Empty for a phase the test has not."""

    def next_round(
        self, options: PtsOptions, active: int, history: Sequence[StoredRound]
    ) -> Round | None:
        """The next round after its complete committed rounds; None when it is done."""

    def tracked(self, cells: Sequence[str]) -> Tracked:
        """Its tracking variables among the cells of a steady-state round."""

    def verdict(self, history: Sequence[StoredRound]) -> Verdict:
        """Steady state from its stored rounds."""

    def tracking(self, rounds: Sequence[StoredRound]) -> dict[str, list[float]]:
        """Its tracking variables over steady-state ``rounds``, by name."""

    def estimate(
        self, options: PtsOptions, active: int, speed: float, purge_s: float
    ) -> tuple[float, float]:
        """Shortest and longest duration (seconds), purge included, at a measured
        sequential write speed (bytes/s)."""

    def planned_s(self, options: PtsOptions, active: int, stored: StoredRound) -> float:
        """Planned seconds of one committed round (WIPC aside)."""

    def describe(self, step: Round, options: PtsOptions) -> str:
        """What the progress display says when ``step`` starts."""

    def limit_note(self, options: PtsOptions) -> str | None:
        """A limit of its own, besides the steady-state round limit, for the run header."""

    def estimate_bounds(self, options: PtsOptions) -> tuple[str, str] | None:
        """What its own shortest and longest estimate assume, besides steady state."""

    def fitting(self, options: PtsOptions) -> Fitting:
        """What the target's logical block size changed in it."""

    def repeats(self, options: PtsOptions, phase: Phase) -> tuple[int, int]:
        """How often a round of ``phase`` runs: (at least, at most) (the dry run)."""


FIGURES = {"iops": "iops", "bw": "bw_bytes_per_s", "lat": "lat_mean_ns"}
"""Tracked figure -> the :class:`Cell` attribute it reads."""


class BaseTest:
    """What most tests do alike (each may do otherwise): the IOPS of every cell as
    tracking variables, rounds planned at ``--cell-seconds`` a cell, no limit or
    estimate text of their own, nothing changed by the logical block size."""

    name: str
    phases: tuple[Phase, ...]
    own: type[OwnOptions] | None = None

    @property
    def steady_state(self) -> bool:
        return Phase.SS in self.phases

    def tracked(self, cells: Sequence[str]) -> Tracked:
        return tuple((c, "iops") for c in cells)

    def tracking(self, rounds: Sequence[StoredRound]) -> dict[str, list[float]]:
        if not rounds:
            return {}
        series: dict[str, list[float]] = {}
        for cell, figure in self.tracked(tuple(rounds[0].cells)):
            values = []
            for r in rounds:
                found = r.cells.get(cell)
                value = getattr(found, FIGURES[figure], None)
                values.append(float(value or 0.0) if found else 0.0)
            series[f"{cell} {figure}"] = values
        return series

    def verdict(self, history: Sequence[StoredRound]) -> Verdict:
        return assess(self.tracking([r for r in history if r.phase == Phase.SS]))

    def planned_s(self, options: PtsOptions, active: int, stored: StoredRound) -> float:
        return len(stored.cells) * options.cell_seconds

    def limit_note(self, options: PtsOptions) -> str | None:
        return None

    def estimate_bounds(self, options: PtsOptions) -> tuple[str, str] | None:
        return None

    def fitting(self, options: PtsOptions) -> Fitting:
        return Fitting()

    def repeats(self, options: PtsOptions, phase: Phase) -> tuple[int, int]:
        """A steady-state round: from a window's rounds to ``--max-rounds``; others once."""
        return (options.fewest_rounds, options.max_rounds) if phase == Phase.SS else (1, 1)
