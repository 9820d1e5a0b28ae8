"""``volbench spec ...`` and ``volbench cost``: the vendor catalogue on the command line.

Every command reads the built-in catalogue and the user's own products
(``--catalogue FILE``, ``VOLBENCH_CATALOGUE``, ``~/.config/volbench/catalogue.yaml``
and ``catalogue.d/*.yaml``: :mod:`volbench.specs.user_catalogue`).
"""

from __future__ import annotations

import datetime
import json
from importlib import resources
from pathlib import Path
from typing import Any

import click

from volbench.cli import console
from volbench.cli.options import OUTPUT_FILE, Converted, format_option, parse_number
from volbench.errors import CheckFailed, UsageError
from volbench.report.cost_sheets import cost_sheet
from volbench.report.formats import check_output_name, render_document
from volbench.report.instance_sheets import instances_sheet
from volbench.report.sheet import Sheet
from volbench.report.spec_charts import curve_document
from volbench.report.spec_sheets import (
    curve_sheet,
    expectation_sheet,
    product_sheet,
    products_sheet,
)
from volbench.specs import catalogue, provenance, vendors
from volbench.specs.expectation import (
    OPTION_NAMES,
    check_limits,
    curve_sizes,
    expect,
    needed_variables,
)
from volbench.specs.price import HOURS_PER_MONTH, cost
from volbench.units import shown


def parse_date(text: str) -> str:
    """An ISO date (YYYY-MM-DD), returned as written."""
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise UsageError(f"invalid date {shown(text)}: use YYYY-MM-DD, e.g. 2016-12-31") from None


MAX_AMOUNT = 1e12
"""The largest size, IOPS, MB/s, hours or months taken: far above any volume, and
small enough that a price x size x period stays a finite number."""


def parse_amount(text: str) -> float:
    """A positive number up to :data:`MAX_AMOUNT` (a size in GiB/GB, IOPS, MB/s, a
    period); ``nan``, ``inf`` and ``1e400`` are refused."""
    value = parse_number(text, 0.0, MAX_AMOUNT)
    if not value > 0:
        raise UsageError(f"invalid number {shown(text)}: it must be positive")
    return value


DATE = Converted("date", parse_date)
AMOUNT = Converted("number", parse_amount)


def provisioned_options(function: Any) -> Any:
    """``--provisioned-iops`` / ``--provisioned-mbps`` for provisioned products, and
    ``--extra-performance`` (Tencent Enhanced/ulTra SSD, catalogue src T1, T4)."""
    function = click.option(
        "--extra-performance",
        type=AMOUNT,
        default=None,
        help="Extra performance bought (Tencent CLOUD_HSSD/CLOUD_TSSD).",
    )(function)
    function = click.option(
        "--provisioned-mbps", type=AMOUNT, default=None, help="Provisioned MB/s (gp3)."
    )(function)
    return click.option(
        "--provisioned-iops", type=AMOUNT, default=None, help="Provisioned IOPS (io1, gp3)."
    )(function)


def catalogue_option(function: Any) -> Any:
    """``--catalogue FILE`` (repeatable): the user's own products, in the
    built-in schema (CATALOGUE.md); also ``VOLBENCH_CATALOGUE`` and the config folder."""
    return click.option(
        "--catalogue",
        "catalogue_files",
        multiple=True,
        metavar="FILE",
        help="A YAML file of your own products (also VOLBENCH_CATALOGUE and"
        " ~/.config/volbench/catalogue.d/*.yaml).",
    )(function)


def provisioned_values(
    iops: float | None, mbps: float | None, extra: float | None = None
) -> dict[str, float]:
    values = {"provisioned_iops": iops, "provisioned_mb_s": mbps, "extra_performance": extra}
    return {k: v for k, v in values.items() if v is not None}


@click.group("spec")
def command() -> None:
    """The vendor catalogue: promised IOPS, throughput, latency and prices."""


