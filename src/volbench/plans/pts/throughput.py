"""The PTS Throughput test, as SNIA SSS PTS-E 1.1 (and PTS 2.0.2) runs it: each block
size a test of its own (``throughput-1024k``, ``throughput-128k``: purge, WIPC,
rounds of SEQ 100% write and 100% read to steady state), 1024 KiB first.

Runs stored before the block sizes were split have one test ``throughput`` whose
rounds hold both block sizes (:data:`LEGACY`: still read and resumed as they ran).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from volbench.model import RW, Workload
from volbench.plans.pts.cells import MixCell, job
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Phase, Tracked

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

THROUGHPUT_TESTS = {"throughput-1024k": 1048576, "throughput-128k": 131072}
"""Throughput, as SNIA SSS PTS-E 1.1 (and PTS 2.0.2) runs it: each block size its own
test (purge, WIPC, rounds of SEQ 100% read and 100% write to steady state),
1024 KiB first. Runs stored before the split have one test ``throughput`` whose
rounds hold both block sizes (still read and resumed as they ran)."""

SELECTOR = "throughput"
"""The name that selects both block sizes."""

SELECTOR_NOTE = f"{' or '.join(THROUGHPUT_TESTS)}: one throughput block size"
"""What the command's help says of the tests :data:`SELECTOR` selects."""


@dataclass(frozen=True)
class Throughput(SteadyStateTest):
    """SEQ 100% write then 100% read at each of ``block_sizes``, one stream each."""

    name: str
    block_sizes: tuple[int, ...]

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        return tuple(
            job(
                options,
                active,
                self.name,
                Phase.SS,
                MixCell(100 if read else 0, bs),
                RW.READ if read else RW.WRITE,
                bs_bytes=bs,
                rwmixread_pct=100 if read else 0,
                iodepth=options.threads * options.iodepth,
            )
            for bs in self.block_sizes
            for read in (False, True)
        )

    def tracked(self, cells: Sequence[str]) -> Tracked:
        """The bandwidth of each cell."""
        return tuple((c, "bw") for c in cells)


THROUGHPUTS = tuple(Throughput(name, (bs,)) for name, bs in THROUGHPUT_TESTS.items())
"""``throughput-1024k`` and ``throughput-128k``."""

LEGACY = Throughput("throughput", tuple(THROUGHPUT_TESTS.values()))
"""The one Throughput test of runs stored before the split (both block sizes a round)."""
