"""Options of a SNIA PTS run: profile defaults, user overrides, and their checks.

Profiles (DESIGN.md "SNIA PTS facts", from PTS-E 1.1 and PTS-C 1.1):
Enterprise: active range 100%, recommended TC 4 x QD 32, write cache disabled.
Client: active range 75%, TC 2 x QD 16, write cache enabled.
volbench does not change a device's write cache; it records the state it finds and,
on a block device whose state differs from the profile's, marks the run non-compliant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.errors import UsageError
from volbench.units import MiB, format_block_size, parse_size

NAME = "pts"
"""The plan's name, as runs store it."""

THROUGHPUT_TESTS = {"throughput-1024k": 1048576, "throughput-128k": 131072}
"""Throughput, as SNIA SSS PTS-E 1.1 (and PTS 2.0.2) runs it: each block size its own
test (purge, WIPC, rounds of SEQ 100% read and 100% write to steady state),
1024 KiB first. Runs stored before the split have one test ``throughput`` whose
rounds hold both block sizes (still read and resumed as they ran)."""

TESTS = ("iops", *THROUGHPUT_TESTS, "latency", "wsat", "hir", "xsr", "ecw", "dirth")
"""The PTS tests volbench runs, in the order ``all`` runs them."""

SELECTORS = {"throughput": tuple(THROUGHPUT_TESTS)}
"""Names that select several tests: ``throughput`` = both block sizes."""

TEST_NAMES = (
    "iops, throughput, latency, wsat, hir, xsr, ecw, dirth or all "
    f"({' or '.join(THROUGHPUT_TESTS)}: one throughput block size)"
)
"""The test names as the command takes them (usage errors, help)."""

UNSUPPORTED: dict[str, str] = {}

PROFILES: dict[str, dict[str, Any]] = {
    "enterprise": {"threads": 4, "iodepth": 32, "active_range_pct": 100, "write_cache": "off"},
    "client": {"threads": 2, "iodepth": 16, "active_range_pct": 75, "write_cache": "on"},
}

IOPS_BLOCK_SIZES = (1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512)
"""IOPS inner loop, bytes: 1024, 128, 64, 32, 16, 8, 4, 0.5 KiB."""

IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
"""IOPS outer loop as read percent: R/W 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100."""

LATENCY_BLOCK_SIZES = (512, 4096, 8192)
LATENCY_MIXES = (100, 65, 0)
"""Latency: RND 0.5, 4, 8 KiB x R/W 100/0, 65/35, 0/100 (a subset of the IOPS matrix:
``--block-sizes`` and ``--mixes`` reduce both matrices alike)."""

CELL_SECONDS = 60.0
MAX_ROUNDS = 25
MIN_ACTIVE_BYTES = 16 * MiB
"""Smallest active range volbench runs PTS on: the largest block (1 MiB) x 16."""


WRITE_CACHE_STATES = {"write back": "on", "write through": "off"}
"""The kernel's ``queue/write_cache`` values as the profiles' states (on = enabled)."""


def write_cache_reason(profile: str, state: str | None) -> str | None:
    """Why a device's write cache makes a run non-compliant with ``profile`` (None: it
    matches, or the state is unknown). ``state`` is the kernel's ``queue/write_cache``
    of the block device under test; PTS-E requires the cache disabled, PTS-C enabled."""
    found = WRITE_CACHE_STATES.get((state or "").strip().lower())
    wanted = PROFILES[profile]["write_cache"]
    if found is None or found == wanted:
        return None
    required = "enabled" if wanted == "on" else "disabled"
    return f"write cache {state} (the {profile} profile requires it {required})"