@command.command("list")
@click.option(
    "--vendor",
    default=None,
    help="Only this vendor: id prefix, part of its name or a common name (aliyun, qcloud, gcp).",
)
@catalogue_option
@format_option
def spec_list(vendor: str | None, catalogue_files: tuple[str, ...], fmt: str) -> None:
    """List the catalogue's products, with where each comes from."""
    cat = catalogue.load(catalogue_files)
    products = cat.of_vendor(vendor) if vendor else list(cat.products)
    if not products:
        known = vendors.known([p.vendor for p in cat.products])
        raise UsageError(f"no vendor matches {vendor!r}: known are {known}")
    console.show(products_sheet(products), fmt)


@command.command("show")
@click.argument("product")
@catalogue_option
@format_option
def spec_show(product: str, catalogue_files: tuple[str, ...], fmt: str) -> None:
    """Show one product: every dated formula, limit, price, and where it comes from."""
    cat = catalogue.load(catalogue_files)
    console.show(product_sheet(cat.find(product), cat.sources), fmt)


@command.command("expect")
@click.argument("product")
@click.option("--size", type=AMOUNT, required=True, help="Size in the product's unit (GiB/GB).")
@click.option(
    "--as-of", type=DATE, default=None, help="Figures in force at this date (YYYY-MM-DD)."
)
@provisioned_options
@catalogue_option
@format_option
def spec_expect(
    product: str,
    size: float,
    as_of: str | None,
    provisioned_iops: float | None,
    provisioned_mbps: float | None,
    extra_performance: float | None,
    catalogue_files: tuple[str, ...],
    fmt: str,
) -> None:
    """Expected IOPS, throughput, burst, latency and price of PRODUCT at --size
    (values outside the vendor's provisioning limits at the date are refused)."""
    found = catalogue.load(catalogue_files).find(product)
    values = provisioned_values(provisioned_iops, provisioned_mbps, extra_performance)
    console.show(expectation_sheet(expect(found, size, as_of, values)), fmt)


def _curve(
    products: tuple[str, ...],
    max_size: float,
    points: int,
    as_of: str | None,
    values: dict[str, float],
    catalogue_files: tuple[str, ...] = (),
) -> Sheet:
    cat = catalogue.load(catalogue_files)
    expectations = [
        expect(product, size, as_of, values)
        for product in (cat.find(name) for name in products)
        for size in curve_sizes(product, max_size, points, as_of)
    ]
    return curve_sheet(expectations)


def curve_options(function: Any) -> Any:
    for option in reversed(
        (
            click.argument("products", nargs=-1, required=True),
            click.option(
                "--max-size", type=AMOUNT, required=True, help="Largest size (product's unit)."
            ),
            click.option("--points", type=click.IntRange(2, 1000), default=17, show_default=True),
            click.option("--as-of", type=DATE, default=None, help="Formulas valid at this date."),
            provisioned_options,
            catalogue_option,
        )
    ):
        function = option(function)
    return function


@command.command("curve")
@curve_options
@format_option
def spec_curve(
    products: tuple[str, ...],
    max_size: float,
    points: int,
    as_of: str | None,
    provisioned_iops: float | None,
    provisioned_mbps: float | None,
    extra_performance: float | None,
    catalogue_files: tuple[str, ...],
    fmt: str,
) -> None:
    """Expected IOPS and MB/s against size for PRODUCT... (the 2016 Aliyun/Tencent chart's data)."""
    sheet = _curve(
        products,
        max_size,
        points,
        as_of,
        provisioned_values(provisioned_iops, provisioned_mbps, extra_performance),
        catalogue_files,
    )
    console.show(sheet, fmt)


@command.command("plot")
@curve_options
@click.option(
    "-o", "--output", type=OUTPUT_FILE, required=True, help="FILE.html (interactive) or FILE.pdf."
)
def spec_plot(
    products: tuple[str, ...],
    max_size: float,
    points: int,
    as_of: str | None,
    provisioned_iops: float | None,
    provisioned_mbps: float | None,
    extra_performance: float | None,
    catalogue_files: tuple[str, ...],
    output: str,
) -> None:
    """Chart expected IOPS and MB/s against size for PRODUCT... (the 2016 Aliyun/Tencent chart)."""
    check_output_name(output)
    sheet = _curve(
        products,
        max_size,
        points,
        as_of,
        provisioned_values(provisioned_iops, provisioned_mbps, extra_performance),
        catalogue_files,
    )
    document = curve_document(sheet, [str(p) for p in products])
    console.write_output(render_document(document, output), output)


