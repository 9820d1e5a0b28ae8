"""``volbench qos``: plan, apply, clear, verify, fit and predict per-tenant I/O (seed 004).

Thin commands: parse, call one service function, render a Sheet.
"""

from __future__ import annotations

import dataclasses
import functools

import click

from volbench import records
from volbench.analysis.qos import QosPlan, Rates, Tenant, check_tenants, fit_alpha, make_plan
from volbench.analysis.qos_alpha import guest_alpha
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import (
    VerifyOptions,
    check_run,
    fit_groups,
    measurement,
    verify_direction,
)
from volbench.cli import console
from volbench.cli.dry_run import cost_options, costs, dry_run_option
from volbench.cli.dry_run import show as show_dry_run
from volbench.cli.options import (
    BLOCK_SIZE,
    JOB_PATH,
    POSITIVE_DURATION,
    Converted,
    db_option,
    format_option,
    grouped,
    ioengine_option,
    label_option,
    parse_number,
    runs_dir_option,
)
from volbench.cli.qos_options import MEASURED, RATES, TENANT
from volbench.cli.session import conclude, fio_session, runs_folder
from volbench.errors import CheckFailed, UsageError
from volbench.model import RW, RunRecord
from volbench.plans import qos_capability, qos_guests, qos_setup
from volbench.plans.dry_run import estimate_line
from volbench.plans.qos_plan_file import read_plan
from volbench.plans.qos_verify import preview, verify
from volbench.report.qos_sheets import (
    applied_sheet,
    cleared_sheet,
    fit_sheet,
    plan_sheet,
    predict_sheet,
)
from volbench.report.qos_verify_sheets import verify_sheet
from volbench.specs.run_cost import HourlyCost
from volbench.store.repository import Store
from volbench.units import GiB

SIZE_GIB_HELP = "NAME:SIZE, size in GiB (40) or with a unit (512m); repeat per tenant."
CAPABILITY_HELP = (
    "Device capability C: iops=N,bps=SIZE (both directions) or per direction"
    " riops=N,wiops=N,rbps=SIZE,wbps=SIZE."
)
nominal_option = click.option(
    "--nominal-sizes",
    is_flag=True,
    help="Tenant sizes are proportions only: not checked against the device's capacity.",
)
GUESTS_HELP = (
    "Each tenant is the running lab guest of its name (limits in its QEMU throttle group)."
)
ALPHA = click.FloatRange(0.0, 1.0, max_open=True)


@click.group()
def qos() -> None:
    """Per-tenant I/O QoS: C' = (C - C0) x (1 - alpha) x V'/Va (NetEase QoS test)."""


@qos.command("plan")
@click.option("--capability", type=RATES, help=CAPABILITY_HELP)
@click.option(
    "--measure",
    metavar="DEVICE",
    help="Measure C on DEVICE with fio: reads, and writes where writing it is allowed.",
)
@click.option("--measure-time", type=POSITIVE_DURATION, default="10s", show_default=True)
@click.option(
    "--destroy-data", metavar="DEVICE", help="Allow --measure to write DEVICE despite its data."
)
@click.option(
    "--host-reserve",
    type=RATES,
    default="iops=0",
    help="Host reserve C0: iops=N,bps=SIZE, or riops=,wiops=,rbps=,wbps= per direction.",
)
@click.option("--tenant", "tenants", type=TENANT, multiple=True, required=True, help=SIZE_GIB_HELP)
@click.option("--alpha", type=ALPHA, default=0.0, show_default=True, help="Virtualisation loss.")
@click.option(
    "--volume-size",
    type=click.FloatRange(0),
    default=0.0,
    help="Device size V, GiB (the tenants' sizes are then nominal).",
)
@nominal_option
@runs_dir_option
@db_option
@format_option
def plan(
    capability: Rates | None,
    measure: str | None,
    measure_time: float,
    destroy_data: str | None,
    host_reserve: Rates,
    tenants: tuple[Tenant, ...],
    alpha: float,
    volume_size: float,
    nominal_sizes: bool,
    runs_dir: str | None,
    db: str | None,
    fmt: str,
) -> None:
    """Per-tenant limits, shares and weights, proportional to size.

    With --measure DEV the tenants must fit on DEV (V = its capacity) unless the
    sizes are nominal (--nominal-sizes or --volume-size); figures given with
    --capability take the place of measured ones."""
    if capability is None and measure is None:
        raise UsageError(
            "give the device's capability: --capability iops=N,bps=SIZE or --measure DEV"
        )
    nominal = nominal_sizes or volume_size > 0
    measured_run = None
    refused = ""
    if measure is not None:
        check_tenants(tenants)  # bad tenants: one line before fio runs
        needed = 0.0 if nominal else sum(t.size_gib for t in tenants)
        with fio_session(db, runs_dir, console.ProgressReporter()) as session:
            found = qos_capability.measure(session, measure, measure_time, {}, needed, destroy_data)
        given = capability or Rates()
        capability = Rates(
            *(g or m for (_, g), (_, m) in zip(given.figures(), found.rates.figures(), strict=True))
        )
        measured_run, refused = found.run_id, found.refused if not given.write_iops else ""
        volume_size = volume_size or (0.0 if nominal else found.capacity_bytes / GiB)
    assert capability is not None
    result = make_plan(capability, host_reserve, tenants, alpha, volume_size, nominal)
    document = {
        **plan_document(result),
        "capability_run": measured_run,
        "writes_not_measured": refused,
    }
    console.show(plan_sheet(result, document), fmt)


