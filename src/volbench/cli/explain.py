"""``volbench explain RUN``: what limited each test of a stored run, with its evidence."""

from __future__ import annotations

import click

from volbench.cli import console
from volbench.cli.options import db_option, format_option
from volbench.report.limit_sheets import explain_sheet
from volbench.store.repository import Store


@click.command("explain")
@click.argument("run_ref", metavar="RUN")
@db_option
@format_option
def command(run_ref: str, db: str | None, fmt: str) -> None:
    """What limited each test of RUN: host CPU, queue, rate limiter, device, cache or
    stall, with the figures that show it (or what measurement would tell)."""
    with Store.open(db, create=False) as store:
        sheet = explain_sheet(store.get_run(run_ref))
    console.show(sheet, fmt)
