"""The PTS tests as rounds of fio cells (DESIGN.md "SNIA PTS facts").

Each cell is one fio job section named ``TEST.PHASE.CELL``: the phase is
``wipc`` (workload-independent preconditioning), ``ss`` (rounds tracked for
steady state), ``sweep`` (the demand-intensity sweep of ECW and DIRTH, after
steady state) or ``run`` (WSAT's continuous samples). The name alone says what a
stored result belongs to, which is what makes a run resumable.

Simplifications, each recorded in the report notes: sequential cells (WIPC and
Throughput) run as one job at QD = TC x QD, so that one sequential stream covers
the active range; ECW and DIRTH reach steady state at the largest TC x QD of
their grid before the sweep, one cell per TC x QD.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from volbench.model import RW, Workload
from volbench.plans.pts.options import IOPS_BLOCK_SIZES, PtsOptions
from volbench.units import format_block_size

WIPC_BS = 131072
"""WIPC: 128 KiB sequential writes, twice over the active range."""

THROUGHPUT_CELLS = ((1048576, False), (1048576, True), (131072, False), (131072, True))
"""Throughput: (block size, is read) at 1024 KiB and 128 KiB, write before read."""

LATENCY_BLOCK_SIZES = (512, 4096, 8192)
LATENCY_MIXES = (100, 65, 0)

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
DIRTH_GRID = (32, 16, 8, 6, 4, 2, 1)
DIRTH_BS = 8192
DIRTH_READ_PCT = 65


HIR_WAIT_STATES_S = (5, 10, 15, 25, 50)
HIR_WRITE_S = 5
HIR_CONTINUOUS_S = 1800
"""HIR: per wait state, cycles of 5 s of writes + the wait, then 1800 s of writes.
Times scale with ``--cell-seconds`` / 60 (a 1-minute cell = PTS times)."""


XSR_GROUPS = (("g1-seq1m", RW.WRITE, 1048576), ("g2-rnd8k", RW.RANDWRITE, 8192),
              ("g3-seq1m", RW.WRITE, 1048576))  # fmt: skip
"""XSR access groups: SEQ 1024 KiB write -> RND 8 KiB write -> SEQ 1024 KiB write."""


@dataclass(frozen=True)
class Round:
    """One round to run: which test and phase, its cells, and whether to purge first."""

    test: str
    phase: str
    index: int
    workloads: tuple[Workload, ...]
    purge: bool = False

    @property
    def planned_s(self) -> float:
        return sum(w.duration_s for w in self.workloads)


def mix_rw(read_pct: int, random: bool = True) -> RW:
    """fio rw for a read percent: pure reads and writes as such, else a mix."""
    if read_pct == 100:
        return RW.RANDREAD if random else RW.READ
    if read_pct == 0:
        return RW.RANDWRITE if random else RW.WRITE
    return RW.RANDRW if random else RW.RW


def mix_label(read_pct: int) -> str:
    return f"{read_pct}-{100 - read_pct}"


def _cell(options: PtsOptions, active: int, name: str, rw: RW, **fields: object) -> Workload:
    return Workload(
        name,
        rw,
        size_bytes=active,
        runtime_s=options.cell_seconds,
        ioengine=options.ioengine,
        **fields,  # type: ignore[arg-type]
    )


def wipc(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    """2 x the active range of 128 KiB sequential writes, as two passes (no gap)."""
    return tuple(
        Workload(
            f"{test}.wipc.pass{n}",
            RW.WRITE,
            bs_bytes=WIPC_BS,
            iodepth=options.threads * options.iodepth,
            size_bytes=active,
            runtime_s=None,
            time_based=False,
            ioengine=options.ioengine,
        )
        for n in (1, 2)
    )


def iops_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    return tuple(
        _cell(
            options,
            active,
            f"iops.ss.{mix_label(mix)}.{format_block_size(bs)}",
            mix_rw(mix),
            bs_bytes=bs,
            rwmixread_pct=mix,
            iodepth=options.iodepth,
            numjobs=options.threads,
        )
        for mix in options.mixes
        for bs in options.block_sizes
    )


def throughput_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    return tuple(
        _cell(
            options,
            active,
            f"throughput.ss.{100 if read else 0}-{0 if read else 100}.{format_block_size(bs)}",
            RW.READ if read else RW.WRITE,
            bs_bytes=bs,
            rwmixread_pct=100 if read else 0,
            iodepth=options.threads * options.iodepth,
        )
        for bs, read in THROUGHPUT_CELLS
    )


def latency_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    return tuple(
        _cell(
            options,
            active,
            f"latency.ss.{mix_label(mix)}.{format_block_size(bs)}",
            mix_rw(mix),
            bs_bytes=bs,
            rwmixread_pct=mix,
        )
        for mix in LATENCY_MIXES
        for bs in options.fitting(LATENCY_BLOCK_SIZES)
    )


def wsat_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    return (
        _cell(
            options,
            active,
            "wsat.run.0-100.4k",
            RW.RANDWRITE,
            bs_bytes=4096,
            rwmixread_pct=0,
            iodepth=options.iodepth,
            numjobs=options.threads,
        ),
    )


def hir_cells(options: PtsOptions, active: int, index: int) -> tuple[Workload, ...]:
    """One HIR wait state: ``hir_cycles`` x (5 s of 4 KiB random writes + the wait),
    as one fio job (``thinktime`` after ``thinktime_iotime``), then the continuous
    writes, stonewalled in the same fio process."""
    scale = options.cell_seconds / 60
    wait = HIR_WAIT_STATES_S[index]
    shape: dict[str, object] = {
        "bs_bytes": 4096, "rwmixread_pct": 0, "iodepth": options.iodepth,
        "numjobs": options.threads,
    }  # fmt: skip
    cycles = Workload(
        f"hir.idle.w{wait}-cycles",
        RW.RANDWRITE,
        size_bytes=active,
        runtime_s=options.hir_cycles * (HIR_WRITE_S + wait) * scale,
        thinktime_s=wait * scale,
        thinktime_iotime_s=HIR_WRITE_S * scale,
        ioengine=options.ioengine,
        **shape,  # type: ignore[arg-type]
    )
    continuous = Workload(
        f"hir.idle.w{wait}-cont",
        RW.RANDWRITE,
        size_bytes=active,
        runtime_s=HIR_CONTINUOUS_S * scale,
        ioengine=options.ioengine,
        **shape,  # type: ignore[arg-type]
    )
    return (cycles, continuous)


def xsr_cells(options: PtsOptions, active: int, index: int) -> tuple[Workload, ...]:
    """One XSR access group: ``xsr_cells`` consecutive cells (throughput and response
    time vs time at cell resolution), one fio process, no gaps but fio's own."""
    label, rw, bs = XSR_GROUPS[index]
    sequential = not rw.is_random
    return tuple(
        _cell(
            options,
            active,
            f"xsr.group.{label}.c{n:03d}",
            rw,
            bs_bytes=bs,
            rwmixread_pct=0,
            iodepth=options.threads * options.iodepth if sequential else options.iodepth,
            numjobs=1 if sequential else options.threads,
        )
        for n in range(1, options.xsr_cells + 1)
    )


