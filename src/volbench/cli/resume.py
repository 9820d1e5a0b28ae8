"""``volbench resume``: continue any interrupted or killed run (PTS or another plan)."""

from __future__ import annotations

import click

from volbench.cli.options import RUN, db_option, runs_dir_option, stall_options, write_options
from volbench.cli.pts import PTS_FORMATS, PtsReporter, finish, purge_settings
from volbench.cli.spec import catalogue_option
from volbench.fio.stall import StallPolicy
from volbench.plans.resumption import resume
from volbench.plans.starting import open_session
from volbench.specs import catalogue
from volbench.targets.purge import METHODS


@click.command("resume")
@click.argument("run_ref", metavar="RUN", type=RUN)
@click.option("--purge", "purge_method", type=click.Choice(METHODS), default="auto")
@click.option("--ata-password", default=None, help="For --purge ata-secure-erase.")
@write_options
@runs_dir_option
@stall_options
@db_option
@click.option(
    "--same-volume",
    is_flag=True,
    help="The target was attached again or reconnected (a new device number or diskseq)"
    " and is the volume the run started on: record it as it is now and go on (same kind"
    " and size only; said in the run's note).",
)
@click.option("--format", "fmt", type=click.Choice(PTS_FORMATS), default="table")
@catalogue_option
def command(
    run_ref: str,
    purge_method: str,
    ata_password: str | None,
    destroy_data: tuple[str, ...],
    force: bool,
    runs_dir: str | None,
    stall_seconds: float,
    abort_on_stall: bool,
    db: str | None,
    same_volume: bool,
    fmt: str,
    catalogue_files: tuple[str, ...],
) -> None:
    """Continue an interrupted or killed run from its last committed work (RUN: id or
    latest): PTS after its last committed round, any other plan with the tests it has
    not finished (a test cut short runs again whole). A run whose labels name a product
    ends with the check against its promise (exit 1 when a figure is below it)."""
    purging = purge_settings(purge_method, ata_password, destroy_data)
    stall = StallPolicy(stall_seconds, abort_on_stall)
    with (
        catalogue.using(catalogue_files),
        open_session(db, runs_dir, PtsReporter(), stall=stall, create=False) as session,
    ):
        outcome = resume(session, run_ref, purging, destroy_data, force, same_volume)
        finish(session.store, outcome, fmt)
