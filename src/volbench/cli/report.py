"""``volbench report`` (HTML/PDF) and ``volbench compare`` (table, or a report)."""

from __future__ import annotations

import click

from volbench.cli import console
from volbench.cli.options import OUTPUT_FILE, RUN, db_option, format_option
from volbench.cli.spec import catalogue_option
from volbench.model import RunRecord
from volbench.report.comparison import comparison_sheet
from volbench.report.formats import check_output_name, render_document
from volbench.report.validity_sheets import Verdicts
from volbench.specs import catalogue
from volbench.store.repository import Store
from volbench.views import report_document
from volbench.volume_limits import volume_caps
from volbench.volume_writes import with_history


def _runs(store: Store, refs: tuple[str, ...]) -> list[RunRecord]:
    return [store.get_run(ref) for ref in refs]


def _by(value: str | None) -> tuple[str, ...]:
    return tuple(k.strip() for k in value.split(",") if k.strip()) if value else ()


by_option = click.option(
    "--by",
    default=None,
    metavar="LABEL[,LABEL]",
    help="Group runs by these labels' values (e.g. vendor,size_gib); default: one run each.",
)


@click.command("report")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, type=RUN)
@click.option(
    "-o", "--output", type=OUTPUT_FILE, required=True, help="FILE.html (interactive) or FILE.pdf."
)
@by_option
@catalogue_option
@db_option
def report(
    run_refs: tuple[str, ...],
    output: str,
    by: str | None,
    catalogue_files: tuple[str, ...],
    db: str | None,
) -> None:
    """Write a report of one or more runs: charts and tables, as HTML or PDF (each run
    checked against the promise of the product its labels name)."""
    check_output_name(output)
    with Store.open(db, create=False) as store:
        verdicts = Verdicts()
        runs = [with_history(store, r, verdicts) for r in _runs(store, run_refs)]
        caps = volume_caps(store, runs)
    with catalogue.using(catalogue_files):
        document = report_document(runs, _by(by), caps, verdicts)
    console.write_output(render_document(document, output), output)


@click.command("compare")
@click.argument("run_refs", metavar="RUN RUN...", nargs=-1, required=True, type=RUN)
@by_option
@click.option(
    "-o",
    "--output",
    type=OUTPUT_FILE,
    default=None,
    help="Also write it as a report: FILE.html|.pdf.",
)
@catalogue_option
@db_option
@format_option
def compare(
    run_refs: tuple[str, ...],
    by: str | None,
    output: str | None,
    catalogue_files: tuple[str, ...],
    db: str | None,
    fmt: str,
) -> None:
    """Compare runs: each metric's values and % difference against the first."""
    if output:
        check_output_name(output)
    with Store.open(db, create=False) as store:
        verdicts = Verdicts()
        runs = [with_history(store, r, verdicts) for r in _runs(store, run_refs)]
        caps = volume_caps(store, runs)
    sheet = comparison_sheet(runs, _by(by))
    console.show(sheet, fmt)
    if output:
        with catalogue.using(catalogue_files):
            document = report_document(runs, _by(by), caps, verdicts)
        console.write_output(render_document(document, output), output)
