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

Throughput follows SNIA SSS PTS-E 1.1 (as PTS 2.0.2): each block size is a test of
its own (``throughput-1024k``, ``throughput-128k``), with its own purge, WIPC and
rounds of SEQ 100% read and 100% write to steady state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from volbench.model import RW, Workload
from volbench.plans.pts.options import (
    IOPS_BLOCK_SIZES,
    LATENCY_BLOCK_SIZES,
    THROUGHPUT_TESTS,
    PtsOptions,
)
from volbench.units import format_block_size

WIPC_BS = 131072
"""WIPC: 128 KiB sequential writes, twice over the active range."""

THROUGHPUT_BLOCK_SIZES = {
    **{test: (bs,) for test, bs in THROUGHPUT_TESTS.items()},
    "throughput": (1048576, 131072),
}
"""The block sizes of each Throughput test; ``throughput`` is the one test of runs
stored before the block sizes were split (both in one round; read and resumed so)."""

WSAT_LAST_SAMPLE_MARGIN = 1.02
"""The last WSAT sample runs 2% longer than the previous sample's write rate needs to
reach the target, so that it normally ends there (not a sample short of it)."""

WIPC_TESTS_EXCLUDED = ("wsat", "xsr")
"""Tests that run no WIPC (WSAT and XSR: purge, then their own writes)."""

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


def throughput_cells(
    options: PtsOptions, active: int, test: str = "throughput-1024k"
) -> tuple[Workload, ...]:
    """One Throughput round: SEQ 100% write then 100% read at the test's block size
    (the legacy ``throughput`` test: both block sizes, 1024 KiB first)."""
    return tuple(
        _cell(
            options,
            active,
            f"{test}.ss.{100 if read else 0}-{0 if read else 100}.{format_block_size(bs)}",
            RW.READ if read else RW.WRITE,
            bs_bytes=bs,
            rwmixread_pct=100 if read else 0,
            iodepth=options.threads * options.iodepth,
        )
        for bs in THROUGHPUT_BLOCK_SIZES[test]
        for read in (False, True)
    )


def latency_cells(options: PtsOptions, active: int) -> tuple[Workload, ...]:
    """RND at TC1/QD1: PTS's block sizes and mixes, as ``--block-sizes`` and ``--mixes``
    reduce them (:attr:`PtsOptions.latency_block_sizes`)."""
    return tuple(
        _cell(
            options,
            active,
            f"latency.ss.{mix_label(mix)}.{format_block_size(bs)}",
            mix_rw(mix),
            bs_bytes=bs,
            rwmixread_pct=mix,
        )
        for mix in options.latency_mixes
        for bs in options.latency_block_sizes
    )


def wsat_cells(
    options: PtsOptions, active: int, runtime_s: float | None = None
) -> tuple[Workload, ...]:
    """One WSAT sample: 4 KiB random writes for a cell (``runtime_s``: shorter, the
    last sample, see :func:`wsat_sample`)."""
    cell = _cell(
        options,
        active,
        "wsat.run.0-100.4k",
        RW.RANDWRITE,
        bs_bytes=4096,
        rwmixread_pct=0,
        iodepth=options.iodepth,
        numjobs=options.threads,
    )
    return (replace(cell, runtime_s=runtime_s) if runtime_s is not None else cell,)


def wsat_sample(
    options: PtsOptions, active: int, target: int, samples: Sequence[tuple[int, float]]
) -> tuple[Workload, ...] | None:
    """The next WSAT sample after ``samples`` ((bytes written per target, seconds) of
    each committed one); None when ``target`` bytes are written or the sample limit
    is reached.

    A sample that would pass the target is cut short: it runs for the time the
    previous sample's write rate needs for what is left, plus 2% (at least
    1/60 of a cell), so WSAT ends at the target instead of up to a whole sample
    after it. When the rate drops during that sample, a further short one follows;
    what the last sample writes past the target is in the report.
    """
    written = sum(done for done, _ in samples)
    if written >= target or len(samples) >= options.wsat_max_rounds:
        return None
    runtime = options.cell_seconds
    done, seconds = samples[-1] if samples else (0, 0.0)
    if done > 0 and seconds > 0:
        needed = (target - written) / (done / seconds) * WSAT_LAST_SAMPLE_MARGIN
        shortest = max(options.cell_seconds / 60, 0.001)
        if needed < runtime:
            runtime = max(math.ceil(needed * 1000) / 1000, shortest)
    return wsat_cells(options, active, runtime if runtime < options.cell_seconds else None)


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
    default_sizes = options.block_sizes == options.fitting(IOPS_BLOCK_SIZES)
    if "iops" in options.tests and default_sizes:
        for bs in sorted(set(IOPS_BLOCK_SIZES) - set(options.block_sizes)):
            left.setdefault(bs, []).append("IOPS")
    if "latency" in options.tests and default_sizes:
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


def block_size_label(size: int) -> str:
    """A block size as report tables print it: ``512 B``, ``4 KiB``, ``1024 KiB`` (PTS
    writes 1 MiB as 1024 KiB); never ``0.5k``, which reads as a fraction."""
    return f"{size} B" if size < 1024 or size % 1024 else f"{size // 1024} KiB"


def has_wipc(test: str) -> bool:
    """Whether ``test`` preconditions with WIPC after its purge (all but WSAT and XSR)."""
    return test not in WIPC_TESTS_EXCLUDED


WIPC_TEXT = f"WIPC: 2 x active range, {kib(WIPC_BS)} sequential writes"


def preconditioning_for(test: str) -> str:
    """The preconditioning of one test, as its report page's header says it."""
    return WIPC_TEXT if has_wipc(test) else f"none ({test.upper()} has no WIPC)"


def preconditioning(options: PtsOptions) -> str:
    """The preconditioning of the tests of ``options``, as the run's header says it:
    ``WIPC: ...`` when every test has WIPC, ``none (wsat)`` when none has, else
    both with their tests (``WIPC: ... (iops, latency); none (wsat)``)."""
    wipc = [t for t in options.tests if has_wipc(t)]
    none = [t for t in options.tests if not has_wipc(t)]
    if not none:
        return WIPC_TEXT
    if not wipc:
        return f"none ({', '.join(none)})"
    return f"{WIPC_TEXT} ({', '.join(wipc)}); none ({', '.join(none)})"


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
    if test in THROUGHPUT_BLOCK_SIZES:
        return throughput_cells(options, active, test)
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
    Throughput: the bandwidth of each cell (100% read and 100% write at the
    test's block size). Latency: mean response time of RND 4 KiB 0/100 (every
    cell when a reduced matrix has not that one). HIR, ECW, DIRTH: IOPS of the
    steady-state cell.
    """
    if test == "iops":
        wanted = [c for c in ("0-100.4k", "65-35.64k", "100-0.1m") if c in cells]
        return tuple((c, "iops") for c in (wanted or cells))
    if test in THROUGHPUT_BLOCK_SIZES:
        return tuple((c, "bw") for c in cells)
    if test == "latency":
        return tuple((c, "lat") for c in (["0-100.4k"] if "0-100.4k" in cells else cells))
    return tuple((c, "iops") for c in cells)
