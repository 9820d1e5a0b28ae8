"""``volbench check RUN``: a stored run against what the vendor promised; and the same
check at the end of a run that names its product (``run ... --product``, ``pts``,
``resume``: :func:`promise_options`, :func:`show_run`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from volbench.analysis.limit_evidence import KnownCap
from volbench.cli import console
from volbench.cli.options import POSITIVE_SIZE, RUN, db_option, format_option
from volbench.cli.spec import (
    AMOUNT,
    DATE,
    catalogue_option,
    provisioned_options,
    provisioned_values,
)
from volbench.errors import CheckFailed, VolbenchError
from volbench.model import RunRecord, RunStatus
from volbench.report.check_sheets import CheckRequest, VerdictRow, check_sheet
from volbench.report.rows import rows_of
from volbench.report.sheet import Sheet
from volbench.report.validity_sheets import Verdicts, given, marked, strict_message
from volbench.specs import catalogue, run_promise
from volbench.store.repository import Store
from volbench.views import report_for
from volbench.volume_limits import caps_of
from volbench.volume_writes import with_history

F = TypeVar("F", bound=Callable[..., Any])


def promise_options(function: F) -> F:
    """``--product-size``, ``--provisioned-iops``/``-mbps``, ``--extra-performance``
    and ``--catalogue`` of the commands that run (``--product`` is
    :func:`volbench.cli.dry_run.cost_options`'): the command receives ``labels`` with
    them recorded (:func:`volbench.specs.run_promise.promise_labels`) and runs with
    the ``--catalogue`` files read wherever a product is (:func:`catalogue.using`)."""

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> Any:
        values = provisioned_values(
            kwargs.pop("provisioned_iops"),
            kwargs.pop("provisioned_mbps"),
            kwargs.pop("extra_performance"),
        )
        kwargs["labels"] = run_promise.promise_labels(
            kwargs["labels"], kwargs["product"], kwargs.pop("product_size"), values
        )
        with catalogue.using(kwargs.pop("catalogue_files")):
            return function(**kwargs)

    decorated: Any = catalogue_option(provisioned_options(wrapper))
    return click.option(  # type: ignore[no-any-return]
        "--product-size",
        type=AMOUNT,
        default=None,
        metavar="N",
        help="The volume's size in its product's unit (GiB/GB, as `check --size`; default:"
        " a block device's capacity); recorded as the size_gib label.",
    )(decorated)


def show_run(
    run: RunRecord,
    fmt: str,
    caps: Sequence[KnownCap] = (),
    strict: bool = False,
    verdicts: Verdicts | None = None,
) -> None:
    """``run``'s report, then, when its labels name a product, ``volbench check``'s sheet
    (the verdicts, then what limited each test; under ``check`` in the JSON). A
    completed run with a figure below the promise, or of a test fio reported an error
    in, is :class:`CheckFailed` (exit 1); a run that could not be compared says why in a
    note. ``caps``: the volume's known caps (:mod:`volbench.volume_limits`). ``strict``
    (``--strict``): a completed run with a test whose figure is not the volume's fails
    too (:func:`volbench.report.validity_sheets.marked`). ``verdicts``: the command's
    (:class:`~volbench.report.validity_sheets.Verdicts`)."""
    verdicts = given(verdicts)
    sheets, document = report_for(run, caps, verdicts)
    sheet = None
    if run.labels.get(run_promise.PRODUCT):
        try:
            sheet = check_sheet(run, catalogue.load(), CheckRequest(None, None), caps, verdicts)
        except VolbenchError as exc:
            console.stderr.print(
                f"not checked against {run.labels[run_promise.PRODUCT]}: {exc}",
                markup=False,
                highlight=False,
            )
    if sheet is not None:
        sheets, document = [*sheets, sheet], {**document, "check": sheet.document}
    console.show_report(sheets, document, fmt)
    if run.status is not RunStatus.COMPLETED:
        return
    failures = []
    if sheet is not None and not sheet.document["passed"]:
        failures.append(_failed(sheet))
    found = marked(run, verdicts) if strict else []
    if found:
        failures.append(strict_message(found))
    if failures:
        raise CheckFailed("; ".join(failures))


def _failed(sheet: Sheet) -> str:
    """Why a check fails: how many figures are below the promise, and how many are of
    tests fio reported an error in (verdict ``error``)."""
    verdicts = [r.verdict for r in rows_of(sheet.rows, VerdictRow)]
    parts = []
    if "below" in verdicts:
        parts.append(f"{verdicts.count('below')} measured figure(s) below the promise")
    if "error" in verdicts:
        parts.append(f"{verdicts.count('error')} figure(s) of a test fio reported an error in")
    return "; ".join(parts)


@click.command("check")
@click.argument("run_ref", metavar="RUN", type=RUN)
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
    """Measured vs promised for each test of RUN (exit 1 if any is below, or is of a
    test fio reported an error in). A figure that is not the volume's (a cache answered,
    another process, a mixed average, fio short of CPU) is not judged: exit 0 only when
    every judged figure meets the promise."""
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
        verdicts = Verdicts()
        run = with_history(store, store.get_run(run_ref), verdicts)
        caps = caps_of(store, run)
        sheet = check_sheet(run, catalogue.load(catalogue_files), request, caps, verdicts)
    console.show(sheet, fmt)
    if not sheet.document["passed"]:
        raise CheckFailed(_failed(sheet))
