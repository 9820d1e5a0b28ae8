"""``volbench pts`` and ``volbench pts-report``: the SNIA PTS suite (``volbench resume``
continues a run: :mod:`volbench.cli.resume`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from volbench.cli import console
from volbench.cli.check import promise_options, show_run
from volbench.cli.dry_run import checked_cost_options, costs, dry_run_option
from volbench.cli.dry_run import show as show_dry_run
from volbench.cli.options import (
    POSITIVE_DURATION,
    POSITIVE_SIZE,
    db_option,
    ioengine_option,
    label_option,
    runs_dir_option,
    stall_options,
    write_options,
)
from volbench.cli.place_options import given, place_options
from volbench.cli.session import conclude, fio_session
from volbench.errors import UsageError
from volbench.fio.bounds import MAX_NUMJOBS
from volbench.fio.stall import StallPolicy
from volbench.model import RunStatus
from volbench.plans.dry_run import (
    DryRun,
    choose_engine,
    preview_target,
)
from volbench.plans.dry_run_pts import pts_preview
from volbench.plans.execution import Outcome
from volbench.plans.fleet import Fleet
from volbench.plans.placement import placed
from volbench.plans.places import places_from
from volbench.plans.pts import driver
from volbench.plans.pts.options import (
    NAME as PTS,
)
from volbench.plans.pts.options import (
    PROFILES,
    PtsOptions,
    build,
    parse_block_sizes,
    parse_grid,
    parse_mixes,
    parse_tests,
)
from volbench.report.pts.report import pts_document, pts_sheets
from volbench.specs import catalogue
from volbench.specs.run_cost import HourlyCost
from volbench.specs.run_promise import settled
from volbench.store.repository import Store, default_data_dir
from volbench.targets.purge import METHODS

PTS_FORMATS = ("table", "json", "csv", "markdown")


class PtsReporter(console.ProgressReporter):
    """The progress display of a PTS run: one bar per round (cell, live IOPS, ETA),
    printed once when the round is committed; test, round and steady state as notes."""


def purge_settings(
    purge: str, ata_password: str | None, destroy_data: Sequence[str], replay: bool = False
) -> driver.PurgeSettings:
    """How each test purges (``--purge``, ``--ata-password``, ``--destroy-data``)."""
    if purge == "ata-secure-erase" and not ata_password:
        raise UsageError("--purge ata-secure-erase needs --ata-password")
    return driver.PurgeSettings(purge, ata_password, bool(destroy_data), replay)


def finish(store: Store, outcome: Outcome, fmt: str) -> None:
    """Show the run's report (and the check against its product's promise, exit 1 when
    below: :func:`show_run`); after an interruption, where it is and how to continue
    it (exit 130). The report of a long run takes seconds to build (every cell's fio
    output is read again): Ctrl-C must end volbench at once, so it is not built then."""
    completed = outcome.status is not RunStatus.INTERRUPTED

    def show() -> None:  # PTS pages (+ places, stalls, the check)
        show_run(store.get_run(str(outcome.run_id)), fmt)

    conclude(outcome, show if completed else None)


MAX_HIR_CYCLES = 10_000
"""HIR cycles at most: 28 times the PTS's 360 (each cycle is a burst and its rests)."""

MAX_WSAT_ROUNDS = 100_000
"""WSAT samples at most: 69 days of the PTS's 60 s samples."""


