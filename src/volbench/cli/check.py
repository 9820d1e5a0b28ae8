"""``volbench check RUN``: a stored run against what the vendor promised."""

from __future__ import annotations

import click

from volbench.cli import console
from volbench.cli.options import POSITIVE_SIZE, db_option, format_option
from volbench.cli.spec import (
    AMOUNT,
    DATE,
    catalogue_option,
    provisioned_options,
    provisioned_values,
)
from volbench.errors import CheckFailed
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.specs import catalogue
from volbench.store.repository import Store


@click.command("check")
@click.argument("run_ref", metavar="RUN")
@click.option("--product", default=None, help="Catalogue product (default: the run's label).")
@click.option("--size", type=AMOUNT, default=None, help="Size in the product's unit (GiB/GB).")
@click.option("--as-of", type=DATE, default=None, help="Promise valid at this date.")
@provisioned_options
@click.option("--instance-limit-iops", type=AMOUNT, default=None, help="Instance-side IOPS cap.")
@click.option("--instance-limit-mbps", type=AMOUNT, default=None, help="Instance-side MB/s cap.")
@click.option(
    "--instance",
    default=None,
    help="VM type whose caps apply (see `volbench spec instances`), e.g. m5.large.",
)
@click.option(
    "--count-unit",
    type=POSITIVE_SIZE,
    default=None,
    help="Count I/O in units of this size instead of the vendor's (e.g. 16k: an older "
    "AWS wording, 64 KiB = 4 I/Os).",
)
@catalogue_option
@db_option
@format_option
def command(
    run_ref: str,
    product: str | None,
    size: float | None,
    as_of: str | None,
    provisioned_iops: float | None,
    provisioned_mbps: float | None,
    extra_performance: float | None,
    instance_limit_iops: float | None,
    instance_limit_mbps: float | None,
    instance: str | None,
    count_unit: int | None,
    catalogue_files: tuple[str, ...],
    db: str | None,
    fmt: str,
) -> None:
    """Measured vs promised for each test of RUN (exit 1 if any is below)."""
    request = CheckRequest(
        product=product,
        size=size,
        as_of=as_of,
        provisioned=provisioned_values(provisioned_iops, provisioned_mbps, extra_performance),
        instance_iops=instance_limit_iops,
        instance_mb_s=instance_limit_mbps,
        instance=instance,
        count_unit_bytes=count_unit,
    )
    with Store.open(db, create=False) as store:
        sheet = check_sheet(store.get_run(run_ref), catalogue.load(catalogue_files), request)
    console.show(sheet, fmt)
    if sheet.flagged_rows:
        raise CheckFailed(f"{len(sheet.flagged_rows)} measured figure(s) below the promise")