@dataclass(frozen=True)
class PtsOptions:
    """Everything that decides what a PTS run does (stored with the run for resume)."""

    tests: tuple[str, ...]
    profile: str = "enterprise"
    threads: int = 4
    iodepth: int = 32
    active_range_pct: int = 100
    cell_seconds: float = CELL_SECONDS
    max_rounds: int = MAX_ROUNDS
    wsat_max_rounds: int = 1440
    block_sizes: tuple[int, ...] = IOPS_BLOCK_SIZES
    mixes: tuple[int, ...] = IOPS_MIXES
    toio_grid: tuple[int, ...] = ()
    hir_cycles: int = 360
    xsr_cells: int = 60
    purge: bool = True
    ioengine: str | None = None
    logical_block_bytes: int = 512
    """The target's logical block size (bytes): cells whose block size is not a
    multiple of it are left out (direct I/O of such sizes fails with EINVAL)."""

    @property
    def non_compliant_reasons(self) -> tuple[str, ...]:
        """Why results of these options are not PTS-compliant (empty = compliant)."""
        reasons = []
        if self.cell_seconds != CELL_SECONDS:
            reasons.append(f"cells of {self.cell_seconds:g} s instead of 60 s")
        steady_state_tests = set(self.tests) - {"wsat", "xsr"}
        if self.max_rounds < WINDOW_ROUNDS and steady_state_tests:
            reasons.append(
                f"at most {self.max_rounds} rounds: steady state cannot be evaluated "
                f"(needs a {WINDOW_ROUNDS}-round window)"
            )
        elif self.max_rounds != MAX_ROUNDS and steady_state_tests:
            reasons.append(f"at most {self.max_rounds} rounds instead of 25")
        if set(self.block_sizes) != set(self.fitting(IOPS_BLOCK_SIZES)) and "iops" in self.tests:
            reasons.append("reduced IOPS block sizes")
        if set(self.mixes) != set(IOPS_MIXES) and "iops" in self.tests:
            reasons.append("reduced IOPS R/W mixes")
        if "latency" in self.tests:
            if self.latency_block_sizes != self.fitting(LATENCY_BLOCK_SIZES):
                reasons.append("reduced latency block sizes")
            if self.latency_mixes != LATENCY_MIXES:
                reasons.append("reduced latency R/W mixes")
        if self.toio_grid and set(self.tests) & {"ecw", "dirth"}:
            reasons.append("reduced TC x QD grid")
        if self.hir_cycles != 360 and "hir" in self.tests:
            reasons.append(f"HIR with {self.hir_cycles} cycles per wait state instead of 360")
        if not self.purge:
            reasons.append("no purge")
        return tuple(reasons)

    def fitting(self, sizes: Sequence[int]) -> tuple[int, ...]:
        """The block sizes of ``sizes`` the target can do: multiples of its logical block."""
        return tuple(s for s in sizes if s % self.logical_block_bytes == 0)

    @property
    def latency_block_sizes(self) -> tuple[int, ...]:
        """The Latency test's block sizes: PTS's, less those ``--block-sizes`` left out
        of the IOPS matrix or the target cannot do."""
        return tuple(s for s in self.fitting(LATENCY_BLOCK_SIZES) if s in self.block_sizes)

    @property
    def latency_mixes(self) -> tuple[int, ...]:
        """The Latency test's R/W mixes (read percent): PTS's, less those ``--mixes``
        left out of the IOPS matrix."""
        return tuple(m for m in LATENCY_MIXES if m in self.mixes)


@dataclass(frozen=True)
class PtsSetup:
    """What a PTS run records of itself besides the settings every run has
    (:attr:`volbench.model.RunSettings.options`): its options, for resume and
    reports, and the test conditions its report header states. Bytes, bytes/s."""

    pts: PtsOptions
    active_bytes: int
    purge_method: str = "unknown"
    preconditioning: str = "unknown"
    data_pattern: str = "unknown"
    write_cache: str = "unknown"
    seq_write_bytes_per_s: float = 0.0
    """The target's sequential write rate measured before the run (0: not measured),
    for the run's ETA."""

    @property
    def options(self) -> PtsOptions:
        return self.pts


def fit_block_size(options: PtsOptions, logical_bytes: int | None, where: str) -> PtsOptions:
    """``options`` for a target with ``logical_bytes`` logical blocks (None: unknown,
    512 assumed). The IOPS block sizes it cannot do are left out of the default
    matrix; asked for explicitly (``--block-sizes``) they are refused, as a UsageError
    naming ``where`` (the target). Decided before anything runs."""
    logical = max(logical_bytes or 512, 512)
    fitted = replace(options, logical_block_bytes=logical)
    unfit = [s for s in options.block_sizes if s % logical]
    matrix = {"iops", "latency"} & set(options.tests)
    if unfit and matrix and options.block_sizes != IOPS_BLOCK_SIZES:
        keep = fitted.fitting(options.block_sizes) or fitted.fitting(IOPS_BLOCK_SIZES)[-1:]
        raise UsageError(
            f"--block-sizes {','.join(format_block_size(s) for s in unfit)}: {where} has "
            f"{logical / 1024:g} KiB logical blocks; use multiples of {logical / 1024:g} KiB, "
            f"e.g. --block-sizes {','.join(format_block_size(s) for s in keep)}"
        )
    return replace(fitted, block_sizes=fitted.fitting(options.block_sizes))


