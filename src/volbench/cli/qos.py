"""``volbench qos``: plan, apply, clear, verify, fit and predict per-tenant I/O (the
NetEase QoS test; ``verify`` in :mod:`volbench.cli.qos_verify`).

Thin commands: parse, call one service function, render a Sheet.
"""

from __future__ import annotations

import click

from volbench.analysis.qos import Rates, Tenant, check_tenants, fit_alpha, make_plan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import (
    check_run,
    fit_groups,
    measurement,
    verify_direction,
)
from volbench.cli import console
from volbench.cli.options import (
    JOB_PATH,
    POSITIVE_DURATION,
    RUN,
    db_option,
    format_option,
    runs_dir_option,
)
from volbench.cli.qos_options import GUESTS_HELP, MEASURED, RATES, TENANT, nominal_option
from volbench.cli.qos_verify import verify_command
from volbench.errors import UsageError
from volbench.lab import monitor
from volbench.plans.qos import capability as qos_capability
from volbench.plans.qos import guests as qos_guests
from volbench.plans.qos import setup as qos_setup
from volbench.plans.qos.plan_file import read_plan
from volbench.plans.starting import open_session
from volbench.report.qos_sheets import (
    applied_sheet,
    cleared_sheet,
    fit_sheet,
    plan_sheet,
    predict_sheet,
)
from volbench.store.repository import Store
from volbench.units import GiB

SIZE_GIB_HELP = "NAME:SIZE, size in GiB (40) or with a unit (512m); repeat per tenant."
CAPABILITY_HELP = (
    "Device capability C: iops=N,bps=SIZE (both directions) or per direction"
    " riops=N,wiops=N,rbps=SIZE,wbps=SIZE."
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
        with open_session(db, runs_dir, console.ProgressReporter()) as session:
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
@click.option(
    "--run", "run_ref", metavar="RUN", type=RUN, help="Take the measured IOPS from a verify run."
)
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
@click.argument("runs", nargs=-1, metavar="[RUN]...", type=RUN)
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
        for line in monitor.reclaim():  # a killed verify's guests: their own limits first
            console.stderr.print(line)
        set_in = qos_guests.apply_guests(plan)
        console.stderr.print(qos_guests.NO_WEIGHT)
        rows = [{"tenant": n, "file": f"lab://{n} tg0", "value": v.text()} for n, v in set_in]
        console.show(applied_sheet("QEMU throttle groups (QMP)", "-", rows), fmt)
        return
    if device is None:
        raise UsageError("give --device DEV (cgroups on it) or --guests (lab guests)")
    applied = qos_setup.apply_plan(plan, device, nominal=nominal_sizes)
    for line in applied.reclaimed:  # what a killed verify left
        console.stderr.print(line)
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


qos.add_command(verify_command)
