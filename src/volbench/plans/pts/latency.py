"""The PTS Latency test: RND at TC1/QD1, block sizes 0.5, 4, 8 KiB x R/W 100/0, 65/35,
0/100 (as ``--block-sizes`` and ``--mixes`` reduce them: its options are the IOPS
test's matrix, :class:`.iops.Matrix`), to steady state of the mean response time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from volbench.model import Workload
from volbench.plans.pts.cells import MixCell, job, mix_rw
from volbench.plans.pts.iops import IOPS_BLOCK_SIZES, LATENCY_BLOCK_SIZES, Matrix
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Fitting, Phase, Tracked

if TYPE_CHECKING:
    from volbench.plans.pts.options import PtsOptions

TRACKED = MixCell(0, 4096)
"""Tracking variable: the mean response time of RND 4 KiB 0/100."""


def latency_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    """One round: every R/W mix x every block size, at TC1/QD1."""
    matrix = options.of(Matrix)
    return tuple(
        job(
            options,
            active,
            "latency",
            Phase.SS,
            MixCell(mix, bs),
            mix_rw(mix),
            bs_bytes=bs,
            rwmixread_pct=mix,
        )
        for mix in matrix.latency_mixes
        for bs in matrix.latency_block_sizes(options)
    )


@dataclass(frozen=True)
class Latency(SteadyStateTest):
    name: str = "latency"
    own = Matrix

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        return latency_cells(options, active)

    def tracked(self, cells: Sequence[str]) -> Tracked:
        """RND 4 KiB 0/100 (every cell when a reduced matrix has not that one)."""
        return tuple((c, "lat") for c in ([str(TRACKED)] if str(TRACKED) in cells else cells))

    def fitting(self, options: PtsOptions) -> Fitting:
        """The default matrix leaves out block sizes the target cannot do."""
        if options.of(Matrix).block_sizes != options.fitting(IOPS_BLOCK_SIZES):
            return Fitting()
        left = set(LATENCY_BLOCK_SIZES) - set(options.fitting(LATENCY_BLOCK_SIZES))
        return Fitting("latency", tuple(sorted(left)))


LATENCY = Latency()
