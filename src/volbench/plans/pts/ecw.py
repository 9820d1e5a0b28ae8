"""The PTS ECW test (enterprise composite workload): RND R/W 40/60 of a block-size mix
from 0.5 to 64 KiB, 50% of the I/O to the first 5% of the range ..., to steady
state at the largest TC x QD, then the demand-intensity sweep (:mod:`.demand`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from volbench.plans.pts.demand import DemandTest
from volbench.plans.pts.test import Fitting

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

ECW_BSSPLIT = (
    (512, 4),
    (1024, 1),
    (1536, 1),
    (2048, 1),
    (2560, 1),
    (3072, 1),
    (3584, 1),
    (4096, 67),
    (8192, 10),
    (16384, 7),
    (32768, 3),
    (65536, 3),
)
"""ECW/CBW block-size mix: 0.5 KiB 4%, 1-3.5 KiB 1% each, 4 KiB 67%, 8 KiB 10% ..."""

ECW_READ_PCT = 40
"""ECW R/W mix 40/60 (PTS-E 1.1 ECW)."""

ECW_DISTRIBUTION = "zoned:50/5:30/15:20/80"
"""ECW access: 50% of I/O to the first 5% of the range, 30% to the next 15% ..."""

ECW_GRID = (32, 16, 8, 4, 2, 1)


def ecw_bssplit(logical_bytes: int) -> tuple[tuple[int, int], ...]:
    """The ECW block-size mix on a target with ``logical_bytes`` logical blocks: each
    size rounded up to a multiple of it, shares of equal sizes merged (on 4 KiB
    blocks: 0.5-3.5 KiB join 4 KiB, 77%); the percentages still add up to 100."""
    merged: dict[int, int] = {}
    for bs, pct in ECW_BSSPLIT:
        size = -(-bs // logical_bytes) * logical_bytes
        merged[size] = merged.get(size, 0) + pct
    return tuple(merged.items())


@dataclass(frozen=True)
class Ecw(DemandTest):
    name: str = "ecw"
    full_grid: tuple[int, ...] = ECW_GRID

    def shape(self, options: PtsOptions) -> dict[str, object]:
        return {
            "bssplit": ecw_bssplit(options.logical_block_bytes),
            "rwmixread_pct": ECW_READ_PCT,
            "random_distribution": ECW_DISTRIBUTION,
        }

    def fitting(self, options: PtsOptions) -> Fitting:
        """Sizes of the mix that are not a multiple of the logical block are rounded up."""
        logical = options.logical_block_bytes
        return Fitting("ECW", rounded=tuple(bs for bs, _ in ECW_BSSPLIT if bs % logical))


ECW = Ecw()
