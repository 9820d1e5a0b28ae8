"""The PTS XSR test (cross-stimulus recovery): purge, no WIPC; access groups SEQ 1024
KiB write -> RND 8 KiB write -> SEQ 1024 KiB write, each ``--xsr-cells``
consecutive cells (throughput and response time vs time at cell resolution)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from volbench.fio.bounds import MAX_NUMJOBS
from volbench.model import RW, Workload
from volbench.plans.pts.cells import GroupCell, job
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.test import BaseTest, Phase, Round, StoredRound

if TYPE_CHECKING:  # options imports the catalog, which imports this module
    from volbench.plans.pts.options import PtsOptions

XSR_GROUPS = (
    ("g1-seq1m", RW.WRITE, 1048576),
    ("g2-rnd8k", RW.RANDWRITE, 8192),
    ("g3-seq1m", RW.WRITE, 1048576),
)
"""XSR access groups: SEQ 1024 KiB write -> RND 8 KiB write -> SEQ 1024 KiB write."""


@dataclass(frozen=True)
class XsrOptions(OwnOptions):
    """XSR's own option: how many cells each access group runs."""

    TITLE: ClassVar[str] = "XSR"

    cells: int = option(
        60,
        Declared(
            "xsr_cells",
            "Cells per XSR group (one fio process: at most fio's 4,096 jobs).",
            "SNIA SSS PTS-E 1.1, XSR test",
            low=1,
            high=MAX_NUMJOBS,
        ),
    )


def xsr_cells(options: PtsOptions, active: int, index: int) -> tuple[Workload, ...]:
    """One XSR access group: ``--xsr-cells`` consecutive cells, one fio process, no gaps
    but fio's own."""
    label, rw, bs = XSR_GROUPS[index]
    sequential = not rw.is_random
    return tuple(
        job(
            options,
            active,
            "xsr",
            Phase.GROUP,
            GroupCell(label, n),
            rw,
            bs_bytes=bs,
            rwmixread_pct=0,
            iodepth=options.threads * options.iodepth if sequential else options.iodepth,
            numjobs=1 if sequential else options.threads,
        )
        for n in range(1, options.of(XsrOptions).cells + 1)
    )


@dataclass(frozen=True)
class Xsr(BaseTest):
    name: str = "xsr"
    phases: tuple[Phase, ...] = (Phase.GROUP,)
    own = XsrOptions

    def phase_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        if phase not in self.phases:
            return ()
        return tuple(xsr_cells(options, active, i) for i in range(len(XSR_GROUPS)))

    def next_round(
        self, options: PtsOptions, active: int, history: Sequence[StoredRound]
    ) -> Round | None:
        groups = [r.phase for r in history].count(Phase.GROUP)
        if groups < len(XSR_GROUPS):
            return Round(self.name, Phase.GROUP, groups, xsr_cells(options, active, groups))
        return None

    def estimate(
        self, options: PtsOptions, active: int, speed: float, purge_s: float
    ) -> tuple[float, float]:
        """Every group's cells: as long at best as at worst."""
        total = purge_s + sum(
            w.duration_s for group in self.phase_rounds(options, active, Phase.GROUP) for w in group
        )
        return total, total

    def describe(self, step: Round, options: PtsOptions) -> str:
        return (
            f"{step.test}: access group {step.index + 1} of {len(XSR_GROUPS)}, "
            f"{len(step.workloads)} cells"
        )


XSR = Xsr()
