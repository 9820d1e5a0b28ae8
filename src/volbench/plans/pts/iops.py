"""The PTS IOPS test: RND at the run's TC x QD, outer loop R/W mix, inner loop block
size (PTS 2.0.2: 7 mixes x 8 block sizes, a cell each per round), to steady state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.model import Workload
from volbench.plans.pts.cells import MixCell, job, mix_rw
from volbench.plans.pts.options import IOPS_BLOCK_SIZES, PtsOptions
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Fitting, Phase, Tracked

TRACKED = (MixCell(0, 4096), MixCell(65, 65536), MixCell(100, 1048576))
"""Tracking variables (PTS 2.0.2): R/W 0/100 at 4 KiB, 65/35 at 64 KiB, 100/0 at 1024 KiB."""


def iops_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    """One round: every R/W mix (``--mixes``) x every block size (``--block-sizes``)."""
    return tuple(
        job(
            options,
            active,
            "iops",
            Phase.SS,
            MixCell(mix, bs),
            mix_rw(mix),
            bs_bytes=bs,
            rwmixread_pct=mix,
            iodepth=options.iodepth,
            numjobs=options.threads,
        )
        for mix in options.mixes
        for bs in options.block_sizes
    )


@dataclass(frozen=True)
class Iops(SteadyStateTest):
    name: str = "iops"

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        return iops_cells(options, active)

    def tracked(self, cells: Sequence[str]) -> Tracked:
        """The IOPS of PTS's tracked cells in the matrix (of every cell when a reduced
        matrix has none of them)."""
        wanted = [c for c in map(str, TRACKED) if c in cells]
        return tuple((c, "iops") for c in (wanted or cells))

    def fitting(self, options: PtsOptions) -> Fitting:
        """The default matrix leaves out block sizes the target cannot do."""
        if options.block_sizes != options.fitting(IOPS_BLOCK_SIZES):
            return Fitting()
        return Fitting("IOPS", tuple(sorted(set(IOPS_BLOCK_SIZES) - set(options.block_sizes))))


IOPS = Iops()
