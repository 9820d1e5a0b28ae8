"""``volbench qos``: plan, apply, clear, verify, fit and predict per-tenant I/O (seed 004).

Thin commands: parse, call one service function, render a Sheet.
"""

from __future__ import annotations

import click

from volbench.analysis.qos import Tenant, fit_alpha, make_plan
from volbench.cli import console
from volbench.cli.options import format_option
from volbench.cli.qos_options import MEASURED, RATES, TENANT
from volbench.plans.qos_plan_file import plan_document
from volbench.report.qos_sheets import fit_sheet, plan_sheet, predict_sheet

SIZE_GIB_HELP = "NAME:SIZE, size in GiB (40) or with a unit (512m); repeat per tenant."
ALPHA = click.FloatRange(0.0, 1.0, max_open=True)


@click.group()
def qos() -> None:
    """Per-tenant I/O QoS: C' = (C - C0) x (1 - alpha) x V'/Va (seed 004)."""


@qos.command("plan")
@click.option(
    "--capability", type=RATES, required=True, help="Device capability C: iops=N,bps=SIZE."
)
@click.option(
    "--host-reserve", type=RATES, default="iops=0", help="Host reserve C0: iops=N,bps=SIZE."
)
@click.option("--tenant", "tenants", type=TENANT, multiple=True, required=True, help=SIZE_GIB_HELP)
@click.option("--alpha", type=ALPHA, default=0.0, show_default=True, help="Virtualisation loss.")
@click.option("--volume-size", type=click.FloatRange(0), default=0.0, help="Device size V, GiB.")
@format_option
def plan(
    capability: tuple[float, float],
    host_reserve: tuple[float, float],
    tenants: tuple[Tenant, ...],
    alpha: float,
    volume_size: float,
    fmt: str,
) -> None:
    """Per-tenant IOPS and bandwidth limits, shares and weights, proportional to size."""
    result = make_plan(capability, host_reserve, tenants, alpha, volume_size)
    console.show(plan_sheet(result, plan_document(result)), fmt)


@qos.command("predict")
@click.option(
    "--capability", type=RATES, required=True, help="Device capability C: iops=N,bps=SIZE."
)
@click.option("--host-used", type=RATES, default="iops=0", help="What the host uses, C0.")
@click.option("--alpha", type=ALPHA, required=True, help="Loss factor (from `qos fit`).")
@click.option("--tenant", "tenants", type=TENANT, multiple=True, required=True, help=SIZE_GIB_HELP)
@click.option(
    "--measured", type=MEASURED, multiple=True, help="NAME=IOPS measured: adds the error."
)
@format_option
def predict(
    capability: tuple[float, float],
    host_used: tuple[float, float],
    alpha: float,
    tenants: tuple[Tenant, ...],
    measured: tuple[tuple[str, float], ...],
    fmt: str,
) -> None:
    """Predicted C' of each tenant for a new configuration (and its error when measured)."""
    result = make_plan(capability, host_used, tenants, alpha)
    unknown = sorted({n for n, _ in measured} - {t.name for t in tenants})
    if unknown:
        raise click.BadParameter(f"no tenant named {unknown[0]}", param_hint="--measured")
    console.show(predict_sheet(result, dict(measured)), fmt)


@qos.command("fit")
@click.option(
    "--capability", type=click.FloatRange(0, min_open=True), required=True, help="C, IOPS."
)
@click.option("--host-used", type=click.FloatRange(0), default=0.0, help="C0, IOPS.")
@click.option(
    "--measured", type=MEASURED, multiple=True, required=True, help="NAME=IOPS of every tenant."
)
@format_option
def fit(
    capability: float, host_used: float, measured: tuple[tuple[str, float], ...], fmt: str
) -> None:
    """Estimate alpha from one concurrent measurement of all running tenants."""
    achieved = [value for _, value in measured]
    alpha = fit_alpha(capability, host_used, achieved)
    row = {
        "group": ",".join(name for name, _ in measured),
        "capability": capability,
        "host_used": host_used,
        "tenants": len(achieved),
        "achieved_total": sum(achieved),
        "achieved": dict(measured),
        "alpha": alpha,
    }
    console.show(fit_sheet([row]), fmt)