@command.command("instances")
@click.option("--vendor", default=None, help="Only this vendor (substring, any case).")
@click.option("--product", default=None, help="Only the limits that apply to this product.")
@catalogue_option
@format_option
def spec_instances(
    vendor: str | None, product: str | None, catalogue_files: tuple[str, ...], fmt: str
) -> None:
    """List the instance-side limits (per VM type) that `check --instance` applies."""
    cat = catalogue.load(catalogue_files)
    limits = list(cat.instances)
    if vendor:
        limits = [row for row in limits if vendors.matches(vendor, row.vendor, row.vendor)]
    if product:
        found = cat.find(product)
        limits = [row for row in limits if row.applies_to(found.id, found.vendor)]
    if not limits:
        raise UsageError("no instance limits match: see `volbench spec instances`")
    console.show(instances_sheet(limits), fmt)


@command.command("verify")
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    default=Path("../shared/data/disk-catalogue.yaml"),
    show_default=True,
    help="The YAML the catalogue was built from.",
)
@click.option(
    "--posts",
    "posts",
    type=click.Path(path_type=Path),
    default=Path("../shared/seeds"),
    help="Folder of the source posts the catalogue also quotes (the project's copies).",
)
def spec_verify(source: Path, posts: Path) -> None:
    """Check every catalogue figure against the text it was quoted from (exit 1 if not)."""
    text = resources.files(catalogue.__package__).joinpath("catalogue.json").read_text()
    texts = provenance.source_texts(source, posts if posts.is_dir() else None)
    found = provenance.problems(json.loads(text), texts)
    for problem in found:
        console.stdout.print(problem, markup=False)
    if found:
        raise CheckFailed(f"{len(found)} catalogue figure(s) do not match their sources")
    console.stderr.print(f"every figure matches its quoted source ({len(texts)} texts read)")


@click.command("cost")
@click.argument("product")
@click.option("--size", type=AMOUNT, required=True, help="Size in the product's unit (GiB/GB).")
@click.option("--hours", type=AMOUNT, default=None, help="Period in hours.")
@click.option("--months", type=AMOUNT, default=None, help="Period in months (default 1).")
@click.option("--as-of", type=DATE, default=None, help="Prices and limits in force at this date.")
@provisioned_options
@catalogue_option
@format_option
def cost_command(
    product: str,
    size: float,
    hours: float | None,
    months: float | None,
    as_of: str | None,
    provisioned_iops: float | None,
    provisioned_mbps: float | None,
    extra_performance: float | None,
    catalogue_files: tuple[str, ...],
    fmt: str,
) -> None:
    """Cost of PRODUCT at --size over a period, per currency and billing model
    (provisioning outside the vendor's limits at the date is refused)."""
    if hours is not None and months is not None:
        raise UsageError("give --hours or --months, not both")
    period = hours / HOURS_PER_MONTH if hours is not None else (months or 1.0)
    found = catalogue.load(catalogue_files).find(product)
    values = provisioned_values(provisioned_iops, provisioned_mbps, extra_performance)
    check_limits(found, size, as_of, values)
    totals = cost(found, size, period, values, as_of)
    if not totals:
        when = f" known at {as_of}" if as_of else ""
        raise UsageError(
            f"the catalogue has no price{when} for {found.id} at {size:g} {found.size_unit}"
        )
    missing = sorted(needed_variables(found, as_of) - set(values))
    expectation = None if missing else expect(found, size, as_of, values)
    why = "give " + ", ".join(OPTION_NAMES[m] for m in missing) if missing else ""
    console.show(cost_sheet(found, size, period, totals, expectation, why), fmt)
