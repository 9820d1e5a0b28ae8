"""The options of ``volbench pts`` that shape the PTS plan (profile, queue, cells,
rounds, each test's own reductions), given to the command as one
:class:`~volbench.plans.pts.options.PtsOptions` built from them and its TEST names."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from volbench.cli.options import POSITIVE_DURATION
from volbench.fio.bounds import MAX_NUMJOBS
from volbench.plans.pts.options import (
    PROFILES,
    build,
    parse_block_sizes,
    parse_grid,
    parse_mixes,
    parse_tests,
)

F = TypeVar("F", bound=Callable[..., Any])

MAX_HIR_CYCLES = 10_000
"""HIR cycles at most: 28 times the PTS's 360 (each cycle is a burst and its rests)."""

MAX_WSAT_ROUNDS = 100_000
"""WSAT samples at most: 69 days of the PTS's 60 s samples."""

_OPTIONS = (
    click.option("--profile", type=click.Choice(sorted(PROFILES)), default="enterprise"),
    click.option("--threads", type=click.IntRange(1, 256), default=None, help="TC (profile: 4/2)."),
    click.option(
        "--iodepth", type=click.IntRange(1, 4096), default=None, help="QD (profile: 32/16)."
    ),
    click.option("--active-range", type=click.IntRange(1, 100), default=None, help="Percent."),
    click.option(
        "--cell-seconds", type=POSITIVE_DURATION, default="60", help="Not 60: non-compliant."
    ),
    click.option(
        "--max-rounds",
        type=click.IntRange(1, 1000),
        default=25,
        show_default=True,
        help="Steady-state rounds per test at most.",
    ),
    click.option(
        "--wsat-max-rounds",
        type=click.IntRange(1, MAX_WSAT_ROUNDS),
        default=1440,
        show_default=True,
        help="WSAT samples at most (it ends at 4 x the active range written).",
    ),
    click.option(
        "--block-sizes", default=None, help="Reduce the IOPS and latency matrices, e.g. 4k,64k."
    ),
    click.option(
        "--mixes", default=None, help="Reduce the IOPS and latency matrices, e.g. 100/0,0/100."
    ),
    click.option(
        "--hir-cycles",
        type=click.IntRange(1, MAX_HIR_CYCLES),
        default=360,
        help="Not 360: non-compliant.",
    ),
    click.option(
        "--xsr-cells",
        type=click.IntRange(1, MAX_NUMJOBS),
        default=60,
        help="Cells per XSR group (one fio process: at most fio's 4,096 jobs).",
    ),
    click.option(
        "--toio-grid", default=None, help="Reduce the ECW/DIRTH TC and QD grid, e.g. 8,1."
    ),
)
_NAMES = (
    "profile", "threads", "iodepth", "active_range", "cell_seconds", "max_rounds",
    "wsat_max_rounds", "block_sizes", "mixes", "hir_cycles", "xsr_cells", "toio_grid",
)  # fmt: skip


def pts_plan_options(function: F) -> F:
    """Add the plan's options; the command gets ``options`` (a PtsOptions of its
    ``tests``, ``--no-purge`` and ``--ioengine`` too) instead of them."""

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _NAMES}
        extra: dict[str, Any] = {
            "cell_seconds": given["cell_seconds"],
            "max_rounds": given["max_rounds"],
            "wsat_max_rounds": given["wsat_max_rounds"],
            "hir_cycles": given["hir_cycles"],
            "xsr_cells": given["xsr_cells"],
            "purge": not kwargs.pop("no_purge"),
            "ioengine": kwargs["ioengine"],
        }
        if given["block_sizes"]:
            extra["block_sizes"] = parse_block_sizes(given["block_sizes"])
        if given["mixes"]:
            extra["mixes"] = parse_mixes(given["mixes"])
        if given["toio_grid"]:
            extra["toio_grid"] = parse_grid(given["toio_grid"])
        kwargs["options"] = build(
            parse_tests(kwargs.pop("tests")),
            given["profile"],
            given["threads"],
            given["iodepth"],
            given["active_range"],
            **extra,
        )
        return function(**kwargs)

    decorated: Any = wrapper
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return click.option("--no-purge", is_flag=True, help="Skip the purge (non-compliant).")(  # type: ignore[no-any-return]
        decorated
    )