@click.command("pts")
@click.argument("tests", nargs=-1, required=True)
@click.option(
    "--target",
    multiple=True,
    help="Block device, or a file (created with --size). Several: measured at once.",
)
@place_options
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="enterprise")
@click.option("--threads", type=click.IntRange(1, 256), default=None, help="TC (profile: 4/2).")
@click.option("--iodepth", type=click.IntRange(1, 4096), default=None, help="QD (profile: 32/16).")
@click.option("--active-range", type=click.IntRange(1, 100), default=None, help="Percent.")
@click.option("--cell-seconds", type=POSITIVE_DURATION, default="60", help="Not 60: non-compliant.")
@click.option(
    "--max-rounds",
    type=click.IntRange(1, 1000),
    default=25,
    show_default=True,
    help="Steady-state rounds per test at most.",
)
@click.option(
    "--wsat-max-rounds",
    type=click.IntRange(1, MAX_WSAT_ROUNDS),
    default=1440,
    show_default=True,
    help="WSAT samples at most (it ends at 4 x the active range written).",
)
@click.option(
    "--block-sizes", default=None, help="Reduce the IOPS and latency matrices, e.g. 4k,64k."
)
@click.option(
    "--mixes", default=None, help="Reduce the IOPS and latency matrices, e.g. 100/0,0/100."
)
@click.option(
    "--hir-cycles",
    type=click.IntRange(1, MAX_HIR_CYCLES),
    default=360,
    help="Not 360: non-compliant.",
)
@click.option(
    "--xsr-cells",
    type=click.IntRange(1, MAX_NUMJOBS),
    default=60,
    help="Cells per XSR group (one fio process: at most fio's 4,096 jobs).",
)
@click.option("--toio-grid", default=None, help="Reduce the ECW/DIRTH TC and QD grid, e.g. 8,1.")
@click.option("--purge", "purge_method", type=click.Choice(METHODS), default="auto")
@click.option("--ata-password", default=None, help="For --purge ata-secure-erase.")
@click.option("--no-purge", is_flag=True, help="Skip the purge (non-compliant).")
@click.option("--size", type=POSITIVE_SIZE, default=None, help="Size of a file target.")
@ioengine_option
@label_option
@write_options
@runs_dir_option
@click.option("--replay", type=click.Path(exists=True, file_okay=False), hidden=True)
@stall_options
@db_option
@click.option("--format", "fmt", type=click.Choice(PTS_FORMATS), default="table")
@dry_run_option
@checked_cost_options
@promise_options
def pts(
    tests: tuple[str, ...],
    target: tuple[str, ...],
    target_lists: tuple[str, ...],
    host_lists: tuple[str, ...],
    hosts_file: str | None,
    keep_going: bool,
    profile: str,
    threads: int | None,
    iodepth: int | None,
    active_range: int | None,
    cell_seconds: float,
    max_rounds: int,
    wsat_max_rounds: int,
    block_sizes: str | None,
    mixes: str | None,
    hir_cycles: int,
    xsr_cells: int,
    toio_grid: str | None,
    purge_method: str,
    ata_password: str | None,
    no_purge: bool,
    size: int | None,
    ioengine: str | None,
    labels: tuple[tuple[str, str], ...],
    destroy_data: tuple[str, ...],
    force: bool,
    runs_dir: str | None,
    replay: str | None,
    stall_seconds: float,
    abort_on_stall: bool,
    db: str | None,
    fmt: str,
    dry_run: bool,
    product: str | None,
    hourly_cost: HourlyCost | None,
) -> None:
    """SNIA PTS: TEST is iops, throughput, latency, wsat, hir, xsr, ecw, dirth or all.

    Each test purges, preconditions and runs rounds until steady state (at most
    25); every round is committed, and `volbench resume RUN` continues a run.
    Throughput runs SEQ 1024 KiB and 128 KiB as two tests (SNIA SSS PTS-E 1.1),
    throughput-1024k and throughput-128k, each with its own purge and WIPC.
    """
    extra: dict[str, Any] = {
        "cell_seconds": cell_seconds,
        "max_rounds": max_rounds,
        "wsat_max_rounds": wsat_max_rounds,
        "hir_cycles": hir_cycles,
        "xsr_cells": xsr_cells,
        "purge": not no_purge,
        "ioengine": ioengine,
    }
    if block_sizes:
        extra["block_sizes"] = parse_block_sizes(block_sizes)
    if mixes:
        extra["mixes"] = parse_mixes(mixes)
    if toio_grid:
        extra["toio_grid"] = parse_grid(toio_grid)
    options = build(parse_tests(tests), profile, threads, iodepth, active_range, **extra)
    targets, hosts = given(target, target_lists, host_lists, hosts_file)
    if not targets:
        raise UsageError("pts needs --target DEVICE (or a file with --size)")
    fleet = None
    if hosts or len(targets) > 1:
        fleet = Fleet(places_from(targets, hosts), keep_going, size_bytes=size)
        fleet.check_stall_policy(abort_on_stall)
        if fleet.remote and options.purge and not replay:
            raise UsageError(
                "volbench cannot purge a target on another host: purge it there and add "
                "--no-purge (marked non-compliant)"
            )
    if dry_run:
        destroy = destroy_data[0] if destroy_data else None
        dry = pts_dry_run(options, targets, size, ioengine, runs_dir, destroy, force)
        found = costs(dry.low_s, dry.high_s, dry.target.capacity_bytes, labels, product, size,
                      hourly_cost)  # fmt: skip
        show_dry_run(dry, found, "json" if fmt == "json" else "table")
        return
    purging = purge_settings(purge_method, ata_password, destroy_data, replay is not None)
    settled(labels, catalogue.load(), None)  # a wrong product: one line, first
    reporter = PtsReporter()
    stall = StallPolicy(stall_seconds, abort_on_stall)
    with fio_session(db, runs_dir, reporter, replay=replay, stall=stall) as session:
        if product or hourly_cost or dict(labels).get("product"):
            cells = pts_dry_run(options, targets, size, ioengine, runs_dir, None, True)
            found = costs(cells.low_s, cells.high_s, cells.target.capacity_bytes, labels, product,
                          size, hourly_cost)  # fmt: skip
            reporter.note(
                f"estimated cost of the rounds (preconditioning adds to it): {' | '.join(found)}"
            )
        with placed(fleet, targets[0], True, reporter, size, destroy_data, force) as place:
            promised = settled(labels, catalogue.load(), place.target)
            outcome = driver.begin(
                session, options, place.target, promised, ioengine, purging, place.fleet
            )
        finish(session.store, outcome, fmt)


@click.command("pts-report")
@click.argument("run_ref", metavar="RUN")
@click.option("--format", "fmt", type=click.Choice(PTS_FORMATS), default="table")
@click.option("-o", "--output", default=None, help="File to write (json, csv, markdown).")
@db_option
def pts_report(run_ref: str, fmt: str, output: str | None, db: str | None) -> None:
    """The PTS report of a run: result tables per test and the steady-state windows."""
    with Store.open(db, create=False) as store:
        run = store.get_run(run_ref)
    if run.plan != PTS:
        raise UsageError(f"run {run.id} is a {run.plan} run, not PTS (see volbench show)")
    console.show_report(pts_sheets(run), pts_document(run), fmt, output)


def pts_dry_run(
    options: PtsOptions,
    targets: Sequence[str],
    size: int | None,
    ioengine: str | None,
    runs_dir: str | None,
    destroy_data: str | None,
    force: bool,
) -> DryRun:
    """What the PTS run would do on the first target (nothing written)."""
    info, notes = preview_target(targets[0], True, size, destroy_data, force)
    if len(targets) > 1:
        notes.append(f"{len(targets)} targets at once; job files of the first")
    engine, found = choose_engine(info, ioengine)
    fitted = driver.fit_target(options, info, None)
    folder = Path(runs_dir or default_data_dir() / "runs")
    return pts_preview(fitted, info, engine, folder, (*notes, *found))
