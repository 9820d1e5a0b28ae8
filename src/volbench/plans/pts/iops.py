"""The PTS IOPS test: RND at the run's TC x QD, outer loop R/W mix, inner loop block
size (PTS 2.0.2: 7 mixes x 8 block sizes, a cell each per round), to steady state.

Its matrix is also the Latency test's (:mod:`.latency` takes a subset of it), so
``--block-sizes`` and ``--mixes`` (:class:`Matrix`) reduce both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from volbench.errors import UsageError
from volbench.model import Workload
from volbench.plans.pts.cells import MixCell, job, mix_rw
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.steady import SteadyStateTest
from volbench.plans.pts.test import Fitting, Phase, Tracked
from volbench.units import format_block_size, parse_size

if TYPE_CHECKING:
    from volbench.plans.pts.options import PtsOptions

IOPS_BLOCK_SIZES = (1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512)
"""IOPS inner loop, bytes: 1024, 128, 64, 32, 16, 8, 4, 0.5 KiB."""

IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
"""IOPS outer loop as read percent: R/W 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100."""

LATENCY_BLOCK_SIZES = (512, 4096, 8192)
LATENCY_MIXES = (100, 65, 0)
"""Latency: RND 0.5, 4, 8 KiB x R/W 100/0, 65/35, 0/100 (a subset of the IOPS matrix:
``--block-sizes`` and ``--mixes`` reduce both matrices alike)."""

TRACKED = (MixCell(0, 4096), MixCell(65, 65536), MixCell(100, 1048576))
"""Tracking variables (PTS 2.0.2): R/W 0/100 at 4 KiB, 65/35 at 64 KiB, 100/0 at 1024 KiB."""

SOURCE = "SNIA SSS PTS-E 1.1 and PTS 2.0.2, IOPS and Latency tests"


def parse_block_sizes(text: str) -> tuple[int, ...]:
    """``4k,64k`` -> (4096, 65536); each must be one of the PTS IOPS block sizes."""
    sizes = tuple(parse_size(part) for part in text.split(",") if part.strip())
    for size in sizes:
        if size not in IOPS_BLOCK_SIZES:
            raise UsageError(
                f"block size {size} B is not in the PTS IOPS matrix "
                "(1024k, 128k, 64k, 32k, 16k, 8k, 4k, 512)"
            )
    if not sizes:
        raise UsageError("--block-sizes needs at least one size, e.g. 4k,64k")
    return tuple(s for s in IOPS_BLOCK_SIZES if s in sizes)


def parse_mixes(text: str) -> tuple[int, ...]:
    """``100/0,0/100`` -> (100, 0) as read percents; each must be a PTS IOPS mix."""
    mixes = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        read, sep, write = part.partition("/")
        if not sep or not read.isdigit() or not write.isdigit() or int(read) + int(write) != 100:
            raise UsageError(f"invalid R/W mix {part!r}: use read/write percents, e.g. 65/35")
        if int(read) not in IOPS_MIXES:
            raise UsageError(f"R/W mix {part} is not in the PTS IOPS matrix")
        mixes.append(int(read))
    if not mixes:
        raise UsageError("--mixes needs at least one R/W mix, e.g. 100/0,0/100")
    return tuple(m for m in IOPS_MIXES if m in mixes)


@dataclass(frozen=True)
class Matrix(OwnOptions):
    """The block sizes (bytes) and R/W mixes (read percent) of the IOPS matrix; the
    Latency test runs those of its own that are among them."""

    TITLE: ClassVar[str] = "IOPS and latency"

    block_sizes: tuple[int, ...] = option(
        IOPS_BLOCK_SIZES,
        Declared(
            "block_sizes",
            "Reduce the IOPS and latency matrices, e.g. 4k,64k.",
            SOURCE,
            parse=parse_block_sizes,
            shown="1024k,128k,64k,32k,16k,8k,4k,512",
        ),
    )
    mixes: tuple[int, ...] = option(
        IOPS_MIXES,
        Declared(
            "mixes",
            "Reduce the IOPS and latency matrices, e.g. 100/0,0/100.",
            SOURCE,
            parse=parse_mixes,
            shown="100/0,95/5,65/35,50/50,35/65,5/95,0/100",
        ),
    )

    def latency_block_sizes(self, options: PtsOptions) -> tuple[int, ...]:
        """The Latency test's block sizes: PTS's, less those ``--block-sizes`` left out
        of the IOPS matrix or the target cannot do."""
        return tuple(s for s in options.fitting(LATENCY_BLOCK_SIZES) if s in self.block_sizes)

    @property
    def latency_mixes(self) -> tuple[int, ...]:
        """The Latency test's R/W mixes (read percent): PTS's, less those ``--mixes``
        left out of the IOPS matrix."""
        return tuple(m for m in LATENCY_MIXES if m in self.mixes)

    def check(self, options: PtsOptions, tests: tuple[str, ...]) -> None:
        """UsageError when ``--block-sizes`` or ``--mixes`` leave the Latency test no cell."""
        if "latency" not in tests:
            return
        if not set(self.block_sizes) & set(LATENCY_BLOCK_SIZES):
            latency = ", ".join(format_block_size(s) for s in LATENCY_BLOCK_SIZES)
            raise UsageError(
                f"--block-sizes {','.join(format_block_size(s) for s in self.block_sizes)} leaves "
                f"the latency test no cell: add one of {latency} or run latency apart"
            )
        if not set(self.mixes) & set(LATENCY_MIXES):
            raise UsageError(
                f"--mixes {','.join(f'{m}/{100 - m}' for m in self.mixes)} leaves the latency "
                f"test no cell: add one of {', '.join(f'{m}/{100 - m}' for m in LATENCY_MIXES)}"
                " or run latency apart"
            )

    def fitted(self, options: PtsOptions, tests: tuple[str, ...], where: str) -> Matrix:
        """The block sizes the target cannot do are left out of the default matrix;
        asked for explicitly (``--block-sizes``) by a test of the run, refused."""
        logical = options.logical_block_bytes
        unfit = [s for s in self.block_sizes if s % logical]
        if unfit and tests and self.block_sizes != IOPS_BLOCK_SIZES:
            keep = options.fitting(self.block_sizes) or options.fitting(IOPS_BLOCK_SIZES)[-1:]
            raise UsageError(
                f"--block-sizes {','.join(format_block_size(s) for s in unfit)}: {where} has "
                f"{logical / 1024:g} KiB logical blocks; use multiples of {logical / 1024:g} "
                f"KiB, e.g. --block-sizes {','.join(format_block_size(s) for s in keep)}"
            )
        return replace(self, block_sizes=options.fitting(self.block_sizes))

    def reasons(self, options: PtsOptions, tests: tuple[str, ...]) -> tuple[str, ...]:
        found = []
        if "iops" in tests:
            if set(self.block_sizes) != set(options.fitting(IOPS_BLOCK_SIZES)):
                found.append("reduced IOPS block sizes")
            if set(self.mixes) != set(IOPS_MIXES):
                found.append("reduced IOPS R/W mixes")
        if "latency" in tests:
            if self.latency_block_sizes(options) != options.fitting(LATENCY_BLOCK_SIZES):
                found.append("reduced latency block sizes")
            if self.latency_mixes != LATENCY_MIXES:
                found.append("reduced latency R/W mixes")
        return tuple(found)


def iops_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    """One round: every R/W mix (``--mixes``) x every block size (``--block-sizes``)."""
    matrix = options.of(Matrix)
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
        for mix in matrix.mixes
        for bs in matrix.block_sizes
    )


@dataclass(frozen=True)
class Iops(SteadyStateTest):
    name: str = "iops"
    own = Matrix

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        return iops_cells(options, active)

    def tracked(self, cells: Sequence[str]) -> Tracked:
        """The IOPS of PTS's tracked cells in the matrix (of every cell when a reduced
        matrix has none of them)."""
        wanted = [c for c in map(str, TRACKED) if c in cells]
        return tuple((c, "iops") for c in (wanted or cells))

    def fitting(self, options: PtsOptions) -> Fitting:
        """The default matrix leaves out block sizes the target cannot do."""
        sizes = options.of(Matrix).block_sizes
        if sizes != options.fitting(IOPS_BLOCK_SIZES):
            return Fitting()
        return Fitting("IOPS", tuple(sorted(set(IOPS_BLOCK_SIZES) - set(sizes))))


IOPS = Iops()
