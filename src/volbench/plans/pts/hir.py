"""The PTS HIR test (host idle recovery): 4 KiB random writes to steady state; then
for each wait state 5, 10, 15, 25, 50 s: cycles of 5 s of writes + the wait
(``--hir-cycles``, 360 in PTS), followed by 1800 s of continuous writes.

Times scale with ``--cell-seconds`` / 60 (a 1-minute cell = PTS times)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from volbench.model import RW, Workload
from volbench.plans.pts.cells import WaitCell, parse_cell_as, random_write_4k
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Phase, Round, StoredRound
from volbench.units import format_seconds

if TYPE_CHECKING:  # options imports the catalog, which imports this module
    from volbench.plans.pts.options import PtsOptions

HIR_WAIT_STATES_S = (5, 10, 15, 25, 50)
HIR_WRITE_S = 5
HIR_CONTINUOUS_S = 1800
HIR_CYCLES = 360
"""Cycles of writes and wait per wait state (SNIA SSS PTS-E 1.1, HIR test)."""

MAX_HIR_CYCLES = 10_000
"""HIR cycles at most: 28 times the PTS's 360 (each cycle is a burst and its rests)."""


@dataclass(frozen=True)
class HirOptions(OwnOptions):
    """HIR's own option: cycles of writes and wait per wait state."""

    TITLE: ClassVar[str] = "HIR"

    cycles: int = option(
        HIR_CYCLES,
        Declared(
            "hir_cycles",
            "Cycles per wait state; not 360: non-compliant.",
            "SNIA SSS PTS-E 1.1, HIR test",
            low=1,
            high=MAX_HIR_CYCLES,
        ),
    )

    def reasons(self, options: PtsOptions, tests: tuple[str, ...]) -> tuple[str, ...]:
        if self.cycles == HIR_CYCLES or not tests:
            return ()
        return (f"HIR with {self.cycles} cycles per wait state instead of {HIR_CYCLES}",)


def hir_cells(options: PtsOptions, active: int, index: int) -> tuple[Workload, ...]:
    """One HIR wait state: ``--hir-cycles`` x (5 s of 4 KiB random writes + the wait),
    as one fio job (``thinktime`` after ``thinktime_iotime``), then the continuous
    writes, stonewalled in the same fio process."""
    scale = options.cell_seconds / 60
    wait = HIR_WAIT_STATES_S[index]
    shape: dict[str, object] = {
        "bs_bytes": 4096,
        "rwmixread_pct": 0,
        "iodepth": options.iodepth,
        "numjobs": options.threads,
    }
    cycles = Workload(
        f"hir.{Phase.IDLE}.{WaitCell(wait, 'cycles')}",
        RW.RANDWRITE,
        size_bytes=active,
        runtime_s=options.of(HirOptions).cycles * (HIR_WRITE_S + wait) * scale,
        thinktime_s=wait * scale,
        thinktime_iotime_s=HIR_WRITE_S * scale,
        ioengine=options.ioengine,
        **shape,  # type: ignore[arg-type]
    )
    continuous = Workload(
        f"hir.{Phase.IDLE}.{WaitCell(wait, 'cont')}",
        RW.RANDWRITE,
        size_bytes=active,
        runtime_s=HIR_CONTINUOUS_S * scale,
        ioengine=options.ioengine,
        **shape,  # type: ignore[arg-type]
    )
    return (cycles, continuous)


@dataclass(frozen=True)
class Hir(SteadyStateTest):
    name: str = "hir"
    phases: tuple[Phase, ...] = (Phase.WIPC, Phase.SS, Phase.IDLE)
    own = HirOptions

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        return (random_write_4k(options, active, self.name, Phase.SS),)

    def after_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        """The wait states, in PTS order."""
        if phase != Phase.IDLE:
            return ()
        return tuple(hir_cells(options, active, i) for i in range(len(HIR_WAIT_STATES_S)))

    def planned_s(self, options: PtsOptions, active: int, stored: StoredRound) -> float:
        """A wait state: its cycles and continuous writes."""
        if stored.phase != Phase.IDLE:
            return super().planned_s(options, active, stored)
        wait = parse_cell_as(WaitCell, next(iter(stored.cells))).wait_s
        index = HIR_WAIT_STATES_S.index(wait)
        return sum(w.duration_s for w in hir_cells(options, active, index))

    def describe(self, step: Round, options: PtsOptions) -> str:
        if step.phase != Phase.IDLE:
            return super().describe(step, options)
        idle = format_seconds(step.workloads[0].thinktime_s or 0.0)
        return (
            f"{step.test}: wait state {step.index + 1} of {len(HIR_WAIT_STATES_S)} "
            f"({idle} idle per cycle)"
        )


HIR = Hir()