@qos.command("predict")
@click.option("--capability", type=RATES, required=True, help=CAPABILITY_HELP)
@click.option("--host-used", type=RATES, default="iops=0", help="What the host uses, C0.")
@click.option("--alpha", type=ALPHA, required=True, help="Loss factor (from `qos fit`).")
@click.option("--tenant", "tenants", type=TENANT, multiple=True, required=True, help=SIZE_GIB_HELP)
@click.option(
    "--measured", type=MEASURED, multiple=True, help="NAME=IOPS measured: adds the error."
)
@click.option("--run", "run_ref", metavar="RUN", help="Take the measured IOPS from a verify run.")
@db_option
@format_option
def predict(
    capability: Rates,
    host_used: Rates,
    alpha: float,
    tenants: tuple[Tenant, ...],
    measured: tuple[tuple[str, float], ...],
    run_ref: str | None,
    db: str | None,
    fmt: str,
) -> None:
    """Predict each tenant's C' (and the error against measured IOPS)."""
    result = make_plan(capability, host_used, tenants, alpha)
    direction = "read" if capability.read_iops or capability.read_bps else "write"
    if run_ref is not None:
        with Store.open(db, create=False) as store:
            run = store.get_run(run_ref)
        checks, direction = check_run(run).checks, verify_direction(run)
        measured += tuple((c.tenant, c.achieved_iops) for c in checks if c.size_gib > 0)
    unknown = sorted({n for n, _ in measured} - {t.name for t in tenants})
    if unknown:
        raise click.BadParameter(f"no tenant named {unknown[0]}", param_hint="--measured")
    console.show(predict_sheet(result, dict(measured), direction), fmt)


@qos.command("fit")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@click.option("--capability", type=click.FloatRange(0, min_open=True), help="C, IOPS.")
@click.option("--host-used", type=click.FloatRange(0), default=0.0, help="C0, IOPS.")
@click.option("--measured", type=MEASURED, multiple=True, help="NAME=IOPS of every tenant.")
@db_option
@format_option
def fit(
    runs: tuple[str, ...],
    capability: float | None,
    host_used: float,
    measured: tuple[tuple[str, float], ...],
    db: str | None,
    fmt: str,
) -> None:
    """Estimate alpha from verify RUNs or from one measurement.

    RUNs are pooled per direction and number of tenants; without RUNs, give
    --capability, --host-used and --measured of every tenant that ran."""
    if runs and (capability is not None or measured):
        raise UsageError("give verify RUNs or --capability/--measured, not both")
    if runs:
        with Store.open(db, create=False) as store:
            found = [measurement(store.get_run(ref)) for ref in runs]
        console.show(fit_sheet(fit_groups(found)), fmt)
        return
    if capability is None or not measured:
        raise UsageError("give verify RUNs, or --capability C and --measured NAME=IOPS per tenant")
    achieved = [value for _, value in measured]
    row = {
        "group": ",".join(name for name, _ in measured),
        "capability": capability,
        "host_used": host_used,
        "tenants": len(achieved),
        "achieved_total": sum(achieved),
        "achieved": dict(measured),
        "alpha": fit_alpha(capability, host_used, achieved),
    }
    console.show(fit_sheet([row]), fmt)


