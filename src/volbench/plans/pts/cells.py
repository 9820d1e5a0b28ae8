"""The cells of PTS rounds: their typed names, and the fio jobs they run as.

Each cell is one fio job section named ``TEST.PHASE.CELL``. ``CELL`` is one of the
names below; its ``str()`` is the name stored with the results, and
:func:`parse_cell` reads a stored one back (``None`` for a name volbench never
writes), so stored runs read and resume as they always have.

Simplifications, each recorded in the report notes: sequential cells (WIPC,
Throughput, XSR's sequential groups) run as one job at QD = TC x QD, so that one
sequential stream covers the active range.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from volbench.model import RW, Workload
from volbench.units import format_block_size, parse_size

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions


@dataclass(frozen=True)
class MixCell:
    """A R/W mix at one block size: ``0-100.4k`` is 0% read, 4 KiB."""

    read_pct: int
    bs_bytes: int

    def __str__(self) -> str:
        return f"{self.read_pct}-{100 - self.read_pct}.{format_block_size(self.bs_bytes)}"

    @property
    def label(self) -> str:
        return f"R/W {self.read_pct}/{100 - self.read_pct}, {block_size_label(self.bs_bytes)}"


@dataclass(frozen=True)
class GridCell:
    """One point of a TC x QD grid (ECW, DIRTH): ``tc2-qd2``."""

    tc: int
    qd: int

    def __str__(self) -> str:
        return f"tc{self.tc}-qd{self.qd}"

    @property
    def label(self) -> str:
        return f"TC {self.tc} x QD {self.qd}"


@dataclass(frozen=True)
class PassCell:
    """One WIPC pass over the active range: ``pass1``."""

    n: int

    def __str__(self) -> str:
        return f"pass{self.n}"

    @property
    def label(self) -> str:
        return f"pass {self.n}"


@dataclass(frozen=True)
class WaitCell:
    """One part of a HIR wait state (seconds as PTS gives them, before scaling):
    ``w5-cycles`` (writes + waits), ``w5-cont`` (the continuous writes after)."""

    wait_s: int
    part: Literal["cycles", "cont"]

    def __str__(self) -> str:
        return f"w{self.wait_s}-{self.part}"

    @property
    def label(self) -> str:
        return str(self)


@dataclass(frozen=True)
class GroupCell:
    """Cell ``n`` (from 1) of an XSR access group: ``g1-seq1m.c001``."""

    group: str
    n: int

    def __str__(self) -> str:
        return f"{self.group}.c{self.n:03d}"

    @property
    def label(self) -> str:
        return str(self)


CellName = MixCell | GridCell | PassCell | WaitCell | GroupCell
_Name = TypeVar("_Name", MixCell, GridCell, PassCell, WaitCell, GroupCell)

_PATTERNS: tuple[tuple[str, Callable[[tuple[str, ...]], CellName]], ...] = (
    (r"(\d+)-\d+\.(\d+[km]?)", lambda p: MixCell(int(p[0]), parse_size(p[1]))),
    (r"tc(\d+)-qd(\d+)", lambda p: GridCell(int(p[0]), int(p[1]))),
    (r"pass(\d+)", lambda p: PassCell(int(p[0]))),
    (
        r"w(\d+)-(cycles|cont)",
        lambda p: WaitCell(int(p[0]), "cont" if p[1] == "cont" else "cycles"),
    ),
    (r"(g\d+-[a-z0-9]+)\.c(\d+)", lambda p: GroupCell(p[0], int(p[1]))),
)
"""Each kind of name: its pattern, and the typed name from the pattern's groups."""


def parse_cell(text: str) -> CellName | None:
    """The typed name of a stored ``CELL`` (None: not a name volbench writes)."""
    for pattern, read in _PATTERNS:
        match = re.fullmatch(pattern, text)
        if match is not None:
            cell = read(match.groups())
            return cell if str(cell) == text else None
    return None


def parse_cell_as(kind: type[_Name], text: str) -> _Name:
    """The typed name of a stored ``CELL`` known to be of ``kind``; ValueError if not."""
    cell = parse_cell(text)
    if not isinstance(cell, kind):
        raise ValueError(f"not a {kind.__name__} name: {text!r}")
    return cell


def cell_name(workload: Workload) -> str:
    """``CELL`` of a cell's job name ``TEST.PHASE.CELL``."""
    return workload.name.split(".", 2)[2]


def mix_rw(read_pct: int, random: bool = True) -> RW:
    """fio rw for a read percent: pure reads and writes as such, else a mix."""
    if read_pct == 100:
        return RW.RANDREAD if random else RW.READ
    if read_pct == 0:
        return RW.RANDWRITE if random else RW.WRITE
    return RW.RANDRW if random else RW.RW


def job(
    options: PtsOptions,
    active: int,
    test: str,
    phase: str,
    cell: CellName,
    rw: RW,
    **fields: object,
) -> Workload:
    """One time-based cell ``TEST.PHASE.CELL`` of ``--cell-seconds`` over the active range."""
    return Workload(
        f"{test}.{phase}.{cell}",
        rw,
        size_bytes=active,
        runtime_s=options.cell_seconds,
        ioengine=options.ioengine,
        **fields,  # type: ignore[arg-type]
    )


RANDOM_WRITE_4K = MixCell(0, 4096)
"""WSAT's samples and HIR's steady-state rounds: 4 KiB random writes."""


def random_write_4k(options: PtsOptions, active: int, test: str, phase: str) -> Workload:
    """A cell of 4 KiB random writes at the run's TC x QD."""
    return job(
        options,
        active,
        test,
        phase,
        RANDOM_WRITE_4K,
        RW.RANDWRITE,
        bs_bytes=4096,
        rwmixread_pct=0,
        iodepth=options.iodepth,
        numjobs=options.threads,
    )


def kib(size: int) -> str:
    """A block size as PTS writes it: ``512`` -> ``0.5 KiB``, ``4096`` -> ``4 KiB``."""
    return f"{size / 1024:g} KiB"


def block_size_label(size: int) -> str:
    """A block size as report tables print it: ``512 B``, ``4 KiB``, ``1024 KiB`` (PTS
    writes 1 MiB as 1024 KiB); never ``0.5k``, which reads as a fraction."""
    return f"{size} B" if size < 1024 or size % 1024 else f"{size // 1024} KiB"
