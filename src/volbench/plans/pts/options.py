"""Options of a SNIA PTS run: profile defaults, user overrides, and their checks.

Profiles (DESIGN.md "SNIA PTS facts", from PTS-E 1.1 and PTS-C 1.1):
Enterprise: active range 100%, recommended TC 4 x QD 32, write cache disabled.
Client: active range 75%, TC 2 x QD 16, write cache enabled.
volbench does not change a device's write cache; it records the state it finds and,
on a block device whose state differs from the profile's, marks the run non-compliant.
Besides the options every test reads, each test declares its own (:mod:`.declared`);
a run stores them flat, next to the common ones (the layout runs have always had).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import cattrs
from cattrs.errors import AttributeValidationNote
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.errors import UsageError
from volbench.plans.pts import catalog, declared
from volbench.plans.pts.declared import OwnOptions

# Each test's matrix, parser or names, also here for callers of before (bench, report).
from volbench.plans.pts.demand import parse_grid as parse_grid
from volbench.plans.pts.iops import IOPS_BLOCK_SIZES as IOPS_BLOCK_SIZES
from volbench.plans.pts.iops import IOPS_MIXES as IOPS_MIXES
from volbench.plans.pts.iops import parse_block_sizes as parse_block_sizes
from volbench.plans.pts.iops import parse_mixes as parse_mixes
from volbench.plans.pts.throughput import THROUGHPUT_TESTS as THROUGHPUT_TESTS
from volbench.records import converter
from volbench.units import MiB

NAME = "pts"
"""The plan's name, as runs store it."""

PROFILES: dict[str, dict[str, Any]] = {
    "enterprise": {"threads": 4, "iodepth": 32, "active_range_pct": 100, "write_cache": "off"},
    "client": {"threads": 2, "iodepth": 16, "active_range_pct": 75, "write_cache": "on"},
}

CELL_SECONDS = 60.0
MAX_ROUNDS = 25
MIN_ACTIVE_BYTES = 16 * MiB
"""Smallest active range volbench runs PTS on: the largest block (1 MiB) x 16."""

Own = TypeVar("Own", bound=OwnOptions)

COMMON = ("cell_seconds", "max_rounds", "purge", "ioengine", "logical_block_bytes")
"""The options :func:`build` takes by name besides the profile's and the tests' own."""

STORED_ORDER = (
    "tests",
    "profile",
    "threads",
    "iodepth",
    "active_range_pct",
    "cell_seconds",
    "max_rounds",
    "wsat_max_rounds",
    "block_sizes",
    "mixes",
    "toio_grid",
    "hir_cycles",
    "xsr_cells",
    "purge",
    "ioengine",
    "logical_block_bytes",
)
"""The keys of a stored run's ``pts`` options in the order volbench has written them;
the keys of tests added since follow."""

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


def own_kinds() -> tuple[type[OwnOptions], ...]:
    """The tests' records (:func:`.catalog.own_kinds`) in the order their first keys
    are stored (:data:`STORED_ORDER`): the order volbench always checked them in."""

    def rank(kind: type[OwnOptions]) -> int:
        key = declared.declarations(kind)[0][1].key
        return STORED_ORDER.index(key) if key in STORED_ORDER else len(STORED_ORDER)

    return tuple(sorted(catalog.own_kinds(), key=rank))