def parse_tests(names: Sequence[str]) -> tuple[str, ...]:
    """Test names as typed (``all`` = every implemented test, ``throughput`` = both
    block sizes), in PTS order, no repeats."""
    wanted: list[str] = []
    for raw in names:
        for name in raw.lower().split(","):
            name = name.strip()
            if not name:
                continue
            if name == "all":
                wanted += TESTS
            elif name in UNSUPPORTED:
                raise UsageError(f"PTS test {name!r}: {UNSUPPORTED[name]}; run the others")
            elif name in TESTS or name in SELECTORS:
                wanted += SELECTORS.get(name, (name,))
            else:
                raise UsageError(f"unknown PTS test {name!r}: use {TEST_NAMES}")
    if not wanted:
        raise UsageError("name at least one PTS test, e.g. volbench pts iops --target DEV")
    return tuple(t for t in TESTS if t in wanted)


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


def parse_grid(text: str) -> tuple[int, ...]:
    """``8,1`` -> (8, 1): the TC and QD values kept in the ECW and DIRTH sweeps."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) in (32, 16, 8, 6, 4, 2, 1) for p in parts):
        raise UsageError(f"invalid --toio-grid {text!r}: use values of 32,16,8,6,4,2,1, e.g. 8,1")
    return tuple(sorted({int(p) for p in parts}, reverse=True))


def build(
    tests: tuple[str, ...],
    profile: str,
    threads: int | None = None,
    iodepth: int | None = None,
    active_range_pct: int | None = None,
    **overrides: Any,
) -> PtsOptions:
    """Options from a profile and what the user gave; conflicts are UsageErrors.

    The Enterprise profile requires the whole device as active range (PTS-E);
    the Client profile allows 75% (its default) or 100% (PTS-C). Fewer than 5
    rounds are allowed as a quick look, marked non-compliant.
    """
    defaults = PROFILES[profile]
    if "latency" in tests:
        _check_latency_cells(overrides)
    if active_range_pct is not None:
        allowed = (100,) if profile == "enterprise" else (75, 100)
        if active_range_pct not in allowed:
            raise UsageError(
                f"--active-range {active_range_pct} conflicts with the {profile} profile, "
                f"which requires {' or '.join(map(str, allowed))}%"
                + (" (use --profile client for 75%)" if profile == "enterprise" else "")
            )
    return PtsOptions(
        tests=tests,
        profile=profile,
        threads=threads or defaults["threads"],
        iodepth=iodepth or defaults["iodepth"],
        active_range_pct=active_range_pct or defaults["active_range_pct"],
        **overrides,
    )


def _check_latency_cells(overrides: Mapping[str, Any]) -> None:
    """UsageError when ``--block-sizes`` or ``--mixes`` leave the Latency test no cell."""
    sizes = overrides.get("block_sizes", IOPS_BLOCK_SIZES)
    if not set(sizes) & set(LATENCY_BLOCK_SIZES):
        latency = ", ".join(format_block_size(s) for s in LATENCY_BLOCK_SIZES)
        raise UsageError(
            f"--block-sizes {','.join(format_block_size(s) for s in sizes)} leaves the latency "
            f"test no cell: add one of {latency} or run latency apart"
        )
    mixes = overrides.get("mixes", IOPS_MIXES)
    if not set(mixes) & set(LATENCY_MIXES):
        raise UsageError(
            f"--mixes {','.join(f'{m}/{100 - m}' for m in mixes)} leaves the latency test no "
            f"cell: add one of {', '.join(f'{m}/{100 - m}' for m in LATENCY_MIXES)}"
            " or run latency apart"
        )
