"""HD Tune-style tests (the EC2/Azure disk article): ``run scan``, ``run filebench``,
``run firsttouch``."""

from __future__ import annotations

import click

from volbench.cli.options import BLOCK_SIZE, DURATION, POSITIVE_DURATION, SIZE
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.errors import UsageError
from volbench.model import TargetInfo
from volbench.plans import firsttouch as firsttouch_plan
from volbench.plans import hdtune
from volbench.plans.runs.execution import PlanSpec


@click.command("scan")
@click.option("--zones", type=click.IntRange(1, 100000), default=100, show_default=True)
@click.option(
    "--zone-time",
    type=POSITIVE_DURATION,
    default="500ms",
    show_default=True,
    help="Sequential read time per zone.",
)
@click.option("--block-size", type=BLOCK_SIZE, default="64k", show_default=True)
@click.option(
    "--access-time",
    "access_time",
    type=POSITIVE_DURATION,
    default="3s",
    show_default=True,
    help="How long to sample random 4 KiB QD1 reads.",
)
@target_options
def scan(
    zones: int, zone_time: float, block_size: int, access_time: float, choice: TargetChoice
) -> None:
    """Transfer rate across the whole target, access time and burst rate (read-only)."""
    if block_size <= 0:
        raise UsageError("--block-size must be positive, e.g. 64k")

    def plan(target: TargetInfo) -> PlanSpec:
        return hdtune.scan_plan(
            hdtune.ScanOptions(
                capacity_bytes=choice.size or target.capacity_bytes,
                zones=zones,
                zone_seconds=zone_time,
                block_bytes=block_size,
                access_seconds=access_time,
                ioengine=choice.ioengine,
            )
        )

    run_plan(choice, plan, writes=False)


@click.command("filebench")
@click.option(
    "--runtime", type=POSITIVE_DURATION, default="10s", show_default=True, help="Per test."
)
@click.option("--ramp-time", type=DURATION, default="1s", show_default=True)
@target_options
def filebench(runtime: float, ramp_time: float, choice: TargetChoice) -> None:
    """The EC2/Azure article's file benchmark: sequential KB/s, 4 KiB random IOPS, QD1 and QD32."""
    options = hdtune.FilebenchOptions(
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        ioengine=choice.ioengine,
    )
    run_plan(choice, hdtune.filebench_plan(options))


@click.command("firsttouch")
@click.option(
    "--region",
    "region",
    type=SIZE,
    default=None,
    help="Bytes to read twice (default: the whole target or --size).",
)
@click.option(
    "--offset",
    type=SIZE,
    default="0",
    show_default=True,
    help="Where the never-read region starts.",
)
@click.option("--bs", type=BLOCK_SIZE, default="1m", show_default=True)
@target_options
def firsttouch(region: int | None, offset: int, bs: int, choice: TargetChoice) -> None:
    """Read a never-read region twice: the initialization penalty of the first touch."""
    if bs <= 0 or (region is not None and region <= 0):
        raise UsageError("--bs and --region must be positive, e.g. --region 1g --bs 1m")

    def plan(target: TargetInfo) -> PlanSpec:
        size = region or choice.size or target.capacity_bytes - offset
        if size <= 0 or offset + size > target.capacity_bytes:
            raise UsageError(
                f"--offset {offset} + --region {size} is beyond the target's "
                f"{target.capacity_bytes} bytes"
            )
        options = firsttouch_plan.FirstTouchOptions(
            region_bytes=size, offset_bytes=offset, bs_bytes=bs, ioengine=choice.ioengine
        )
        return firsttouch_plan.plan(options)

    run_plan(choice, plan, writes=False)
