"""The PTS tests volbench runs, as one table (:data:`TESTS`), and what spans them:
the names the command takes, the options the tests declare, the run's
preconditioning, what the target's logical block size changes, and the cells it
cannot run.

A test is one object in a module of its own (:class:`.test.PtsTest`, with the
options it declares); adding one is its module, a line in :data:`TESTS`, and its
report page (a module of :mod:`volbench.report.pts` that lists it as ``PAGES``). Everything
here reads :data:`TESTS` when asked (a test may add a toy test to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from volbench.errors import UsageError
from volbench.model import Workload
from volbench.plans.pts.cells import block_size_label, kib
from volbench.plans.pts.declared import OwnOptions
from volbench.plans.pts.dirth import DIRTH
from volbench.plans.pts.ecw import ECW
from volbench.plans.pts.hir import HIR, hir_cells
from volbench.plans.pts.iops import IOPS, iops_cells
from volbench.plans.pts.latency import LATENCY, latency_cells
from volbench.plans.pts.steady import WIPC_TEXT
from volbench.plans.pts.test import Phase, PtsTest, Round, Tracked
from volbench.plans.pts.throughput import LEGACY, SELECTOR, SELECTOR_NOTE, THROUGHPUTS
from volbench.plans.pts.wsat import WSAT
from volbench.plans.pts.xsr import XSR

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

# Also public here, as the unit tests reach them: Round and single tests' cells and labels.
__all__ = [
    "TESTS",
    "Round",
    "block_size_changes",
    "block_size_label",
    "by_name",
    "grid_sweep_cells",
    "has_wipc",
    "hir_cells",
    "iops_cells",
    "kib",
    "latency_cells",
    "misfits",
    "names",
    "own_kinds",
    "preconditioning",
    "preconditioning_for",
    "readers",
    "selectors",
    "ss_cells",
    "tests_of",
    "tracked_cells",
]

TESTS: tuple[PtsTest, ...] = (
    IOPS,
    *THROUGHPUTS,
    LATENCY,
    WSAT,
    HIR,
    XSR,
    ECW,
    DIRTH,
    LEGACY,
)
"""Every PTS test, in the order ``all`` runs them (the legacy ``throughput`` of old
runs last: it is read and resumed, never chosen)."""

SELECTORS = {SELECTOR: (tuple(t.name for t in THROUGHPUTS), SELECTOR_NOTE)}
"""Names that select several tests (``throughput`` = both block sizes), and what the
help says of them."""


def names() -> tuple[str, ...]:
    """The tests the command takes, in the order ``all`` runs them."""
    return tuple(test.name for test in TESTS if test is not LEGACY)


def selectors() -> dict[str, tuple[str, ...]]:
    """Each name that selects several tests: the tests."""
    return {name: tests for name, (tests, _) in SELECTORS.items()}


def names_text() -> str:
    """The test names as the command takes them (usage errors, help)."""
    shown: list[str] = []
    for name in names():
        shown.append(next((s for s, (tests, _) in SELECTORS.items() if name in tests), name))
    notes = "; ".join(note for _, note in SELECTORS.values())
    return f"{', '.join(dict.fromkeys(shown))} or all" + (f" ({notes})" if notes else "")


def by_name(name: str) -> PtsTest:
    """The test named ``name``; UsageError for a name not in :data:`TESTS`."""
    found = next((test for test in TESTS if test.name == name), None)
    if found is None:
        raise UsageError(f"unknown PTS test {name!r} (a run of another volbench version?)")
    return found


def own_kinds() -> tuple[type[OwnOptions], ...]:
    """The records of options the tests declare, each once, in table order."""
    return tuple(dict.fromkeys(test.own for test in TESTS if test.own is not None))


def readers(kind: type[OwnOptions], tests: Sequence[str]) -> tuple[str, ...]:
    """Those of ``tests`` that read the options record ``kind``."""
    return tuple(name for name in tests if by_name(name).own is kind)


def tests_of(options: PtsOptions) -> tuple[PtsTest, ...]:
    """The tests of a run, in its order."""
    return tuple(by_name(name) for name in options.tests)


def has_wipc(test: str) -> bool:
    """Whether ``test`` preconditions with WIPC after its purge (all but WSAT and XSR)."""
    return Phase.WIPC in by_name(test).phases


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


def block_size_changes(options: PtsOptions) -> tuple[str, ...]:
    """What the target's logical block size changed in the PTS matrices (empty: none):
    cells left out of the default IOPS matrix and of Latency, ECW sizes rounded up."""
    logical = options.logical_block_bytes
    fittings = [by_name(t).fitting(options) for t in options.tests]
    left: dict[int, list[str]] = {}
    for fitting in fittings:
        for bs in fitting.left_out:
            left.setdefault(bs, []).append(fitting.label)
    grouped: dict[str, list[int]] = {}  # block sizes by the tests they were left out of
    for bs, tests in left.items():
        grouped.setdefault(", ".join(tests), []).append(bs)
    changes = [
        f"{', '.join(kib(bs) for bs in sizes)} cells left out ({tests})"
        for tests, sizes in grouped.items()
    ]
    for fitting in (f for f in fittings if f.rounded):
        span = kib(fitting.rounded[-1])
        if len(fitting.rounded) > 1:
            span = f"{fitting.rounded[0] / 1024:g}-{span}"
        changes.append(f"{fitting.label} {span} I/Os rounded up to {kib(logical)}")
    return tuple(changes)


def misfits(options: PtsOptions, active: int) -> list[str]:
    """Cells the target cannot run even after :func:`block_size_changes`: fixed block
    sizes that are not a multiple of its logical block, or tests with no cell left."""
    logical = options.logical_block_bytes
    found = []
    for test in tests_of(options):
        rounds = [r for p in test.phases for r in test.phase_rounds(options, active, p)]
        if not all(rounds):
            found.append(f"{test.name}: no cell left")
        cells = [w for r in rounds for w in r]
        bad = sorted({w.bs_bytes for w in cells if not w.bssplit and w.bs_bytes % logical})
        if bad:
            found.append(f"{test.name}: {', '.join(kib(bs) for bs in bad)} I/Os")
    return found


def ss_cells(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    """The cells of one steady-state round of ``test``."""
    (cells,) = by_name(test).phase_rounds(options, active, Phase.SS)
    return cells


def grid_sweep_cells(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    """The demand-intensity sweep of ECW or DIRTH: every TC x QD, highest demand first."""
    (cells,) = by_name(test).phase_rounds(options, active, Phase.SWEEP)
    return cells


def tracked_cells(test: str, cells: Sequence[str]) -> Tracked:
    """(cell, figure) pairs of ``test`` tracked for steady state, figure one of iops,
    bw, lat (:meth:`.test.PtsTest.tracked`)."""
    return by_name(test).tracked(cells)
