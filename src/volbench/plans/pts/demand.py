"""What ECW and DIRTH share: steady state at the largest TC x QD of their grid, one
cell per round, then the demand-intensity sweep over every TC x QD of the grid
(``--toio-grid`` narrows it), highest demand first (PTS sweeps from high to low).

Simplification, recorded in the report notes: steady state is reached at the
largest TC x QD of the grid before the sweep, which runs one cell per TC x QD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from volbench.errors import UsageError
from volbench.model import RW, Workload
from volbench.plans.pts.cells import GridCell, job
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Phase, Round

if TYPE_CHECKING:  # options imports the catalog, which imports this module
    from volbench.plans.pts.options import PtsOptions


def parse_grid(text: str) -> tuple[int, ...]:
    """``8,1`` -> (8, 1): the TC and QD values kept in the ECW and DIRTH sweeps."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) in (32, 16, 8, 6, 4, 2, 1) for p in parts):
        raise UsageError(f"invalid --toio-grid {text!r}: use values of 32,16,8,6,4,2,1, e.g. 8,1")
    return tuple(sorted({int(p) for p in parts}, reverse=True))


@dataclass(frozen=True)
class Grid(OwnOptions):
    """The TC and QD values ECW and DIRTH keep of their grids (empty: all of them)."""

    TITLE: ClassVar[str] = "ECW and DIRTH"

    toio_grid: tuple[int, ...] = option(
        (),
        Declared(
            "toio_grid",
            "Reduce the ECW/DIRTH TC and QD grid, e.g. 8,1.",
            "SNIA SSS PTS-E 1.1, ECW and DIRTH tests",
            parse=parse_grid,
            shown="ECW 32,16,8,4,2,1; DIRTH 32,16,8,6,4,2,1",
        ),
    )

    def reasons(self, options: PtsOptions, tests: tuple[str, ...]) -> tuple[str, ...]:
        return ("reduced TC x QD grid",) if self.toio_grid and tests else ()


class DemandTest(SteadyStateTest):
    """A test of RND R/W mixes over a TC x QD grid: the grid and the cells' shape."""

    phases: tuple[Phase, ...] = (Phase.WIPC, Phase.SS, Phase.SWEEP)
    own = Grid
    full_grid: tuple[int, ...]
    """The TC and QD values of PTS's grid."""

    def shape(self, options: PtsOptions) -> dict[str, object]:
        """The Workload fields of every cell but TC, QD and rw (RND R/W mix)."""
        raise NotImplementedError

    def grid(self, options: PtsOptions) -> tuple[int, ...]:
        """The TC and QD values of the sweep (``--toio-grid`` narrows it)."""
        chosen = options.of(Grid).toio_grid
        return tuple(v for v in self.full_grid if v in chosen) if chosen else self.full_grid

    def cell(self, options: PtsOptions, active: int, phase: Phase, tc: int, qd: int) -> Workload:
        cell = GridCell(tc, qd)
        shape = self.shape(options)
        return job(
            options, active, self.name, phase, cell, RW.RANDRW, iodepth=qd, numjobs=tc, **shape
        )

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        top = max(self.grid(options))
        return (self.cell(options, active, Phase.SS, top, top),)

    def sweep_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        """Every TC x QD of the grid, highest demand first."""
        values = self.grid(options)
        pairs = sorted(
            ((tc, qd) for tc in values for qd in values), key=lambda p: (-p[0] * p[1], -p[0])
        )
        return tuple(self.cell(options, active, Phase.SWEEP, tc, qd) for tc, qd in pairs)

    def after_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        return (self.sweep_cells(options, active),) if phase == Phase.SWEEP else ()

    def describe(self, step: Round, options: PtsOptions) -> str:
        if step.phase != Phase.SWEEP:
            return super().describe(step, options)
        return f"{step.test}: demand-intensity sweep, {len(step.workloads)} TC x QD cells"
