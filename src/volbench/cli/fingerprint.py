"""``volbench fingerprint RUN...``: is the volume behind these runs rate-limited?"""

from __future__ import annotations

import click

from volbench.cli import console
from volbench.cli.options import RUN, db_option, format_option
from volbench.report.throttle_sheets import fingerprint_sheet
from volbench.store.repository import Store


@click.command("fingerprint")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, type=RUN)
@db_option
@format_option
def command(run_refs: tuple[str, ...], db: str | None, fmt: str) -> None:
    """Detect a rate limiter from runs of one workload at several queue depths."""
    with Store.open(db, create=False) as store:
        runs = [store.get_run(ref) for ref in run_refs]
    console.show(fingerprint_sheet(runs), fmt)
