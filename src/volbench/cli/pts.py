"""``volbench pts`` and ``volbench pts-report``: the SNIA PTS suite (``volbench resume``
continues a run: :mod:`volbench.cli.resume`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from volbench.cli import console
from volbench.cli.check import promise_options, show_run
from volbench.cli.dry_run import checked_cost_options, dry_run_option
from volbench.cli.dry_run import show as show_dry_run
from volbench.cli.options import (
    OUTPUT_FILE,
    POSITIVE_SIZE,
    RUN,
    db_option,
    grouped,
    ioengine_option,
    label_option,
    runs_dir_option,
    stall_options,
    strict_option,
    write_options,
)
from volbench.cli.place_options import given, place_options
from volbench.cli.pts_options import PtsCommand, pts_plan_options
from volbench.cli.session import conclude
from volbench.errors import UsageError
from volbench.fio.stall import StallPolicy
from volbench.model import RunStatus
from volbench.places.table import default_targets
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.named import places_from
from volbench.plans.placement.placed import Placement
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.placement.preview import PlacePreview
from volbench.plans.pts import catalog, driver
from volbench.plans.pts.dry_run import pts_dry_run
from volbench.plans.pts.options import (
    NAME as PTS,
)
from volbench.plans.pts.options import (
    PtsOptions,
)
from volbench.plans.runs.execution import Outcome, Session
from volbench.plans.runs.preview import DryRun
from volbench.plans.starting import Costing, Previewed, RunRequest, Where, previewed, started
from volbench.report.pts.report import pts_document, pts_sheets
from volbench.specs import catalogue
from volbench.specs.run_promise import settled
from volbench.store.repository import Store
from volbench.targets.purge import METHODS

PTS_FORMATS = ("table", "json", "csv", "markdown")


class PtsReporter(console.ProgressReporter):
    """The progress display of a PTS run: one bar per round (cell, live IOPS, ETA),
    printed once when the round is committed; test, round and steady state as notes."""


def purge_settings(
    purge_method: str,
    ata_password: str | None,
    destroy_data: Sequence[str],
    replay: bool | str | None = False,
) -> PurgeSettings:
    """How each test purges (``--purge``, ``--ata-password``, ``--destroy-data``;
    ``replay``: recorded outputs, nothing is purged)."""
    if purge_method == "ata-secure-erase" and not ata_password:
        raise UsageError("--purge ata-secure-erase needs --ata-password")
    return PurgeSettings(purge_method, ata_password, bool(destroy_data), bool(replay))


def finish(store: Store, outcome: Outcome, fmt: str, strict: bool = False) -> None:
    """Show the run's report (and the check against its product's promise, exit 1 when
    below: :func:`show_run`; with ``strict``, exit 1 too when a test is marked); after
    an interruption, where it is and how to continue it (exit 130). The report of a long
    run takes seconds to build (every cell's fio output is read again): Ctrl-C must end
    volbench at once, so it is not built then."""
    completed = outcome.status is not RunStatus.INTERRUPTED

    def show() -> None:  # PTS pages (+ places, stalls, the check)
        show_run(store.get_run(str(outcome.run_id)), fmt, strict=strict)

    conclude(outcome, show if completed else None)


@dataclass(frozen=True)
class Shown:
    """How a PTS run ends: its report's format, and whether a marked test fails it
    (``--strict``)."""

    fmt: str
    strict: bool = False


@dataclass(frozen=True)
class Places:
    """Where ``pts`` runs: its targets, and the hosts they are on (none: this machine)."""

    targets: list[str]
    hosts: list[str]
    keep_going: bool

    @classmethod
    def given(
        cls,
        target: tuple[str, ...],
        target_lists: tuple[str, ...],
        host_lists: tuple[str, ...],
        hosts_file: str | None,
        keep_going: bool,
    ) -> Places:
        targets, hosts = given(target, target_lists, host_lists, hosts_file)
        if not targets and hosts:
            targets = default_targets(hosts)  # e.g. lab guests: their own disks
        if not targets:
            raise UsageError("pts needs --target DEVICE (or a file with --size)")
        return cls(targets, hosts, keep_going)


def stall_policy(stall_seconds: float, abort_on_stall: bool) -> StallPolicy:
    """``--stall-seconds`` and ``--abort-on-stall`` as the run's stall policy."""
    return StallPolicy(stall_seconds, abort_on_stall)


HELP = """SNIA PTS, the Performance Test Specification: TEST is {tests}.

Each test purges, preconditions and runs rounds until steady state (at most
25); every round is committed, and `volbench resume RUN` continues a run.
Throughput runs SEQ 1024 KiB and 128 KiB as two tests (SNIA SSS PTS-E 1.1),
throughput-1024k and throughput-128k, each with its own purge and WIPC.
"""


def run_pts(
    options: PtsOptions,
    places: Places,
    purging: PurgeSettings,
    size: int | None,
    ioengine: str | None,
    labels: tuple[tuple[str, str], ...],
    destroy_data: tuple[str, ...],
    force: bool,
    runs_dir: str | None,
    replay: str | None,
    stall: StallPolicy,
    db: str | None,
    shown: Shown,
    dry_run: bool,
    costing: Costing,
) -> None:
    """``volbench pts`` (:func:`pts_command`), its options as records."""
    targets = places.targets
    fleet = None
    if places.hosts or len(targets) > 1:
        fleet = Fleet(places_from(targets, places.hosts), places.keep_going, size_bytes=size)
        fleet.check_stall_policy(stall.abort)
    driver.check_places(fleet, options, bool(replay))
    where = Where(targets[0], fleet, size, destroy_data, force)
    request = RunRequest(
        where, True, labels, db, runs_dir, replay, stall, dry_run=dry_run, costing=costing
    )

    def begin(session: Session, place: Placement | None, promised: dict[str, str]) -> Outcome:
        assert place is not None  # the request has its places
        return driver.begin(
            session, options, place.target, promised, ioengine, purging, place.fleet
        )

    def preview(place: PlacePreview | None, folder: Path) -> DryRun:
        assert place is not None  # the request has its places
        return pts_dry_run(options, place, ioengine, folder)

    if not dry_run and (costing.product or costing.hourly_cost or dict(labels).get("product")):
        settled(labels, catalogue.load, None)  # a wrong product: one line, first
        found = previewed(request, preview).costs
        note = f"estimated cost of the rounds (preconditioning adds to it): {' | '.join(found)}"
        request = dataclasses.replace(request, notes=(note,))
    with started(request, PtsReporter(), begin, preview) as ran:
        if isinstance(ran, Previewed):
            show_dry_run(ran.dry, ran.costs, "json" if shown.fmt == "json" else "table")
            return
        finish(ran.store, ran.outcome, shown.fmt, shown.strict)


def pts_command() -> click.Command:
    """The ``pts`` command, with the options the PTS tests of
    :data:`volbench.plans.pts.catalog.TESTS` declare when it is made."""

    def pts(**kwargs: Any) -> None:
        run_pts(**kwargs)

    pts.__doc__ = HELP.format(tests=catalog.names_text())
    decorators = (
        click.command("pts", cls=PtsCommand),
        click.argument("tests", nargs=-1, required=True),
        click.option(
            "--target",
            multiple=True,
            help="Block device, or a file (created with --size). Several: measured at once.",
        ),
        place_options,
        pts_plan_options,
        click.option("--purge", "purge_method", type=click.Choice(METHODS), default="auto"),
        click.option("--ata-password", default=None, help="For --purge ata-secure-erase."),
        click.option("--size", type=POSITIVE_SIZE, default=None, help="Size of a file target."),
        ioengine_option,
        label_option,
        write_options,
        runs_dir_option,
        click.option("--replay", type=click.Path(exists=True, file_okay=False), hidden=True),
        stall_options,
        db_option,
        click.option("--format", "fmt", type=click.Choice(PTS_FORMATS), default="table"),
        dry_run_option,
        checked_cost_options,
        promise_options,
        strict_option,
        grouped(
            "places",
            Places.given,
            ("target", "target_lists", "host_lists", "hosts_file", "keep_going"),
        ),
        grouped(
            "purging", purge_settings, ("purge_method", "ata_password"), ("destroy_data", "replay")
        ),
        grouped("stall", stall_policy, ("stall_seconds", "abort_on_stall")),
        grouped("costing", Costing, ("product", "hourly_cost")),
        grouped("shown", Shown, ("fmt", "strict")),
    )
    command: Any = pts
    for decorate in reversed(decorators):
        command = decorate(command)
    assert isinstance(command, click.Command)
    return command


pts = pts_command()


@click.command("pts-report")
@click.argument("run_ref", metavar="RUN", type=RUN)
@click.option("--format", "fmt", type=click.Choice(PTS_FORMATS), default="table")
@click.option(
    "-o", "--output", type=OUTPUT_FILE, default=None, help="File to write (json, csv, markdown)."
)
@db_option
def pts_report(run_ref: str, fmt: str, output: str | None, db: str | None) -> None:
    """The PTS report of a run: result tables per test and the steady-state windows."""
    with Store.open(db, create=False) as store:
        run = store.get_run(run_ref)
    if run.plan != PTS:
        raise UsageError(f"run {run.id} is a {run.plan} run, not PTS (see volbench show)")
    console.show_report(pts_sheets(run), pts_document(run), fmt, output)
