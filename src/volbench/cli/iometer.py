"""``volbench run iometer``: IOMeter-style access specs with 1..N workers (the Azure
VM disk post)."""

from __future__ import annotations

from pathlib import Path

import click

from volbench.cli.options import DURATION, JOB_COUNTS, POSITIVE_DURATION
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.fio.bounds import MAX_IODEPTH
from volbench.plans import iometer


@click.command("iometer")
@click.option(
    "--spec",
    "specs",
    multiple=True,
    default=("8k-random-read",),
    show_default=True,
    help="Access spec name (repeat for several): "
    + ", ".join(s.name for s in iometer.BUILTIN)
    + ", or one from --spec-file.",
)
@click.option(
    "--spec-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="TOML file of [[spec]] tables: name, transfer, read_pct, random_pct, align.",
)
@click.option(
    "--workers",
    type=JOB_COUNTS,
    default="1..4",
    show_default=True,
    help="Worker counts: 1..4 (linear), 1-16 (doubling) or 1,2,4.",
)
@click.option(
    "--outstanding",
    type=click.IntRange(1, MAX_IODEPTH),
    default=1,
    show_default=True,
    help="Outstanding I/Os per worker (fio iodepth).",
)
@click.option(
    "--runtime",
    type=POSITIVE_DURATION,
    default="30s",
    show_default=True,
    help="Per spec and worker count.",
)
@click.option("--ramp-time", type=DURATION, default="2s", show_default=True)
@target_options
def command(
    specs: tuple[str, ...],
    spec_file: str | None,
    workers: tuple[int, ...],
    outstanding: int,
    runtime: float,
    ramp_time: float,
    choice: TargetChoice,
) -> None:
    """Run access specs with 1..N workers: IOPS, MB/s, average and max response time."""
    extra = iometer.load_specs(Path(spec_file)) if spec_file else ()
    options = iometer.IometerOptions(
        specs=iometer.choose(specs, extra),
        workers=workers,
        outstanding=outstanding,
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        ioengine=choice.ioengine,
    )
    run_plan(choice, iometer.plan(options))