@qos.command("apply")
@click.argument("plan_file", metavar="PLAN")
@click.option("--device", type=JOB_PATH, help="Whole block device the limits apply to.")
@click.option("--guests", is_flag=True, help=GUESTS_HELP)
@nominal_option
@format_option
def apply(plan_file: str, device: str | None, guests: bool, nominal_sizes: bool, fmt: str) -> None:
    """Create volbench-p<plan id>-<tenant> cgroups with a plan's limits (or, with
    --guests, set them in each tenant's lab guest)."""
    plan = read_plan(plan_file)
    if guests:
        if device is not None:
            raise UsageError("give --device (cgroups) or --guests (lab guests), not both")
        set_in = qos_guests.apply_guests(plan)
        console.stderr.print(qos_guests.NO_WEIGHT)
        rows = [{"tenant": n, "file": f"lab://{n} tg0", "value": v.text()} for n, v in set_in]
        console.show(applied_sheet("QEMU throttle groups (QMP)", "-", rows), fmt)
        return
    if device is None:
        raise UsageError("give --device DEV (cgroups on it) or --guests (lab guests)")
    applied = qos_setup.apply_plan(plan, device, nominal=nominal_sizes)
    hierarchy = f"cgroup v{applied.hierarchy.version} at {applied.hierarchy.root}"
    rows = [{"tenant": w.tenant, "file": w.file, "value": w.value} for w in applied.written]
    console.show(applied_sheet(hierarchy, applied.devnum, rows), fmt)


@qos.command("clear")
@click.argument("plan_file", metavar="[PLAN]", required=False)
@click.option("--all", "every", is_flag=True, help="Every cgroup volbench made, any session's.")
@format_option
def clear(plan_file: str | None, every: bool, fmt: str) -> None:
    """Remove PLAN's cgroups, or with --all every cgroup volbench made on this host."""
    if (plan_file is None) == (not every):
        raise UsageError(
            "give the PLAN whose cgroups to remove, or --all for every cgroup volbench made"
        )
    removed, busy = qos_setup.clear(read_plan(plan_file) if plan_file else None)
    console.show(cleared_sheet(removed, busy), fmt)


PERCENT = Converted("percent", functools.partial(parse_number, high=100.0, what="percent"))
"""A finite share from 0 to 100 (nan and inf refused)."""


VERIFY_OPTIONS = (
    "duration", "rw", "bs", "iodepth", "with_host", "tolerance", "ioengine", "destroy_data",
    "quiet", "nominal_sizes", "guests", "fit_alpha",
)  # fmt: skip
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
        duration, RW(rw), bs, iodepth, with_host, tolerance, ioengine, destroy_data, quiet,
        nominal_sizes, guests, fit_alpha,
    )  # fmt: skip


@qos.command("verify")
@click.argument("plan_file", metavar="PLAN")
@click.option("--device", type=JOB_PATH, help="Whole block device to verify on.")
@click.option("--guests", is_flag=True, help=GUESTS_HELP)
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
@runs_dir_option
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
    options: VerifyOptions,
    runs_dir: str | None,
    labels: tuple[tuple[str, str], ...],
    db: str | None,
    fmt: str,
    dry_run: bool,
    product: str | None,
    hourly_cost: HourlyCost | None,
) -> None:
    """Run all tenants at once in their cgroups (or lab guests): planned vs achieved.

    Exit code 1 when a tenant is more than --tolerance % off its plan."""
    plan = read_plan(plan_file)
    if options.guests:
        if device is not None or dry_run:
            raise UsageError(
                "--guests verifies on the guests' backing device: no --device, --dry-run"
            )
        _verify_guests(plan, options, runs_dir, labels, db, fmt)
        return
    if device is None:
        raise UsageError("give --device DEV (tenants in cgroups) or --guests (lab guests)")
    if dry_run:
        dry = preview(plan, device, options, runs_folder(runs_dir))
        found = costs(dry.low_s, dry.high_s, None, labels, product, None, hourly_cost)
        show_dry_run(dry, found, "json" if fmt == "json" else "table")
        return
    reporter = console.ProgressReporter()
    with fio_session(db, runs_dir, reporter) as session:
        store = session.store
        dry = preview(plan, device, options, session.runs_dir)
        found = costs(dry.low_s, dry.high_s, None, labels, product, None, hourly_cost)
        reporter.note(estimate_line(dry, found))
        ran = verify(session, plan, device, options, dict(labels))
        conclude(ran)  # interrupted: where the run is, exit 130
        run = store.get_run(str(ran.run_id))
    _conclude_verify(run, options, fmt)


def _verify_guests(
    plan: QosPlan,
    options: VerifyOptions,
    runs_dir: str | None,
    labels: tuple[tuple[str, str], ...],
    db: str | None,
    fmt: str,
) -> None:
    """``qos verify --guests``: the tenants in their lab guests (and the host)."""
    with fio_session(db, runs_dir, console.ProgressReporter()) as session:
        ran = qos_guests.verify(session, plan, options, dict(labels))
        conclude(ran)
        run = session.store.get_run(str(ran.run_id))
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
