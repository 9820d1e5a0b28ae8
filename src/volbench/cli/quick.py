"""``volbench run quick``: the quick profile, or CrystalDiskMark's layout."""

from __future__ import annotations

import click

from volbench.cli.options import DURATION, POSITIVE_DURATION
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.errors import UsageError
from volbench.fio.bounds import MAX_IODEPTH
from volbench.plans import quick


@click.command("quick")
@click.option(
    "--runtime", type=POSITIVE_DURATION, default="30s", show_default=True, help="Per test."
)
@click.option("--ramp-time", type=DURATION, default="2s", show_default=True, help="Per test.")
@click.option(
    "--iodepth",
    type=click.IntRange(1, MAX_IODEPTH),
    default=None,
    help="Deep tests.  [default: 64]",
)
@click.option(
    "--numjobs", type=click.IntRange(1, 4096), default=None, help="Deep tests.  [default: 1]"
)
@click.option(
    "--profile",
    type=click.Choice(sorted(quick.PROFILES)),
    default="default",
    show_default=True,
    help="default: the UCloud RSSD post's six tests; diskmark: CrystalDiskMark's layout"
    " (SEQ 1 MiB Q8T1 and Q1T1, RND 4 KiB Q32T1 and Q1T1, read and write).",
)
@target_options
def run_quick(
    runtime: float,
    ramp_time: float,
    iodepth: int | None,
    numjobs: int | None,
    profile: str,
    choice: TargetChoice,
) -> None:
    """The quick profile (UCloud RSSD post): 4k random IOPS, 16k throughput, 4k QD1
    latency; or --profile diskmark."""
    if profile == "diskmark" and (iodepth is not None or numjobs is not None):
        raise UsageError("--profile diskmark sets its own queue depths and threads")
    options = quick.QuickOptions(
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        iodepth=iodepth or 64,
        numjobs=numjobs or 1,
        ioengine=choice.ioengine,
        profile=profile,
    )
    run_plan(choice, quick.plan(options))
