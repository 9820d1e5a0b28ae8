"""``volbench qos verify``: every tenant at once, in its cgroup on one device, in its
lab guest or on its place of a host, planned vs achieved (the NetEase QoS test's
check); with guests, alpha fitted from them against the host alone.

A thin command: parse, call one service function, render a Sheet.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import click

from volbench import records
from volbench.analysis.qos_alpha import guest_alpha
from volbench.analysis.qos_results import VerifyOptions, check_run
from volbench.cli import console
from volbench.cli.dry_run import cost_options, dry_run_option
from volbench.cli.dry_run import show as show_dry_run
from volbench.cli.options import (
    BLOCK_SIZE,
    JOB_PATH,
    POSITIVE_DURATION,
    POSITIVE_SIZE,
    Converted,
    db_option,
    format_option,
    grouped,
    ioengine_option,
    label_option,
    parse_number,
    runs_dir_option,
)
from volbench.cli.place_options import given
from volbench.cli.qos_options import GUESTS_HELP, nominal_option
from volbench.cli.session import conclude
from volbench.errors import CheckFailed, UsageError
from volbench.model import RW, RunRecord
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.named import places_from
from volbench.plans.placement.placed import Placement
from volbench.plans.placement.preview import PlacePreview
from volbench.plans.qos import guests as qos_guests
from volbench.plans.qos.places import preview_places, verify_places
from volbench.plans.qos.plan_file import read_plan
from volbench.plans.qos.verify import preview, verify
from volbench.plans.runs.execution import Outcome, Session
from volbench.plans.runs.preview import DryRun, estimate_line
from volbench.plans.starting import (
    Begin,
    Costing,
    Preview,
    Previewed,
    RunRequest,
    Where,
    previewed,
    started,
)
from volbench.report.qos_verify_sheets import verify_sheet
from volbench.specs.run_cost import HourlyCost

PERCENT = Converted("percent", functools.partial(parse_number, high=100.0, what="percent"))
"""A finite share from 0 to 100 (nan and inf refused)."""


VERIFY_OPTIONS = (
    "duration",
    "rw",
    "bs",
    "iodepth",
    "with_host",
    "tolerance",
    "ioengine",
    "destroy_data",
    "quiet",
    "nominal_sizes",
    "guests",
    "fit_alpha",
)
"""The options of ``qos verify`` that make its :class:`VerifyOptions`."""


def verify_options(
    duration: float,
    rw: str,
    bs: int,
    iodepth: int,
    with_host: bool,
    tolerance: float,
    ioengine: str | None,
    destroy_data: str | None,
    quiet: tuple[str, ...],
    nominal_sizes: bool,
    guests: bool,
    fit_alpha: bool,
) -> VerifyOptions:
    """How ``qos verify`` verifies, from its options."""
    if fit_alpha and not guests:
        raise UsageError("--fit-alpha measures lab guests: give --guests too")
    return VerifyOptions(
        duration,
        RW(rw),
        bs,
        iodepth,
        with_host,
        tolerance,
        ioengine,
        destroy_data,
        quiet,
        nominal_sizes,
        guests,
        fit_alpha,
    )


@click.command("verify")
@click.argument("plan_file", metavar="PLAN")
@click.option("--device", type=JOB_PATH, help="Whole block device to verify on.")
@click.option("--guests", is_flag=True, help=GUESTS_HELP)
@click.option(
    "--hosts",
    "host_lists",
    multiple=True,
    metavar="H1,H2,...",
    help="Tenants on places of these hosts, one each, held to their limits by the"
    " place's kind; with --target HOST:PATH for each, in the plan's order.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="HOST:PATH",
    help="A tenant's place on a host of --hosts (one per tenant, in the plan's order).",
)
@click.option(
    "--size", type=POSITIVE_SIZE, default=None, help="With --hosts: active range on each place."
)
@click.option(
    "--fit-alpha",
    is_flag=True,
    help="With --guests: then the host alone and the guests without limits: alpha.",
)
@click.option("--duration", type=POSITIVE_DURATION, default="10s", show_default=True)
@click.option("--with-host", is_flag=True, help="Also run the host in its reserve.")
@click.option(
    "--rw",
    type=click.Choice([r.value for r in RW if r not in (RW.RW, RW.RANDRW)]),
    default="randread",
    show_default=True,
)
@click.option("--bs", type=BLOCK_SIZE, default="4k", show_default=True, help="Block size.")
@click.option("--iodepth", type=click.IntRange(1, 4096), default=16, show_default=True)
@click.option("--tolerance", type=PERCENT, default="10", show_default=True, help="Percent.")
@ioengine_option
@click.option("--destroy-data", metavar="DEVICE", help="Allow writing DEVICE despite its data.")
@click.option(
    "--force",
    is_flag=True,
    help="Let fio create or overwrite a place's file (--hosts: volbench cannot check it).",
)
@runs_dir_option
@click.option("--replay", type=click.Path(exists=True, file_okay=False), hidden=True)
@click.option(
    "--quiet", multiple=True, metavar="TENANT", help="Asks for its plan only (isolation check)."
)
@nominal_option
@label_option
@db_option
@format_option
@dry_run_option
@cost_options
@grouped("options", verify_options, VERIFY_OPTIONS)
def verify_command(
    plan_file: str,
    device: str | None,
    host_lists: tuple[str, ...],
    targets: tuple[str, ...],
    size: int | None,
    options: VerifyOptions,
    force: bool,
    runs_dir: str | None,
    replay: str | None,
    labels: tuple[tuple[str, str], ...],
    db: str | None,
    fmt: str,
    dry_run: bool,
    product: str | None,
    hourly_cost: HourlyCost | None,
) -> None:
    """Run all tenants at once in their cgroups (or lab guests, or places): planned vs achieved.

    Exit code 1 when a tenant is more than --tolerance % off its plan."""
    plan = read_plan(plan_file)
    costing = Costing(product, hourly_cost)
    if force and not (host_lists or targets):
        raise UsageError("--force lets fio write a place's file: give it with --hosts")
    if host_lists or targets:
        if device is not None or options.guests:
            raise UsageError("--hosts verifies on the places given: no --device, --guests")
        places, hosts = given(targets, (), host_lists, None)
        fleet = Fleet(places_from(places, hosts), size_bytes=size)
        named = (options.destroy_data,) if options.destroy_data else ()  # HOST:PATH
        where = Where(places[0] if places else "", fleet, size, named, force)
        request = RunRequest(
            where,
            options.rw.writes,
            labels,
            db,
            runs_dir,
            replay=replay,
            dry_run=dry_run,
            costing=costing,
        )

        def on_places(place: PlacePreview | None, folder: Path) -> DryRun:
            assert place is not None  # the request has its places
            return preview_places(plan, fleet, place, options, folder)

        def begin_places(
            session: Session, place: Placement | None, settled: dict[str, str]
        ) -> Outcome:
            assert place is not None  # the request has its places
            return verify_places(session, plan, place, options, settled)

        _verify(request, begin_places, on_places, options, fmt)
        return
    if replay is not None:
        raise UsageError("--replay replays a verification on places (--hosts) only")
    if options.guests:
        if device is not None or dry_run:
            raise UsageError(
                "--guests verifies on the guests' backing device: no --device, --dry-run"
            )

        def begin_guests(
            session: Session, place: Placement | None, settled: dict[str, str]
        ) -> Outcome:
            return qos_guests.verify(session, plan, options, settled)

        # the guests' own disks: the request has no places
        _verify(RunRequest(None, True, labels, db, runs_dir), begin_guests, None, options, fmt)
        return
    if device is None:
        raise UsageError(
            "give --device DEV (tenants in cgroups), --guests (lab guests)"
            " or --hosts with a --target HOST:PATH per tenant"
        )
    on_device = device
    # verify checks its device itself: the request has no places
    request = RunRequest(None, True, labels, db, runs_dir, dry_run=dry_run, costing=costing)

    def on_cgroups(place: PlacePreview | None, folder: Path) -> DryRun:
        return preview(plan, on_device, options, folder)

    def begin(session: Session, place: Placement | None, settled: dict[str, str]) -> Outcome:
        return verify(session, plan, on_device, options, settled)

    _verify(request, begin, on_cgroups, options, fmt)


def _verify(
    request: RunRequest,
    begin: Begin,
    preview_of: Preview | None,
    options: VerifyOptions,
    fmt: str,
) -> None:
    """Start the verification ``request`` asks for, whatever its tenants are (cgroups,
    places, guests): its dry run shown as every run's, else its estimate (when it has a
    dry run) before it runs, and its sheet."""
    reporter = console.ProgressReporter()

    def estimated(session: Session, place: Placement | None, settled: dict[str, str]) -> Outcome:
        if preview_of is not None:
            estimate = previewed(request, preview_of)
            reporter.note(estimate_line(estimate.dry, estimate.costs))
        return begin(session, place, settled)

    with started(request, reporter, estimated, preview_of) as ran:
        if isinstance(ran, Previewed):
            show_dry_run(ran.dry, ran.costs, "json" if fmt == "json" else "table")
            return
        conclude(ran.outcome)  # interrupted: where the run is, exit 130
        run = ran.store.get_run(str(ran.outcome.run_id))
    _conclude_verify(run, options, fmt)


def _conclude_verify(run: RunRecord, options: VerifyOptions, fmt: str) -> None:
    """The verify sheet (with alpha when the run fitted it); exit 1 when a tenant is
    off its plan."""
    outcome = check_run(run)
    sheet = verify_sheet(outcome, run.raw_outputs)
    alpha = guest_alpha(run)
    if alpha is not None:
        document = {**sheet.document, "alpha": records.json_object(alpha)}
        sheet = dataclasses.replace(sheet, document=document, notes=(*sheet.notes, alpha.line()))
    console.show(sheet, fmt)
    if not outcome.passed:
        raise CheckFailed(
            f"a tenant is more than {options.tolerance_pct:g} % off its plan (run {outcome.run_id})"
        )
