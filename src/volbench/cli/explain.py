"""``volbench explain RUN``: what limited each test of a stored run, with its evidence,
the marks of the figures that are not the volume's with theirs (every test's verdict
under ``validity`` in the JSON), and the bursts its tests' per-second series held (a
section of their own)."""

from __future__ import annotations

import dataclasses

import click

from volbench.cli import console
from volbench.cli.options import RUN, db_option, format_option
from volbench.plans import limits
from volbench.report.burst_sheets import burst_sheet, run_bursts
from volbench.report.limit_sheets import explain_sheet
from volbench.report.limits_card import limits_card
from volbench.report.validity_sheets import Verdicts, evidence_sheet
from volbench.store.repository import Store
from volbench.volume_limits import caps_of
from volbench.volume_writes import with_history


@click.command("explain")
@click.argument("run_ref", metavar="RUN", type=RUN)
@db_option
@format_option
def command(run_ref: str, db: str | None, fmt: str) -> None:
    """What limited each test of RUN: host CPU, queue, rate limiter, device, cache or
    stall, with the figures that show it (or what measurement would tell); each figure
    that is not the volume's (a cache answered, another process used the device, a mixed
    average, fio short of CPU) with its evidence and what to do; and each burst: its
    ceiling, how long, the I/Os above the baseline, the baseline after. A limits run
    shows its fitted limiter (the limits card) first."""
    with Store.open(db, create=False) as store:
        verdicts = Verdicts()
        run = with_history(store, store.get_run(run_ref), verdicts)
        caps = caps_of(store, run)
    sheet = explain_sheet(run, caps)
    marks = evidence_sheet(run, verdicts)
    sheet = dataclasses.replace(
        sheet, document={**sheet.document, "validity": marks.document["tests"]}
    )
    sheets = [limits_card(run)] if run.plan == limits.NAME else []  # its fitted limiter first
    sheets.append(sheet)
    sheets += [marks] if marks.rows else []
    bursts = burst_sheet(run, run_bursts(run))
    sheets += [bursts] if bursts is not None else []
    if len(sheets) == 1:
        console.show(sheet, fmt)
    else:
        document = {k: v for s in sheets for k, v in s.document.items()}
        console.show_report(sheets, {**document, **sheet.document}, fmt)