@dataclass(frozen=True)
class PtsOptions:
    """Everything that decides what a PTS run does (stored with the run for resume):
    the options every test reads, and each test's own record (``own``: those given
    other values than their defaults; read them with :meth:`of`)."""

    tests: tuple[str, ...]
    profile: str = "enterprise"
    threads: int = 4
    iodepth: int = 32
    active_range_pct: int = 100
    cell_seconds: float = CELL_SECONDS
    max_rounds: int = MAX_ROUNDS
    purge: bool = True
    ioengine: str | None = None
    logical_block_bytes: int = 512
    """The target's logical block size (bytes): cells whose block size is not a
    multiple of it are left out (direct I/O of such sizes fails with EINVAL)."""
    own: tuple[OwnOptions, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:  # one form for equal options: defaults left out
        kept = {type(r): r for r in self.own if r != type(r)()}
        ordered = sorted(kept, key=lambda k: (k.__module__, k.__qualname__))
        object.__setattr__(self, "own", tuple(kept[k] for k in ordered))

    def of(self, kind: type[Own]) -> Own:
        """The test options record ``kind`` of this run (its defaults if none given)."""
        return next((r for r in self.own if isinstance(r, kind)), None) or kind()

    def records(self) -> tuple[tuple[OwnOptions, tuple[str, ...]], ...]:
        """Every declared record, with the tests of this run that read it, in the
        order their keys are stored."""
        return tuple((self.of(k), catalog.readers(k, self.tests)) for k in own_kinds())

    @property
    def fewest_rounds(self) -> int:
        """The fewest steady-state rounds a test runs: a window's, or every round when
        ``max_rounds`` is below a window (no steady state can then be evaluated)."""
        return min(WINDOW_ROUNDS, self.max_rounds)

    @property
    def non_compliant_reasons(self) -> tuple[str, ...]:
        """Why results of these options are not PTS-compliant (empty = compliant)."""
        reasons = []
        if self.cell_seconds != CELL_SECONDS:
            reasons.append(f"cells of {self.cell_seconds:g} s instead of 60 s")
        steady_state_tests = [t for t in self.tests if catalog.by_name(t).steady_state]
        if self.max_rounds < WINDOW_ROUNDS and steady_state_tests:
            reasons.append(
                f"at most {self.max_rounds} rounds: steady state cannot be evaluated "
                f"(needs a {WINDOW_ROUNDS}-round window)"
            )
        elif self.max_rounds != MAX_ROUNDS and steady_state_tests:
            reasons.append(f"at most {self.max_rounds} rounds instead of 25")
        for record, tests in self.records():
            reasons += record.reasons(self, tests)
        if not self.purge:
            reasons.append("no purge")
        return tuple(reasons)

    def fitting(self, sizes: Sequence[int]) -> tuple[int, ...]:
        """The block sizes of ``sizes`` the target can do: multiples of its logical block."""
        return tuple(s for s in sizes if s % self.logical_block_bytes == 0)


_common_out = make_dict_unstructure_fn(PtsOptions, converter, own=override(omit=True))
_common_in = make_dict_structure_fn(PtsOptions, converter, own=override(omit=True))


def _unstructure(options: PtsOptions) -> dict[str, Any]:
    """The stored form: the common options and every declared one, flat."""
    data = _common_out(options)
    for record, _ in options.records():
        data.update(converter.unstructure(declared.stored(record)))
    ranked = {key: n for n, key in enumerate(STORED_ORDER)}
    return dict(sorted(data.items(), key=lambda item: ranked.get(item[0], len(ranked))))


def _structure(data: Any, _: Any) -> PtsOptions:
    """A stored ``pts`` object: each test's record from its keys (a key missing, as
    in runs older than that option: its default); a value of the wrong type is an
    error naming its key (``@ $.pts.hir_cycles``)."""
    common = _common_in(data, PtsOptions)
    own, errors = [], []
    for kind in catalog.own_kinds():
        types, values = declared.field_types(kind), {}
        for name, option in declared.declarations(kind):
            if option.key not in data:
                continue
            try:
                values[name] = converter.structure(data[option.key], types[name])
            except (cattrs.BaseValidationError, ValueError, TypeError) as error:
                where = f"Structuring class PtsOptions @ attribute {option.key}"
                error.add_note(AttributeValidationNote(where, option.key, types[name]))
                errors.append(error)
        own.append(kind(**values))
    if errors:
        raise cattrs.ClassValidationError("While structuring PtsOptions", errors, PtsOptions)
    return replace(common, own=tuple(own))


converter.register_unstructure_hook(PtsOptions, _unstructure)
converter.register_structure_hook(PtsOptions, _structure)


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
    512 assumed), each test's fitted (:meth:`.declared.OwnOptions.fitted`; a UsageError
    names ``where``, the target). Decided before anything runs."""
    fitted = replace(options, logical_block_bytes=max(logical_bytes or 512, 512))
    own = tuple(record.fitted(fitted, tests, where) for record, tests in fitted.records())
    return replace(fitted, own=own)


def parse_tests(names: Sequence[str]) -> tuple[str, ...]:
    """Test names as typed (``all`` = every test, ``throughput`` = both block sizes),
    in PTS order, no repeats."""
    known, selectors = catalog.names(), catalog.selectors()
    wanted: list[str] = []
    for raw in names:
        for name in raw.lower().split(","):
            name = name.strip()
            if not name:
                continue
            if name == "all":
                wanted += known
            elif name in known or name in selectors:
                wanted += selectors.get(name, (name,))
            else:
                raise UsageError(f"unknown PTS test {name!r}: use {catalog.names_text()}")
    if not wanted:
        raise UsageError("name at least one PTS test, e.g. volbench pts iops --target DEV")
    return tuple(t for t in known if t in wanted)


def build(
    tests: tuple[str, ...],
    profile: str,
    threads: int | None = None,
    iodepth: int | None = None,
    active_range_pct: int | None = None,
    **given: Any,
) -> PtsOptions:
    """Options from a profile and what the user gave: ``given`` holds :data:`COMMON`
    options and the tests' own by their keys (``hir_cycles=10``); conflicts are
    UsageErrors.

    The Enterprise profile requires the whole device as active range (PTS-E);
    the Client profile allows 75% (its default) or 100% (PTS-C). Fewer than 5
    rounds are allowed as a quick look, marked non-compliant.
    """
    kinds = catalog.own_kinds()
    keys = {d.key for kind in kinds for _, d in declared.declarations(kind)}
    unknown = set(given) - keys - set(COMMON)
    if unknown:
        raise TypeError(f"not a PTS option: {', '.join(sorted(unknown))}")
    defaults = PROFILES[profile]
    options = PtsOptions(
        tests=tests,
        profile=profile,
        threads=threads or defaults["threads"],
        iodepth=iodepth or defaults["iodepth"],
        active_range_pct=active_range_pct or defaults["active_range_pct"],
        own=tuple(kind(**declared.given(kind, given)) for kind in kinds),
        **{key: value for key, value in given.items() if key in COMMON},
    )
    for record, readers in options.records():
        record.check(options, readers)
    if active_range_pct is not None:
        allowed = (100,) if profile == "enterprise" else (75, 100)
        if active_range_pct not in allowed:
            raise UsageError(
                f"--active-range {active_range_pct} conflicts with the {profile} profile, "
                f"which requires {' or '.join(map(str, allowed))}%"
                + (" (use --profile client for 75%)" if profile == "enterprise" else "")
            )
    return options