def _grid_cell(
    options: PtsOptions, active: int, test: str, phase: str, tc: int, qd: int
) -> Workload:
    if test == "ecw":
        shape: dict[str, object] = {
            "bssplit": ecw_bssplit(options.logical_block_bytes),
            "rwmixread_pct": ECW_READ_PCT,
            "random_distribution": ECW_DISTRIBUTION,
        }
    else:
        shape = {"bs_bytes": DIRTH_BS, "rwmixread_pct": DIRTH_READ_PCT}
    return _cell(
        options, active, f"{test}.{phase}.tc{tc}-qd{qd}", RW.RANDRW, iodepth=qd, numjobs=tc, **shape
    )


def ecw_bssplit(logical_bytes: int) -> tuple[tuple[int, int], ...]:
    """The ECW block-size mix on a target with ``logical_bytes`` logical blocks: each
    size rounded up to a multiple of it, shares of equal sizes merged (on 4 KiB
    blocks: 0.5-3.5 KiB join 4 KiB, 77%); the percentages still add up to 100."""
    merged: dict[int, int] = {}
    for bs, pct in ECW_BSSPLIT:
        size = -(-bs // logical_bytes) * logical_bytes
        merged[size] = merged.get(size, 0) + pct
    return tuple(merged.items())


def block_size_changes(options: PtsOptions) -> tuple[str, ...]:
    """What the target's logical block size changed in the PTS matrices (empty: none):
    cells left out of the default IOPS matrix and of Latency, ECW sizes rounded up."""
    logical = options.logical_block_bytes
    left: dict[int, list[str]] = {}
    if "iops" in options.tests and options.block_sizes == options.fitting(IOPS_BLOCK_SIZES):
        for bs in sorted(set(IOPS_BLOCK_SIZES) - set(options.block_sizes)):
            left.setdefault(bs, []).append("IOPS")
    if "latency" in options.tests:
        for bs in sorted(set(LATENCY_BLOCK_SIZES) - set(options.fitting(LATENCY_BLOCK_SIZES))):
            left.setdefault(bs, []).append("latency")
    changes = [
        f"{', '.join(kib(bs) for bs in sizes)} cells left out ({tests})"
        for tests, sizes in _grouped(left).items()
    ]
    rounded = [bs for bs, _ in ECW_BSSPLIT if bs % logical]
    if "ecw" in options.tests and rounded:
        span = kib(rounded[-1])
        if len(rounded) > 1:
            span = f"{rounded[0] / 1024:g}-{span}"
        changes.append(f"ECW {span} I/Os rounded up to {kib(logical)}")
    return tuple(changes)


def _grouped(left: dict[int, list[str]]) -> dict[str, list[int]]:
    """Block sizes by the tests they were left out of (``"IOPS, latency"`` -> sizes)."""
    found: dict[str, list[int]] = {}
    for bs, tests in left.items():
        found.setdefault(", ".join(tests), []).append(bs)
    return found


def kib(size: int) -> str:
    """A block size as PTS writes it: ``512`` -> ``0.5 KiB``, ``4096`` -> ``4 KiB``."""
    return f"{size / 1024:g} KiB"


def misfits(options: PtsOptions, active: int) -> list[str]:
    """Cells the target cannot run even after :func:`block_size_changes`: fixed block
    sizes that are not a multiple of its logical block, or tests with no cell left."""
    logical = options.logical_block_bytes
    found = []
    for test in options.tests:
        cells = [*ss_cells(options, active, test), *wipc(options, active, test)]
        if test == "xsr":
            cells = [w for i in range(len(XSR_GROUPS)) for w in xsr_cells(options, active, i)]
        if not ss_cells(options, active, test) and test != "xsr":
            found.append(f"{test}: no cell left")
        bad = sorted({w.bs_bytes for w in cells if not w.bssplit and w.bs_bytes % logical})
        if bad:
            found.append(f"{test}: {', '.join(kib(bs) for bs in bad)} I/Os")
    return found


def grid(options: PtsOptions, test: str) -> tuple[int, ...]:
    """The TC and QD values of the ECW or DIRTH sweep (``--toio-grid`` narrows it)."""
    full = ECW_GRID if test == "ecw" else DIRTH_GRID
    return tuple(v for v in full if v in options.toio_grid) if options.toio_grid else full


def grid_ss_cells(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    top = max(grid(options, test))
    return (_grid_cell(options, active, test, "ss", top, top),)


def grid_sweep_cells(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    """Every TC x QD of the grid, highest demand first (PTS sweeps from high to low)."""
    values = grid(options, test)
    pairs = sorted(
        ((tc, qd) for tc in values for qd in values), key=lambda p: (-p[0] * p[1], -p[0])
    )
    return tuple(_grid_cell(options, active, test, "sweep", tc, qd) for tc, qd in pairs)


def ss_cells(
    options: PtsOptions, active: int, test: str, phase: str = "ss"
) -> tuple[Workload, ...]:
    """The cells of one steady-state round (or one WSAT sample) of ``test``."""
    if test == "iops":
        return iops_cells(options, active)
    if test == "throughput":
        return throughput_cells(options, active)
    if test == "latency":
        return latency_cells(options, active)
    if test in ("wsat", "hir"):
        cells = wsat_cells(options, active)
        return tuple(replace(c, name=c.name.replace("wsat.run", f"{test}.{phase}")) for c in cells)
    return grid_ss_cells(options, active, test)


def tracked_cells(test: str, cells: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(cell, figure) pairs tracked for steady state, figure one of iops, bw, lat.

    IOPS (PTS 2.0.2): (0/100, 4 KiB), (65/35, 64 KiB), (100/0, 1024 KiB), of those
    in the matrix (every cell when the reduced matrix has none of them).
    Throughput: the bandwidth of each cell. Latency: mean response time of
    RND 4 KiB 0/100. HIR, ECW, DIRTH: IOPS of the steady-state cell.
    """
    if test == "iops":
        wanted = [c for c in ("0-100.4k", "65-35.64k", "100-0.1m") if c in cells]
        return tuple((c, "iops") for c in (wanted or cells))
    if test == "throughput":
        return tuple((c, "bw") for c in cells)
    if test == "latency":
        return tuple((c, "lat") for c in (["0-100.4k"] if "0-100.4k" in cells else cells))
    return tuple((c, "iops") for c in cells)
