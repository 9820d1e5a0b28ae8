"""``volbench run limits``: the experiment that finds what limits a volume."""

from __future__ import annotations

import click

from volbench.cli.options import DURATION, POSITIVE_DURATION
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.plans import limits


@click.command("limits")
@click.option(
    "--budget",
    type=POSITIVE_DURATION,
    default="10m",
    show_default=True,
    help="At most this long in all: tests that would not fit are not run.",
)
@click.option(
    "--runtime",
    type=POSITIVE_DURATION,
    default=None,
    help="Per test.  [default: from the budget, 2-10 s]",
)
@click.option("--ramp-time", type=DURATION, default="1s", show_default=True, help="Per test.")
@target_options
def command(budget: float, runtime: float | None, ramp_time: float, choice: TargetChoice) -> None:
    """What limits this volume: IOPS and MB/s caps per direction or shared, an I/O unit,
    the latency floor, a burst and how fast its credits come back; from tests designed
    to tell them apart."""
    options = limits.LimitsOptions(
        budget_s=budget,
        runtime_s=runtime or limits.per_test_runtime(budget),
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        ioengine=choice.ioengine,
    )
    run_plan(choice, limits.plan(options))
